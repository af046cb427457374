// Package data holds compbench's interchange format: JSONL records (one example
// a line), derivation trees, and safe output files. Every generator, split,
// trainer and evaluator reads and writes these records.
package data
