package main

import (
	"os"

	"compbench/provenance"
)

// provenanceOf records this process's build and command line and the
// given role/path input files (empty paths skipped), for split.json and
// run folders.
func provenanceOf(inputs ...[2]string) (*provenance.Record, error) {
	r, err := provenance.New(os.Args, inputs...)
	if err != nil {
		return nil, err
	}
	return &r, nil
}
