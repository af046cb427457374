package tasks

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/robustfill"
)

// -update may be declared by another test file of this package too; look it
// up before declaring it (a flag declared twice panics).
var _ = rfDeclareUpdate()

func rfDeclareUpdate() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
	return true
}

func rfUpdating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// rfDraw draws n records of distribution d, numbering i per distribution.
func rfDraw(t testing.TB, task Task, d Dist, seed uint64, n int) []data.Record {
	t.Helper()
	s, err := NewRobustFill(task)
	if err != nil {
		t.Fatal(err)
	}
	rng := data.SubRand(seed, fmt.Sprint("robustfill", d))
	recs := make([]data.Record, n)
	for i := range recs {
		if recs[i], err = s.Sample(rng, d, i); err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

// rfShape summarises a program for the constraint checks: one letter per
// part, 's' substring, 'm' modification, 'c' ConstStr, 'M' Compose of two
// modifications, 'S' Compose with a substring inside.
func rfShape(t *testing.T, rec *data.Record) string {
	t.Helper()
	p, err := robustfill.ParseTokens(rec.Output)
	if err != nil {
		t.Fatalf("output %q: %v", rec.Output, err)
	}
	q, err := robustfill.ParseJSON(rec.Program)
	if err != nil || !q.Equal(p) {
		t.Fatalf("program %s differs from output %q (%v)", rec.Program, rec.Output, err)
	}
	if len(rec.Parts) != len(p) || len(rec.Inputs) != 4 || len(rec.Outputs) != 4 {
		t.Fatalf("record shape: %d parts, %d inputs, %d outputs", len(rec.Parts), len(rec.Inputs), len(rec.Outputs))
	}
	var b strings.Builder
	for _, e := range p {
		switch {
		case e.Op.IsSubstring():
			b.WriteByte('s')
		case e.Op.IsModification():
			b.WriteByte('m')
		case e.Op == robustfill.ConstStr:
			b.WriteByte('c')
		case e.Arg.Op.IsSubstring():
			b.WriteByte('S')
		default:
			b.WriteByte('M')
		}
	}
	return b.String()
}

func rfIsSub(c byte) bool     { return c == 's' }
func rfIsNonSub(c byte) bool  { return c == 'm' || c == 'c' }
func rfIsCompose(c byte) bool { return c == 'M' || c == 'S' }
func rfAll(s string, f func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !f(s[i]) {
			return false
		}
	}
	return true
}
func rfAny(s string, f func(byte) bool) bool { return !rfAll(s, func(c byte) bool { return !f(c) }) }

// rfLengths is each task's allowed lengths, train then test.
var rfLengths = map[Task][2][]int{
	Length:                    {{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10}},
	LengthHard:                {{6}, {1, 2, 3, 4, 5, 7, 8, 9, 10}},
	LengthHardest:             {{1}, {2, 3, 4, 5, 6}},
	ComposeDifferentConcepts:  {{2, 3, 4, 5, 6}, {2, 3, 4, 5, 6}},
	SwitchConceptOrder:        {{2, 3, 4, 5, 6}, {2, 3, 4, 5, 6}},
	ComposeNewOperation:       {{1, 2, 3, 4, 5, 6}, {2, 3, 4, 5, 6}},
	AddOperationFunctionality: {{1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}},
	None:                      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
}

// rfCheck returns why a record of example i breaks its task's constraints,
// or "".
func rfCheck(task Task, d Dist, i int, shape string) string {
	train := d == Train
	n := len(shape)
	switch task {
	case ComposeDifferentConcepts:
		if rfAny(shape, rfIsCompose) {
			return "has Compose"
		}
		if train && !rfAll(shape, rfIsSub) && !rfAll(shape, rfIsNonSub) {
			return "train mixes concepts"
		}
		if !train && (!rfAny(shape, rfIsSub) || !rfAny(shape, rfIsNonSub)) {
			return "test does not mix concepts"
		}
	case SwitchConceptOrder:
		first, second := rfIsSub, rfIsNonSub
		if !train {
			first, second = second, first
		}
		if !rfAll(shape[:n/2], first) || !rfAll(shape[n/2:], second) {
			return "concept order"
		}
	case ComposeNewOperation:
		switch {
		case train && i%4 == 0 && (n != 1 || !rfIsCompose(shape[0])):
			return "every fourth train example must be one Compose"
		case train && i%4 != 0 && (n < 2 || rfAny(shape, rfIsCompose)):
			return "other train examples: 2-6 parts without Compose"
		case !train && !rfAny(shape, rfIsCompose):
			return "test has no Compose"
		}
	case AddOperationFunctionality:
		has := strings.Contains(shape, "S")
		if train && has {
			return "train has Compose(., substring)"
		}
		if !train && !has {
			return "test lacks Compose(., substring)"
		}
	}
	return ""
}

func TestRobustFillTaskConstraints(t *testing.T) {
	const n = 1200
	for _, task := range All {
		for _, d := range []Dist{Train, Test} {
			t.Run(fmt.Sprintf("%s/%v", task, map[Dist]string{Train: "train", Test: "test"}[d]), func(t *testing.T) {
				want := rfLengths[task][d]
				seenLen := map[int]int{}
				for i, rec := range rfDraw(t, task, d, 11, n) {
					shape := rfShape(t, &rec)
					seenLen[len(shape)]++
					if why := rfCheck(task, d, i, shape); why != "" {
						t.Fatalf("example %d (%q): %s", i, rec.Output, why)
					}
				}
				for l := range seenLen {
					if !rfContains(want, l) {
						t.Errorf("length %d not allowed (want %v)", l, want)
					}
				}
				for _, l := range want {
					if seenLen[l] == 0 {
						t.Errorf("length %d never drawn", l)
					}
				}
			})
		}
	}
}

func rfContains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// Probabilistic choices come out near their rates: compose-different-
// concepts picks each training concept half the time, and test programs of
// add-operation-functionality and compose-new-operation use all of PoolAll.
func TestRobustFillTaskProportions(t *testing.T) {
	recs := rfDraw(t, ComposeDifferentConcepts, Train, 5, 2000)
	sub := 0
	for _, rec := range recs {
		if rfAll(rfShape(t, &rec), rfIsSub) {
			sub++
		}
	}
	if sub < 850 || sub > 1150 {
		t.Errorf("substring-only training programs: %d of 2000, want about 1000", sub)
	}
	recs = rfDraw(t, ComposeNewOperation, Train, 5, 1000)
	single := 0
	for _, rec := range recs {
		if len(rec.Parts) == 1 {
			single++
		}
	}
	if single != 250 {
		t.Errorf("single-Compose training programs: %d of 1000, want exactly 250", single)
	}
}

func TestNewRobustFillUnknownTask(t *testing.T) {
	if _, err := NewRobustFill("lenght"); err == nil || !strings.Contains(err.Error(), `unknown task "lenght"`) {
		t.Errorf("error %v", err)
	}
}

func TestRobustFillDeterministic(t *testing.T) {
	enc := func() []byte {
		var b bytes.Buffer
		e := data.NewEncoder(&b)
		for _, rec := range rfDraw(t, None, Train, 9, 100) {
			if err := e.Encode(&rec); err != nil {
				t.Fatal(err)
			}
		}
		return b.Bytes()
	}
	if !bytes.Equal(enc(), enc()) {
		t.Error("same seed, different bytes")
	}
}

func TestRobustFillGolden(t *testing.T) {
	for _, task := range All {
		t.Run(string(task), func(t *testing.T) {
			var b bytes.Buffer
			enc := data.NewEncoder(&b)
			for _, d := range []Dist{Train, Test} {
				for i, rec := range rfDraw(t, task, d, 1, 3) {
					rec.ID = fmt.Sprintf("%v-%d", map[Dist]string{Train: "train", Test: "test"}[d], i)
					if err := enc.Encode(&rec); err != nil {
						t.Fatal(err)
					}
				}
			}
			path := filepath.Join("testdata", "robustfill_"+string(task)+".jsonl")
			if rfUpdating() {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("output differs from %s (run go test -update if the change is intended):\n%s", path, b.Bytes())
			}
		})
	}
}

// BenchmarkRobustFillGenerate draws one task of the none task (1-10
// expressions, 4 I/O examples) and writes it as JSONL to a file; the target
// is 100,000 tasks in 60 s on 2 cores, i.e. under 600 µs each.
func BenchmarkRobustFillGenerate(b *testing.B) {
	s, err := NewRobustFill(None)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(b.TempDir(), "train.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	enc := data.NewEncoder(w)
	rng := data.SubRand(1, "train")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rec, err := s.Sample(rng, Train, i)
		if err != nil {
			b.Fatal(err)
		}
		rec.ID = fmt.Sprintf("train-%06d", i)
		if err := enc.Encode(&rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}
