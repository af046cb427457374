// Package tasks builds the seven compositional-generalization tasks of Shi et
// al. (paper §2 and App. B) for the SCAN and RobustFill domains: which program
// shapes go to train, dev, test and finetune.
package tasks

import (
	"fmt"
	"math/rand/v2"

	"compbench/data"
)

// Task names one generalization task, as typed on the command line.
type Task string

// The tasks of Shi et al. §2, plus None (one distribution, 1-10 parts).
const (
	Length                    Task = "length"
	LengthHard                Task = "length-hard"
	LengthHardest             Task = "length-hardest"
	ComposeDifferentConcepts  Task = "compose-different-concepts"
	SwitchConceptOrder        Task = "switch-concept-order"
	ComposeNewOperation       Task = "compose-new-operation"
	AddOperationFunctionality Task = "add-operation-functionality"
	None                      Task = "none"
)

// All lists every task in the paper's order.
var All = []Task{Length, LengthHard, LengthHardest, ComposeDifferentConcepts,
	SwitchConceptOrder, ComposeNewOperation, AddOperationFunctionality, None}

// Parse checks a task name.
func Parse(s string) (Task, error) {
	for _, t := range All {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown task %q (want one of %v)", s, All)
}

// Dist is the distribution an example is drawn from.
type Dist int

const (
	// Train is the training distribution (train.jsonl and dev.jsonl).
	Train Dist = iota
	// Test is the test distribution (test.jsonl).
	Test
)

// FileSplit names an output file of "compbench gen" and the distribution of
// its i-th example: finetune alternates train and test distributions.
type FileSplit string

// The output files of "compbench gen".
const (
	FileTrain    FileSplit = "train"
	FileDev      FileSplit = "dev"
	FileTest     FileSplit = "test"
	FileFinetune FileSplit = "finetune"
)

// MaxExamples bounds the examples of one generated file: a hundred times
// Shi et al.'s 1.28M training examples, about 10 GB of SCAN. A count
// beyond it is a typing slip that would fill a disk over days.
const MaxExamples = 128_000_000

// DistOf returns the distribution of example i of file f.
func DistOf(f FileSplit, i int) Dist {
	switch f {
	case FileTest:
		return Test
	case FileFinetune:
		if i%2 == 1 {
			return Test
		}
	}
	return Train
}

// Sampler draws examples of one task in one domain. Sample returns a record
// without an ID (the caller numbers them). i is the index of the example
// among those drawn from distribution d so far, so a sampler can place exact
// fractions (every tenth train example, say) instead of probabilistic ones.
type Sampler interface {
	Sample(rng *rand.Rand, d Dist, i int) (data.Record, error)
}
