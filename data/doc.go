// Package data holds compbench's interchange format: JSONL records (one example
// a line), derivation trees, and safe output files. Every generator, split,
// trainer and evaluator reads and writes these records, and reads them
// through one reader (ReadRecords) that also takes the benchmarks' files as
// they are published: COGS's three-column TSV (Kim & Linzen 2020; the
// case becomes the record's Category) and, registered by data/scan, SCAN's
// text format (Lake & Baroni 2018).
package data
