// Package safetensors reads and writes the safetensors checkpoint format
// (the format Hugging Face uses for model.safetensors): an 8-byte
// little-endian header length N, N bytes of JSON header, then the tensor
// bytes. The header maps each tensor name to {"dtype","shape","data_offsets"}
// (offsets relative to the start of the data) and may hold an
// "__metadata__" object of string values.
//
// The reader is strict: a malformed file is an error, never a panic or a
// silently wrong tensor. The writer produces files that the reference
// implementation accepts: header padded with spaces to a multiple of 8 bytes,
// tensors stored in name order, contiguous and without gaps.
package safetensors
