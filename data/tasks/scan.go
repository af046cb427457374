package tasks

import (
	"fmt"
	"math/rand/v2"

	"compbench/data"
	"compbench/data/scan"
)

// maxTries bounds rejection sampling. Every SCAN constraint holds with
// probability at least 1/8 per draw, so reaching it means a bug, which is
// reported instead of looping forever.
const maxTries = 10000

// maxSCANParts is the largest part count any task asks for.
const maxSCANParts = 10

// NewSCAN returns the sampler of a task in the extended SCAN domain (Shi et
// al. §2, App. B, and App. A for the command distribution). A command's
// parts are its conjunction-separated phrases P.
//
//   - none: 1-10 parts.
//   - length: train 1-6 parts, test 7-10.
//   - length-hard: train 6, test 1-10 except 6.
//   - length-hardest: train 1, test 2-6.
//   - compose-different-concepts: 2-6 parts, all with a direction; train
//     uses one direction (drawn per example) throughout, test must use both.
//   - switch-concept-order: 2-6 parts, all with a direction; train has the
//     first floor(n/2) program parts left and the rest right, test the
//     reverse.
//   - compose-new-operation: 1-6 parts; train examples 0, 10, 20, ... (exactly
//     10%) are the command "jump", the others contain no "jump"; test
//     commands contain "jump" and are not exactly "jump".
//   - add-operation-functionality: 1-6 parts; train never contains "around
//     right", test always does.
//
// The part count is drawn once per example and constraints that are not
// per-part are met by rejection at that count, as in the authors' generator.
func NewSCAN(task Task) (Sampler, error) {
	if _, err := Parse(string(task)); err != nil {
		return nil, err
	}
	s := &scanSampler{task: task}
	left := scan.PartSpec{Forms: scan.DirForms, Dirs: []scan.Dir{scan.Left}}
	right := scan.PartSpec{Forms: scan.DirForms, Dirs: []scan.Dir{scan.Right}}
	both := scan.PartSpec{Forms: scan.DirForms}
	for i := 0; i < maxSCANParts; i++ {
		s.left[i], s.right[i], s.both[i] = left, right, both
	}
	// Switch-concept-order: the first floor(n/2) parts in program (output)
	// order from one concept, the rest from the other. App. B speaks of the
	// program's parts; the authors' generator orders by command position
	// instead, which differs whenever an "after" joins the two halves. We
	// follow the paper, so record.Parts shows the concept order directly.
	for n := 2; n <= maxSCANParts; n++ {
		for k := 0; k < n; k++ {
			if k < n/2 {
				s.leftRight[n] = append(s.leftRight[n], left)
				s.rightLeft[n] = append(s.rightLeft[n], right)
			} else {
				s.leftRight[n] = append(s.leftRight[n], right)
				s.rightLeft[n] = append(s.rightLeft[n], left)
			}
		}
	}
	return s, nil
}

// scanSampler draws SCAN commands for one task. Its spec arrays are built
// once so that sampling allocates only the command itself.
type scanSampler struct {
	task                 Task
	free                 [maxSCANParts]scan.PartSpec // unconstrained parts
	left, right, both    [maxSCANParts]scan.PartSpec
	leftRight, rightLeft [maxSCANParts + 1][]scan.PartSpec
}

// Sample draws example i of distribution d; see NewSCAN.
func (s *scanSampler) Sample(rng *rand.Rand, d Dist, i int) (data.Record, error) {
	c, err := s.command(rng, d, i)
	if err != nil {
		return data.Record{}, err
	}
	return c.Record(), nil
}

// between draws an integer uniformly from [lo, hi].
func between(rng *rand.Rand, lo, hi int) int { return lo + rng.IntN(hi-lo+1) }

// notSix are the test lengths of length-hard.
var notSix = []int{1, 2, 3, 4, 5, 7, 8, 9, 10}

func (s *scanSampler) command(rng *rand.Rand, d Dist, i int) (scan.Command, error) {
	if d != Train && d != Test {
		return scan.Command{}, fmt.Errorf("unknown distribution %d", d)
	}
	train := d == Train
	switch s.task {
	case None:
		return scan.Sample(rng, s.free[:between(rng, 1, 10)]), nil
	case Length:
		if train {
			return scan.Sample(rng, s.free[:between(rng, 1, 6)]), nil
		}
		return scan.Sample(rng, s.free[:between(rng, 7, 10)]), nil
	case LengthHard:
		if train {
			return scan.Sample(rng, s.free[:6]), nil
		}
		return scan.Sample(rng, s.free[:notSix[rng.IntN(len(notSix))]]), nil
	case LengthHardest:
		if train {
			return scan.Sample(rng, s.free[:1]), nil
		}
		return scan.Sample(rng, s.free[:between(rng, 2, 6)]), nil
	case ComposeDifferentConcepts:
		n := between(rng, 2, 6)
		if train {
			if rng.IntN(2) == 0 {
				return scan.Sample(rng, s.left[:n]), nil
			}
			return scan.Sample(rng, s.right[:n]), nil
		}
		return s.reject(rng, s.both[:n], "both left and right parts", func(c *scan.Command) bool {
			return c.HasDir(scan.Left) && c.HasDir(scan.Right)
		})
	case SwitchConceptOrder:
		n := between(rng, 2, 6)
		if train {
			return scan.Sample(rng, s.leftRight[n]), nil
		}
		return scan.Sample(rng, s.rightLeft[n]), nil
	case ComposeNewOperation:
		if train && i%10 == 0 {
			return scan.Command{Parts: []scan.Part{{Verb: scan.Jump, Form: scan.Bare, Times: 1}}}, nil
		}
		n := between(rng, 1, 6)
		if train {
			return s.reject(rng, s.free[:n], `no "jump"`, func(c *scan.Command) bool {
				return !c.HasVerb(scan.Jump)
			})
		}
		return s.reject(rng, s.free[:n], `"jump" but not exactly "jump"`, func(c *scan.Command) bool {
			return c.HasVerb(scan.Jump) && !c.IsBareJump()
		})
	case AddOperationFunctionality:
		n := between(rng, 1, 6)
		if train {
			return s.reject(rng, s.free[:n], `no "around right"`, func(c *scan.Command) bool {
				return !c.HasPhrase(scan.Around, scan.Right)
			})
		}
		return s.reject(rng, s.free[:n], `"around right"`, func(c *scan.Command) bool {
			return c.HasPhrase(scan.Around, scan.Right)
		})
	}
	return scan.Command{}, fmt.Errorf("scan: task %q is not implemented", s.task)
}

// reject draws commands until keep accepts one.
func (s *scanSampler) reject(rng *rand.Rand, specs []scan.PartSpec, what string, keep func(*scan.Command) bool) (scan.Command, error) {
	for try := 0; try < maxTries; try++ {
		c := scan.Sample(rng, specs)
		if keep(&c) {
			return c, nil
		}
	}
	return scan.Command{}, fmt.Errorf("scan %s: no command of %d parts with %s after %d tries", s.task, len(specs), what, maxTries)
}
