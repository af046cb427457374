package split

import (
	"fmt"
	"io"

	"compbench/provenance"
)

// Pick says what a grammar or nls job does with its candidate splits.
type Pick struct {
	List  bool // print every candidate to Out.Table
	Index int  // write this candidate to Out.Dir (unless List or All)
	All   bool // write every (valid) candidate to Out.Dir/K
}

// Out is where a grammar or nls job writes its splits.
type Out struct {
	Dir   string
	Force bool
	// Check refuses a split folder before the costly steps: the caller's
	// check that it is free and holds no input. Its error comes back as is.
	Check func(dir string) error
	// Provenance records the inputs in each split.json.
	Provenance func() (*provenance.Record, error)
	// Table receives the list of candidates (Pick.List) and the rows of
	// the splits written (a grammar job's Pick.All).
	Table io.Writer
}

// Written is what a grammar or nls job wrote.
type Written struct {
	Result     *Result // the split written for Pick.Index
	Splits     int     // folders written for Pick.All
	Candidates int     // candidates considered
}

// IndexError is a Pick.Index that names no candidate: the caller's
// mistake, not the data's.
type IndexError struct{ Err error }

func (e *IndexError) Error() string { return e.Err.Error() }
func (e *IndexError) Unwrap() error { return e.Err }

// SizeError refuses a grammar job's Pick.All whose folders would take more
// than GrammarJob.MaxBytes on disk: every folder copies its records.
type SizeError struct {
	Splits int     // valid candidates
	Total  float64 // estimated bytes of all their folders
	Max    int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%d splits would take about %.0f bytes, over the limit of %d", e.Splits, e.Total, e.Max)
}

// provenance runs Out.Provenance, when set.
func (o *Out) provenance() (*provenance.Record, error) {
	if o.Provenance == nil {
		return nil, nil
	}
	return o.Provenance()
}

// check runs Out.Check on a folder, when set.
func (o *Out) check(dir string) error {
	if o.Check == nil {
		return nil
	}
	return o.Check(dir)
}
