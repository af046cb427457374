// Package lm scores text with a GPT-2 language model for Likelihood Splits
// (Godbole & Jia, "Benchmarking Long-tail Generalization with Likelihood
// Splits", §3.1-3.2 and appendix A.2): the GPT-2 byte-level BPE tokenizer,
// prompt templates, batched scoring where the score of an example is the
// total log-probability of its query tokens plus the end-of-text token given
// the prompt prefix, and k-fold fine-tuning so that no example is scored by a
// model trained on it.
package lm
