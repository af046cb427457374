package split

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"compbench/data"
)

// TemplateConfig configures the template split (Finegan-Dollak et al. 2018;
// caps and validity as Bogin et al. App. B.1).
type TemplateConfig struct {
	// By is "output" (program templates) or "input" (input patterns).
	By string `json:"by"`
	// Anonymizer turns a string into its template.
	Anonymizer Anonymizer `json:"anonymizer"`
	// KTrain caps the training examples kept per template (0: no cap).
	KTrain int `json:"k_train"`
	// KTest caps the evaluation examples kept per template (0: no cap).
	KTest int `json:"k_test"`
	// MaxTries bounds the redraws when a test token is missing from train.
	MaxTries int `json:"max_tries"`
}

// DefaultTemplateConfig holds Bogin et al.'s caps: 1000 and 10.
func DefaultTemplateConfig() TemplateConfig {
	return TemplateConfig{By: "output", Anonymizer: AnonGeneric, KTrain: 1000, KTest: 10, MaxTries: 100}
}

// Template assigns whole templates to evaluation in a random order until the
// capped evaluation side reaches Dev+Test of the pool, keeps at most KTrain
// (KTest) random examples per train (evaluation) template and drops the
// rest, and redraws while some evaluation input or output token never occurs
// in train. Train is every remaining template, unless Sizes.Train is set:
// then both sides are drawn down to their sizes (trimToSizes), as Keysers
// et al.'s pattern splits are (§4: 40% train, 10% evaluation).
func Template(pool []data.Record, cfg TemplateConfig, sizes Sizes, rng *rand.Rand) (Assignment, error) {
	field, err := fieldOf(cfg.By)
	if err != nil {
		return Assignment{}, err
	}
	if cfg.KTrain < 0 || cfg.KTest < 0 || cfg.MaxTries < 1 {
		return Assignment{}, fmt.Errorf("template split: caps must be >= 0 and tries >= 1")
	}
	_, nDev, nTest, err := sizes.counts(len(pool))
	if err != nil {
		return Assignment{}, err
	}
	groups := map[string][]int{}
	for i := range pool {
		t := cfg.Anonymizer.Apply(field(&pool[i]))
		groups[t] = append(groups[t], i)
	}
	if len(groups) < 2 {
		return Assignment{}, fmt.Errorf("template split: the pool has %d template(s); need at least 2", len(groups))
	}
	names := make([]string, 0, len(groups))
	for t := range groups {
		names = append(names, t)
	}
	sort.Strings(names)
	capped := func(idx []int, k int) []int {
		idx = append([]int(nil), idx...)
		if k > 0 && len(idx) > k {
			rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			idx = idx[:k]
		}
		return idx
	}
	want := nDev + nTest
	for try := 0; try < cfg.MaxTries; try++ {
		order := append([]string(nil), names...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var train, eval []int
		for k, t := range order {
			if len(eval) < want && k < len(order)-1 {
				eval = append(eval, capped(groups[t], cfg.KTest)...)
			} else {
				train = append(train, capped(groups[t], cfg.KTrain)...)
			}
		}
		if train, eval, err = trimToSizes(train, eval, sizes, len(pool), rng); err != nil {
			return Assignment{}, err
		}
		if missingToken(pool, train, eval) == "" {
			return finish(train, eval, int(float64(len(eval))*sizes.Dev/(sizes.Dev+sizes.Test)+0.5), rng), nil
		}
	}
	return Assignment{}, fmt.Errorf("template split: no valid split in %d draws (a test token was always missing from train); try other fractions or --max-tries", cfg.MaxTries)
}

// missingToken returns an input or output token of eval never seen in
// train, or "".
func missingToken(pool []data.Record, train, eval []int) string {
	seen := map[string]bool{}
	for _, i := range train {
		for _, w := range strings.Fields(pool[i].Input) {
			seen["i:"+w] = true
		}
		for _, w := range strings.Fields(pool[i].Output) {
			seen["o:"+w] = true
		}
	}
	for _, i := range eval {
		for _, w := range strings.Fields(pool[i].Input) {
			if !seen["i:"+w] {
				return w
			}
		}
		for _, w := range strings.Fields(pool[i].Output) {
			if !seen["o:"+w] {
				return w
			}
		}
	}
	return ""
}
