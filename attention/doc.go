// Package attention defines the attention masks and position buckets of
// compbench's Transformers, once for training graphs and incremental
// decoding alike: the decoder self-attention masks (causal, and the three
// decompositional masks of Shi et al. 2022, §4.2), padding masks, and
// T5-style relative-position buckets (Raffel et al. 2020, as Shi et al. use
// them, App. C). The multi-head attention itself is a graph op sequence in
// the model packages (ops.AttnScores, ops.AttentionSoftmax, ops.AttnValues).
package attention
