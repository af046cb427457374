// Package cfq reads the CFQ dataset of Keysers et al. ("Measuring
// Compositional Generalization", §3 and §5) in its published form: the
// dataset.json array, streamed so the multi-gigabyte file is never held in
// memory, with the baselines' preprocessing; and the published split files
// {"trainIdxs", "devIdxs", "testIdxs"} of CFQ and SCAN MCD splits (§4).
package cfq

import "strings"

// punctuation is ASCII punctuation (Python's string.punctuation), the set
// CFQ's baselines space out in questions.
const punctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// TokenizePunctuation puts spaces around every ASCII punctuation character
// and joins the words with single spaces, as the CFQ baselines do for the
// question ("What did M0 's father direct?" -> "What did M0 ' s father
// direct ?").
func TokenizePunctuation(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c < 0x80 && strings.ContainsRune(punctuation, c) {
			b.WriteByte(' ')
			b.WriteRune(c)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(c)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// PreprocessSPARQL applies the baselines' query preprocessing:
// "count(*)" becomes "count ( * )", a token's "ns:" prefix is removed and a
// leading "m." becomes "m_". The baselines also replace the two characters
// `\n` by a space; here the result is then re-joined with single spaces, so
// the tokens are theirs and the spacing is compbench's (one space between
// tokens).
func PreprocessSPARQL(q string) string {
	q = strings.ReplaceAll(q, "count(*)", "count ( * )")
	var toks []string
	for _, t := range strings.Fields(q) {
		t = strings.TrimPrefix(t, "ns:")
		if strings.HasPrefix(t, "m.") {
			t = "m_" + t[2:]
		}
		toks = append(toks, strings.Fields(strings.ReplaceAll(t, `\n`, " "))...)
	}
	return strings.Join(toks, " ")
}
