// Package eval scores model predictions and analyses which test instances
// are hard: exact match with normalizers, RobustFill execution accuracy
// (Shi et al. §3), SCAN token accuracy, agreement rates between models and
// their random baseline (Bogin et al. §3, Table 2), ROC AUC of an easiness
// score against gold easiness (§5.1), Pearson correlation across splits
// (§5.2, Table 5), the first-error analysis (§5.1) and budgeted training-set
// selection (§6.2); and exact match by category, with COGS's lexical and
// structural groups of generalization cases (Kim & Linzen 2020, §3).
package eval
