// Package attention builds the attention pieces of compbench's Transformers:
// the decoder self-attention masks (causal, and the three decompositional
// masks of Shi et al. 2022, §4.2), padding masks, T5-style relative-position
// buckets (Raffel et al. 2020, as Shi et al. use them, App. C), and the
// multi-head attention block of Vaswani et al. (2017, §3.2) on Gorgonia nodes,
// with an optional learned relative-position bias per bucket and head.
package attention
