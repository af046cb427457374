package tasks

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/scan"
)

// The -update flag rewrites golden files. Other test files of this package
// may declare it too, so it is looked up before it is declared (a flag
// declared twice panics).
var _ = declareUpdate()

func declareUpdate() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
	return true
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// scanDraw draws n examples of distribution d, numbering i per distribution.
func scanDraw(t testing.TB, task Task, d Dist, seed uint64, n int) []data.Record {
	t.Helper()
	s, err := NewSCAN(task)
	if err != nil {
		t.Fatal(err)
	}
	rng := data.SubRand(seed, fmt.Sprint(d))
	recs := make([]data.Record, n)
	for i := range recs {
		recs[i], err = s.Sample(rng, d, i)
		if err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

// concept classifies a program part by its turns: 'L' left, 'R' right, '-'
// none. A part is one phrase, so it never turns both ways.
func concept(part string) byte {
	l, r := strings.Contains(part, "LTURN"), strings.Contains(part, "RTURN")
	switch {
	case l && r:
		return '?'
	case l:
		return 'L'
	case r:
		return 'R'
	}
	return '-'
}

func concepts(rec *data.Record) string {
	var b strings.Builder
	for _, p := range rec.Parts {
		b.WriteByte(concept(p))
	}
	return b.String()
}

// words reports whether the command contains the phrase w as whole words.
func words(input, w string) bool {
	return strings.Contains(" "+input+" ", " "+w+" ")
}

func TestSCANTaskConstraints(t *testing.T) {
	const n = 3000
	type check func(i int, rec *data.Record) error
	lengths := func(lo, hi int, except ...int) check {
		return func(_ int, rec *data.Record) error {
			k := len(rec.Parts)
			for _, e := range except {
				if k == e {
					return fmt.Errorf("%d parts", k)
				}
			}
			if k < lo || k > hi {
				return fmt.Errorf("%d parts, want %d-%d", k, lo, hi)
			}
			return nil
		}
	}
	all := func(cs ...check) check {
		return func(i int, rec *data.Record) error {
			for _, c := range cs {
				if err := c(i, rec); err != nil {
					return err
				}
			}
			return nil
		}
	}
	directed := func(_ int, rec *data.Record) error {
		if c := concepts(rec); strings.ContainsAny(c, "-?") {
			return fmt.Errorf("concepts %s: a part without one direction", c)
		}
		return nil
	}
	oneConcept := func(_ int, rec *data.Record) error {
		if c := concepts(rec); strings.Contains(c, "L") == strings.Contains(c, "R") {
			return fmt.Errorf("concepts %s, want one", c)
		}
		return nil
	}
	mixed := func(_ int, rec *data.Record) error {
		if c := concepts(rec); !strings.Contains(c, "L") || !strings.Contains(c, "R") {
			return fmt.Errorf("concepts %s, want both", c)
		}
		return nil
	}
	order := func(first, rest string) check {
		return func(_ int, rec *data.Record) error {
			k := len(rec.Parts)
			want := strings.Repeat(first, k/2) + strings.Repeat(rest, k-k/2)
			if c := concepts(rec); c != want {
				return fmt.Errorf("concepts %s, want %s", c, want)
			}
			return nil
		}
	}
	jumpTrain := func(i int, rec *data.Record) error {
		if i%10 == 0 {
			if rec.Input != "jump" {
				return fmt.Errorf("example %d is not exactly jump", i)
			}
			return nil
		}
		if words(rec.Input, "jump") {
			return fmt.Errorf("contains jump")
		}
		return nil
	}
	jumpTest := func(_ int, rec *data.Record) error {
		if !words(rec.Input, "jump") || rec.Input == "jump" {
			return fmt.Errorf("want jump, but not exactly")
		}
		return nil
	}
	aroundRight := func(want bool) check {
		return func(_ int, rec *data.Record) error {
			if words(rec.Input, "around right") != want {
				return fmt.Errorf("around right: %v, want %v", !want, want)
			}
			return nil
		}
	}
	tests := []struct {
		task        Task
		train, test check
		// trainLens and testLens are every part count that must occur.
		trainLens, testLens []int
	}{
		{None, lengths(1, 10), lengths(1, 10), span(1, 10), span(1, 10)},
		{Length, lengths(1, 6), lengths(7, 10), span(1, 6), span(7, 10)},
		{LengthHard, lengths(6, 6), lengths(1, 10, 6), []int{6}, []int{1, 2, 3, 4, 5, 7, 8, 9, 10}},
		{LengthHardest, lengths(1, 1), lengths(2, 6), []int{1}, span(2, 6)},
		{ComposeDifferentConcepts, all(lengths(2, 6), directed, oneConcept), all(lengths(2, 6), directed, mixed), span(2, 6), span(2, 6)},
		{SwitchConceptOrder, all(lengths(2, 6), order("L", "R")), all(lengths(2, 6), order("R", "L")), span(2, 6), span(2, 6)},
		{ComposeNewOperation, all(lengths(1, 6), jumpTrain), all(lengths(1, 6), jumpTest), span(1, 6), span(1, 6)},
		{AddOperationFunctionality, all(lengths(1, 6), aroundRight(false)), all(lengths(1, 6), aroundRight(true)), span(1, 6), span(1, 6)},
	}
	for _, tc := range tests {
		for _, d := range []Dist{Train, Test} {
			name := string(tc.task) + "/train"
			chk, lens := tc.train, tc.trainLens
			if d == Test {
				name = string(tc.task) + "/test"
				chk, lens = tc.test, tc.testLens
			}
			t.Run(name, func(t *testing.T) {
				seen := map[int]bool{}
				for i, rec := range scanDraw(t, tc.task, d, 1, n) {
					if err := consistent(&rec); err != nil {
						t.Fatalf("example %d %q: %v", i, rec.Input, err)
					}
					if err := chk(i, &rec); err != nil {
						t.Fatalf("example %d %q: %v", i, rec.Input, err)
					}
					seen[len(rec.Parts)] = true
				}
				for _, k := range lens {
					if !seen[k] {
						t.Errorf("no example with %d parts in %d", k, n)
					}
				}
			})
		}
	}
}

func span(lo, hi int) []int {
	var s []int
	for k := lo; k <= hi; k++ {
		s = append(s, k)
	}
	return s
}

// consistent checks a record against the DSL: the input parses, translates
// to the output, has one part per phrase, and the parts make the output.
func consistent(rec *data.Record) error {
	c, err := scan.Parse(rec.Input)
	if err != nil {
		return err
	}
	if c.Output() != rec.Output {
		return fmt.Errorf("output %q, want %q", rec.Output, c.Output())
	}
	if len(rec.Parts) != len(c.Parts) || strings.Join(rec.Parts, " ") != rec.Output {
		return fmt.Errorf("parts %q do not match", rec.Parts)
	}
	if rec.Tree == nil || rec.Tree.String() != c.Tree().String() {
		return fmt.Errorf("tree %v", rec.Tree)
	}
	return nil
}

// The concept tasks use directed parts only; train picks left or right
// evenly, and compose-new-operation places exactly 10% bare jumps.
func TestSCANTaskProportions(t *testing.T) {
	recs := scanDraw(t, ComposeDifferentConcepts, Train, 2, 4000)
	left := 0
	for i := range recs {
		if concepts(&recs[i])[0] == 'L' {
			left++
		}
	}
	if left < 1800 || left > 2200 {
		t.Errorf("%d of 4000 train examples are left-only, want about 2000", left)
	}
	recs = scanDraw(t, ComposeNewOperation, Train, 2, 1000)
	jumps := 0
	for _, r := range recs {
		if r.Input == "jump" {
			jumps++
		}
	}
	if jumps != 100 {
		t.Errorf("%d of 1000 train examples are exactly jump, want 100", jumps)
	}
}

func TestNewSCANUnknownTask(t *testing.T) {
	if _, err := NewSCAN("lenght"); err == nil || !strings.Contains(err.Error(), `unknown task "lenght"`) {
		t.Errorf("error %v", err)
	}
}

func TestSCANGolden(t *testing.T) {
	for _, task := range All {
		t.Run(string(task), func(t *testing.T) {
			var b bytes.Buffer
			enc := data.NewEncoder(&b)
			for _, d := range []Dist{Train, Test} {
				for i, rec := range scanDraw(t, task, d, 1, 4) {
					rec.ID = fmt.Sprintf("%v-%d", map[Dist]string{Train: "train", Test: "test"}[d], i)
					if err := enc.Encode(&rec); err != nil {
						t.Fatal(err)
					}
				}
			}
			path := filepath.Join("testdata", "scan_"+string(task)+".jsonl")
			if updating() {
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

// BenchmarkSCANGenerate measures drawing and encoding one SCAN example of
// the none task (1-10 parts) as JSONL; the target is 1,000,000 in 10 s
// written to disk, i.e. well under 10 µs each.
func BenchmarkSCANGenerate(b *testing.B) {
	s, err := NewSCAN(None)
	if err != nil {
		b.Fatal(err)
	}
	rng := data.SubRand(1, "train")
	w := bufio.NewWriterSize(io.Discard, 1<<20)
	enc := data.NewEncoder(w)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rec, err := s.Sample(rng, Train, i)
		if err != nil {
			b.Fatal(err)
		}
		rec.ID = "train-000001"
		if err := enc.Encode(&rec); err != nil {
			b.Fatal(err)
		}
	}
}
