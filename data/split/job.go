package split

import (
	"context"
	"fmt"
	"strings"

	"compbench/data"
	"compbench/data/structure"
	"compbench/progress"
)

// Job is one `compbench split METHOD` run over a pool: program trees and
// compounds when the method needs them, the assignment, and the Result
// written as split.json.
type Job struct {
	// Method is one of Methods.
	Method string
	// Pool is the records to split; PoolName names their file in
	// split.json.
	Pool     []data.Record
	PoolName string
	// Seed draws the split (data.SubRand(Seed, "split/"+Method)).
	Seed  uint64
	Sizes Sizes
	// Tree says where programs come from; Compounds bounds compounds.
	Tree      structure.TreeKind
	Compounds structure.CompoundConfig
	// SkipBad drops records whose program does not parse instead of
	// failing.
	SkipBad bool
	// Anonymizer maps inputs and outputs to templates.
	Anonymizer Anonymizer
	// The method's settings (only Method's is read).
	Length     LengthConfig
	Template   TemplateConfig
	MCD        MCDConfig
	TMCD       TMCDConfig
	Likelihood LikelihoodConfig
	// The grammar and nls methods' settings (RunGrammar, RunNLS).
	Grammar GrammarJob
	NLS     NLSConfig
	// Scores are the likelihood method's {id: score}.
	Scores map[string]float64
	// Progress receives progress bars and warnings (nil: none).
	Progress progress.Reporter
}

// Methods are the split methods Run runs. The grammar and nls methods
// choose among candidate splits and may write several: RunGrammar and
// RunNLS run them.
var Methods = []string{"random", "length", "template", "mcd", "tmcd", "likelihood"}

// Params is split.json's "params": the job's settings.
type Params struct {
	Seed       uint64     `json:"seed"`
	Sizes      Sizes      `json:"sizes"`
	Tree       string     `json:"tree"`
	MaxSize    int        `json:"compound_max_size"`
	Keep       int        `json:"compound_keep"`
	Supers     string     `json:"compound_supergraphs"`
	AtomCount  string     `json:"atom_count,omitempty"`
	Measure    string     `json:"compound_measure,omitempty"`
	Pool       string     `json:"pool"`
	Anonymizer Anonymizer `json:"anonymizer"`
	SkippedBad int        `json:"skipped_bad"`
	Method     any        `json:"method,omitempty"`
}

// NeedsTrees reports whether the job's method reads program trees.
func (j *Job) NeedsTrees() bool {
	return j.Method == "mcd" || j.Method == "tmcd" || (j.Method == "likelihood" && j.Likelihood.AtomConstraint)
}

// Run splits the pool. It returns the result and the pool it split (the
// records left after SkipBad), for Write.
func (j *Job) Run(ctx context.Context) (*Result, []data.Record, error) {
	rep := progress.Or(j.Progress)
	pool := j.Pool
	j.Anonymizer = j.Anonymizer.Resolve(pool)
	j.Template.Anonymizer = j.Template.Anonymizer.Resolve(pool)
	params := Params{Seed: j.Seed, Sizes: j.Sizes, Tree: string(j.Tree), MaxSize: j.Compounds.MaxSize, Anonymizer: j.Anonymizer, Pool: j.PoolName}
	var ix *structure.Index
	if j.Tree != TreeNone {
		var trees []*data.Tree
		var err error
		if j.SkipBad {
			var bad []string
			pool, trees, bad = SkipBad(pool, j.Tree)
			params.SkippedBad = len(bad)
			if len(bad) > 0 {
				rep.Notef("split: skipped %d records whose program does not parse (first: %q)", len(bad), bad[0])
			}
			if len(pool) == 0 {
				return nil, nil, fmt.Errorf("no record has a program that parses")
			}
		} else if trees, err = Trees(pool, j.Tree); err != nil {
			return nil, nil, fmt.Errorf("%s: %w (use --skip-bad to drop such records, or --tree none)", j.PoolName, err)
		}
		if ix, err = structure.Build(trees, j.Compounds, rep); err != nil {
			return nil, nil, err
		}
		params.MaxSize, params.Keep, params.Supers, params.AtomCount = ix.MaxSize, ix.Keep, ix.Supergraphs, ix.AtomCount
		if ix.Measure == structure.MeasureNQG {
			params.Measure = ix.Measure
		}
	} else if j.NeedsTrees() {
		return nil, nil, fmt.Errorf("%s needs program trees; --tree none is not allowed", j.Method)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	rng := data.SubRand(j.Seed, "split/"+j.Method)
	var a Assignment
	var err error
	switch j.Method {
	case "random":
		a, err = Random(len(pool), j.Sizes, rng)
	case "length":
		params.Method = j.Length
		a, err = Length(pool, j.Length, j.Sizes, rng)
	case "template":
		params.Method = j.Template
		a, err = Template(pool, j.Template, j.Sizes, rng)
	case "mcd":
		params.Method = j.MCD
		a, err = MCD(ctx, ix, OutputLengths(pool), j.MCD, j.Sizes, rng, rep)
	case "tmcd":
		params.Method = j.TMCD
		a, err = TMCD(ctx, ix, OutputLengths(pool), j.TMCD, j.Sizes, rng, rep)
	case "likelihood":
		params.Method = j.Likelihood
		a, err = Likelihood(ctx, pool, j.Scores, ix, j.Likelihood, j.Sizes, rng)
	default:
		return nil, nil, fmt.Errorf("unknown split method %q (want one of %s)", j.Method, strings.Join(Methods, ", "))
	}
	if err != nil {
		return nil, nil, err
	}
	if w := DiscardWarning(j.Method, len(pool), j.Sizes, a); w != "" {
		rep.Notef("%s", w)
	}
	return NewResult(j.Method, params, pool, ix, a, j.Anonymizer), pool, nil
}

// DiscardWarning says when a method kept far fewer records than the sizes
// ask for, or gave train fewer than test, and what to change ("" when
// neither).
func DiscardWarning(method string, pool int, sizes Sizes, a Assignment) string {
	train, kept := len(a.Train), len(a.Train)+len(a.Dev)+len(a.Test)
	wantTrain := sizes.Train
	if wantTrain == 0 {
		wantTrain = 1 - sizes.Dev - sizes.Test
	}
	want := (wantTrain + sizes.Dev + sizes.Test) * float64(pool)
	var why []string
	if float64(kept) < want/2 {
		why = append(why, fmt.Sprintf("dropped %d", pool-kept))
	}
	if train < len(a.Test) && wantTrain >= sizes.Test {
		why = append(why, "train is smaller than test")
	}
	if len(why) == 0 {
		return ""
	}
	hint := "check the fractions"
	if method == "template" {
		hint = "--k-test 0 keeps every example of a test template, --k-train 0 of a train one; --test-frac sets how many templates are held out"
	}
	return fmt.Sprintf("split: warning: %s kept %d of %d records (train %d, dev %d, test %d): %s; %s",
		method, kept, pool, train, len(a.Dev), len(a.Test), strings.Join(why, ", "), hint)
}
