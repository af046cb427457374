package scan

import (
	"math"
	"testing"

	"compbench/data"
)

// near reports whether a frequency is within 4 standard errors of p.
func near(count, n int, p float64) bool {
	se := math.Sqrt(p * (1 - p) / float64(n))
	return math.Abs(float64(count)/float64(n)-p) <= 4*se
}

func TestPartSpecDistribution(t *testing.T) {
	const n = 40000
	rng := data.NewRand(7)
	var forms [4]int
	var verbsDir [5]int
	var verbsBare [5]int
	var times [4]int
	var dirs [3]int
	for i := 0; i < n; i++ {
		p := Any.Sample(rng)
		if !p.Valid() {
			t.Fatalf("invalid part %+v", p)
		}
		forms[p.Form]++
		times[p.Times]++
		dirs[p.Dir]++
		if p.Form == Bare {
			verbsBare[p.Verb]++
		} else {
			verbsDir[p.Verb]++
		}
	}
	checks := []struct {
		name  string
		count int
		of    int
		p     float64
	}{
		{"each form 1/4 (bare)", forms[Bare], n, 0.25},
		{"each form 1/4 (around)", forms[Around], n, 0.25},
		{"once 1/2", times[1], n, 0.5},
		{"twice 1/4", times[2], n, 0.25},
		{"thrice 1/4", times[3], n, 0.25},
		{"left 3/8", dirs[Left], n, 0.375},
		{"bare jump 1/4 of bare", verbsBare[Jump], forms[Bare], 0.25},
		{"bare never turn", verbsBare[Turn], forms[Bare], 0},
		{"turn 1/5 of directed", verbsDir[Turn], n - forms[Bare], 0.2},
		{"walk 1/5 of directed", verbsDir[Walk], n - forms[Bare], 0.2},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.p == 0 {
				if c.count != 0 {
					t.Errorf("count %d, want 0", c.count)
				}
				return
			}
			if !near(c.count, c.of, c.p) {
				t.Errorf("frequency %d/%d = %.4f, want %.4f", c.count, c.of, float64(c.count)/float64(c.of), c.p)
			}
		})
	}
}

func TestPartSpecRestricts(t *testing.T) {
	rng := data.NewRand(3)
	spec := PartSpec{Forms: []Form{Around}, Dirs: []Dir{Right}}
	for i := 0; i < 1000; i++ {
		p := spec.Sample(rng)
		if p.Form != Around || p.Dir != Right {
			t.Fatalf("part %+v outside %+v", p, spec)
		}
	}
	spec = PartSpec{Forms: DirForms}
	for i := 0; i < 1000; i++ {
		if p := spec.Sample(rng); p.Dir == NoDir {
			t.Fatalf("part %+v has no direction", p)
		}
	}
}

func TestSampleSpecsFollowOutputOrder(t *testing.T) {
	rng := data.NewRand(5)
	left := PartSpec{Forms: DirForms, Dirs: []Dir{Left}}
	right := PartSpec{Forms: DirForms, Dirs: []Dir{Right}}
	specs := []PartSpec{left, left, right, right, right}
	afters := 0
	for i := 0; i < 2000; i++ {
		c := Sample(rng, specs)
		if len(c.Parts) != 5 || len(c.Conjs) != 4 {
			t.Fatalf("shape %d parts %d conjs", len(c.Parts), len(c.Conjs))
		}
		for k, pos := range c.OutputOrder() {
			if want := specs[k].Dirs[0]; c.Parts[pos].Dir != want {
				t.Fatalf("%q: output part %d has direction %v, want %v", c.Text(), k, c.Parts[pos].Dir, want)
			}
		}
		for _, cj := range c.Conjs {
			if cj == After {
				afters++
			}
		}
	}
	if !near(afters, 8000, 0.5) {
		t.Errorf("%d of 8000 conjunctions are after, want about half", afters)
	}
}

func TestSampleDeterministic(t *testing.T) {
	draw := func(seed uint64) string {
		rng := data.NewRand(seed)
		s := ""
		for i := 0; i < 50; i++ {
			c := Sample(rng, make([]PartSpec, 1+i%10))
			s += c.Text() + "\n"
		}
		return s
	}
	if a, b := draw(11), draw(11); a != b {
		t.Error("same seed gave different commands")
	}
	if draw(11) == draw(12) {
		t.Error("different seeds gave the same commands")
	}
}
