package split

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/structure"
)

// checkPartition asserts train, dev and test are sorted, disjoint, within
// the pool, and (when covering) together the whole pool.
func checkPartition(t *testing.T, a Assignment, n int, covering bool) {
	t.Helper()
	seen := make([]bool, n)
	total := 0
	for name, part := range map[string][]int{"train": a.Train, "dev": a.Dev, "test": a.Test} {
		if !sort.IntsAreSorted(part) {
			t.Errorf("%s not sorted", name)
		}
		for _, i := range part {
			if i < 0 || i >= n || seen[i] {
				t.Fatalf("%s: index %d out of range or repeated", name, i)
			}
			seen[i] = true
			total++
		}
	}
	if covering && total != n {
		t.Errorf("parts hold %d of %d examples", total, n)
	}
	if len(a.Train) == 0 || len(a.Test) == 0 {
		t.Errorf("empty part: train %d test %d", len(a.Train), len(a.Test))
	}
}

func index(t testing.TB, pool []data.Record) *structure.Index {
	t.Helper()
	trees, err := Trees(pool, structure.TreeAuto)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := structure.Build(trees, structure.DefaultCompoundConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func atomsMissing(ix *structure.Index, a Assignment) int {
	ta := ix.AtomDist(a.Train)
	miss := 0
	for _, e := range append(append([]int(nil), a.Dev...), a.Test...) {
		for _, at := range ix.Examples[e].Atoms {
			if ta[at.ID] == 0 {
				miss++
			}
		}
	}
	return miss
}

func TestMethodsInvariants(t *testing.T) {
	pool := scanSample(2000, 7)
	ix := index(t, pool)
	scores := map[string]float64{}
	for i := range pool {
		scores[pool[i].ID] = -float64(len(pool[i].Output)) + float64(i%7)/10
	}
	sizes := Sizes{Dev: 0.1, Test: 0.1}
	small := DefaultMCDConfig()
	small.Candidates = 50
	small.RemoveEvery = 5
	methods := []struct {
		name     string
		covering bool
		run      func(seed uint64) (Assignment, error)
		check    func(t *testing.T, a Assignment)
	}{
		{"random", true, func(s uint64) (Assignment, error) { return Random(len(pool), sizes, data.NewRand(s)) }, nil},
		{"length", true, func(s uint64) (Assignment, error) {
			return Length(pool, LengthConfig{By: "output"}, sizes, data.NewRand(s))
		}, func(t *testing.T, a Assignment) {
			maxTrain := 0
			for _, i := range a.Train {
				maxTrain = max(maxTrain, len(strings.Fields(pool[i].Output)))
			}
			for _, i := range append(a.Dev, a.Test...) {
				if l := len(strings.Fields(pool[i].Output)); l <= maxTrain {
					t.Fatalf("eval example of length %d <= longest train %d", l, maxTrain)
				}
			}
		}},
		{"template", false, func(s uint64) (Assignment, error) {
			cfg := DefaultTemplateConfig()
			cfg.Anonymizer = AnonSCAN
			return Template(pool, cfg, sizes, data.NewRand(s))
		}, func(t *testing.T, a Assignment) {
			tr := map[string]bool{}
			for _, i := range a.Train {
				tr[AnonSCAN.Apply(pool[i].Output)] = true
			}
			perTemplate := map[string]int{}
			for _, i := range append(a.Dev, a.Test...) {
				p := AnonSCAN.Apply(pool[i].Output)
				if tr[p] {
					t.Fatalf("template %q in train and test", p)
				}
				perTemplate[p]++
			}
			for p, c := range perTemplate {
				if c > 10 {
					t.Fatalf("template %q has %d eval examples, cap 10", p, c)
				}
			}
			if m := missingToken(pool, a.Train, append(a.Dev, a.Test...)); m != "" {
				t.Fatalf("test token %q missing from train", m)
			}
		}},
		{"mcd", false, func(s uint64) (Assignment, error) {
			return MCD(context.Background(), ix, OutputLengths(pool), small, DefaultMCDSizes(), data.NewRand(s), nil)
		}, func(t *testing.T, a Assignment) {
			if len(a.Train) != 800 || len(a.Dev)+len(a.Test) != 200 {
				t.Errorf("sizes %d/%d/%d, want 800 train and 200 eval", len(a.Train), len(a.Dev), len(a.Test))
			}
			s := statsOf(pool, ix, a, AnonSCAN)
			r, _ := Random(len(pool), DefaultMCDSizes(), data.NewRand(1))
			rs := statsOf(pool, ix, r, AnonSCAN)
			// Whole-command compounds make even random D_C sizable on a
			// pool this small; MCD must still stand far above it.
			if *s.CompoundDivergence < *rs.CompoundDivergence+0.4 || *s.AtomDivergence > 0.05 {
				t.Errorf("mcd D_C %.3f D_A %.3f; random D_C %.3f", *s.CompoundDivergence, *s.AtomDivergence, *rs.CompoundDivergence)
			}
		}},
		{"tmcd", true, func(s uint64) (Assignment, error) {
			return TMCD(context.Background(), ix, OutputLengths(pool), TMCDConfig{Steps: 5000, LengthBuckets: 10}, sizes, data.NewRand(s), nil)
		}, func(t *testing.T, a Assignment) {
			if m := atomsMissing(ix, a); m != 0 {
				t.Errorf("%d eval atom occurrences missing from train", m)
			}
			s := statsOf(pool, ix, a, AnonSCAN)
			r, _ := Random(len(pool), sizes, data.NewRand(1))
			// The swaps roughly double D_C here (0.185 against 0.094); a
			// search whose D_C bookkeeping is off barely moves it.
			if rs := statsOf(pool, ix, r, AnonSCAN); *s.CompoundDivergence < *rs.CompoundDivergence+0.05 {
				t.Errorf("tmcd D_C %.4f not 0.05 above random %.4f", *s.CompoundDivergence, *rs.CompoundDivergence)
			}
		}},
		{"likelihood", true, func(s uint64) (Assignment, error) {
			return Likelihood(context.Background(), pool, scores, ix, LikelihoodConfig{LenBuckets: 4, By: "input", AtomConstraint: true}, sizes, data.NewRand(s))
		}, func(t *testing.T, a Assignment) {
			if m := atomsMissing(ix, a); m != 0 {
				t.Errorf("%d eval atom occurrences missing from train", m)
			}
			if len(a.Dev)+len(a.Test) != 400 {
				t.Errorf("eval size %d, want 400", len(a.Dev)+len(a.Test))
			}
		}},
	}
	for _, m := range methods {
		t.Run(m.name, func(t *testing.T) {
			a, err := m.run(3)
			if err != nil {
				t.Fatal(err)
			}
			checkPartition(t, a, len(pool), m.covering)
			if m.check != nil {
				m.check(t, a)
			}
			b, err := m.run(3)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Error("same seed gave a different split")
			}
			c, _ := m.run(4)
			if m.name != "length" && fmt.Sprint(a) == fmt.Sprint(c) {
				t.Error("another seed gave the same split")
			}
		})
	}
}

func TestLikelihoodOrder(t *testing.T) {
	pool := make([]data.Record, 10)
	scores := map[string]float64{}
	for i := range pool {
		pool[i] = data.Record{ID: fmt.Sprint(i), Input: "x", Output: "y"}
		scores[pool[i].ID] = float64(i)
	}
	for _, rev := range []bool{false, true} {
		a, err := Likelihood(context.Background(), pool, scores, nil, LikelihoodConfig{Reverse: rev}, Sizes{Test: 0.2, Dev: 0.1}, data.NewRand(1))
		if err != nil {
			t.Fatal(err)
		}
		eval := append(append([]int(nil), a.Dev...), a.Test...)
		sort.Ints(eval)
		want := []int{0, 1, 2}
		if rev {
			want = []int{7, 8, 9}
		}
		if fmt.Sprint(eval) != fmt.Sprint(want) {
			t.Errorf("reverse=%v: eval %v, want %v", rev, eval, want)
		}
	}
	delete(scores, "3")
	if _, err := Likelihood(context.Background(), pool, scores, nil, LikelihoodConfig{}, Sizes{Test: 0.2}, data.NewRand(1)); err == nil || !strings.Contains(err.Error(), `"3"`) {
		t.Errorf("missing score: err = %v", err)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes Sizes
	}{
		{"zero test", Sizes{}},
		{"over one", Sizes{Train: 0.6, Dev: 0.3, Test: 0.3}},
		{"negative", Sizes{Test: -0.1}},
		{"all eval", Sizes{Dev: 0.5, Test: 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Random(100, tc.sizes, data.NewRand(1)); err == nil {
				t.Error("accepted")
			}
		})
	}
	if _, err := Random(3, Sizes{Test: 0.01}, data.NewRand(1)); err == nil {
		t.Error("a test part of 0 examples accepted")
	}
	same := []data.Record{{ID: "a", Output: "x y"}, {ID: "b", Output: "x y"}}
	if _, err := Length(same, LengthConfig{}, Sizes{Test: 0.5}, data.NewRand(1)); err == nil {
		t.Error("length split of equal lengths accepted")
	}
	if _, err := Template(same, DefaultTemplateConfig(), Sizes{Test: 0.5}, data.NewRand(1)); err == nil {
		t.Error("template split of one template accepted")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"bad.tsv": "a\tb\nno tab here\n", "empty.tsv": "\n\n"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := LoadPool(p); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// TestGolden writes a random and an mcd split of 60 SCAN commands and
// compares every output file with testdata (refresh with -update).
func TestGolden(t *testing.T) {
	pool := scanSample(60, 11)
	ix := index(t, pool)
	for _, m := range []string{"random", "mcd"} {
		t.Run(m, func(t *testing.T) {
			var a Assignment
			var err error
			if m == "random" {
				a, err = Random(len(pool), Sizes{Dev: 0.1, Test: 0.2}, data.NewRand(5))
			} else {
				cfg := DefaultMCDConfig()
				cfg.MaxAtomDiv = 0.2
				a, err = MCD(context.Background(), ix, OutputLengths(pool), cfg, DefaultMCDSizes(), data.NewRand(5), nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := Write(dir, NewResult(m, map[string]int{"seed": 5}, pool, ix, a, AnonSCAN), pool, false); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "split.json"))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", m+".split.json")
			if *update {
				os.WriteFile(golden, got, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("split.json differs from %s (run go test -update after checking)", golden)
			}
			test, err := data.ReadRecords(filepath.Join(dir, "test.jsonl"))
			if err != nil || len(test) != len(a.Test) {
				t.Errorf("test.jsonl: %d records, err %v; want %d", len(test), err, len(a.Test))
			}
			if err := Write(dir, NewResult(m, nil, pool, ix, a, AnonSCAN), pool, false); err == nil {
				t.Error("second write without overwrite succeeded")
			}
		})
	}
}

func TestComputeStats(t *testing.T) {
	train := []data.Record{{ID: "a", Input: "walk", Output: "f(x, 1)"}, {ID: "b", Input: "run run", Output: "g(x)"}}
	test := []data.Record{{ID: "c", Input: "walk walk walk", Output: "f(y, 2)"}}
	s, err := ComputeStats(train, test, DefaultStatsOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s.TrainSize != 2 || s.TestSize != 1 {
		t.Errorf("sizes %d/%d", s.TrainSize, s.TestSize)
	}
	if fmt.Sprint(s.MissingAtoms) != "[2 y]" {
		t.Errorf("missing atoms %v, want [2 y]", s.MissingAtoms)
	}
	if s.OutputPatternCoverage != 0 { // "f(x, <num>)" vs "f(y, <num>)"
		t.Errorf("output coverage %v", s.OutputPatternCoverage)
	}
	if s.InputLengthRatio != 0.5 { // train / test, as Keysers et al. Table 3: mean(1, 2) / 3
		t.Errorf("input length ratio %v, want 0.5", s.InputLengthRatio)
	}
	if _, err := ComputeStats(append(train, data.Record{ID: "d", Output: "f("}), test, DefaultStatsOptions()); err == nil || !strings.Contains(err.Error(), `"d"`) {
		t.Errorf("bad program: err = %v", err)
	}
}
