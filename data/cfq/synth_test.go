package cfq

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A synthetic dataset.json for measuring import and MCD at CFQ's scale
// (CFQ has 239,357 examples): Google's ten example records cycled, each
// copy with its film roles permuted, its nationality and gender changed,
// named entities and Freebase ids of its own, and the other fields of
// CFQ's format (Keysers et al. 2020, App. A) filled in: question,
// questionWithBrackets, sparql, sparqlPattern, complexityMeasures and a
// ruleTree in the published shape built from the query. BENCHMARKS.md
// ("CFQ at scale") writes it with
//
//	go test ./data/cfq -run TestSynthDataset -synth-n 240000 -synth-out DIR/dataset.json
var (
	synthN   = flag.Int("synth-n", 0, "examples in the synthetic dataset.json (with -synth-out)")
	synthOut = flag.String("synth-out", "", "write the synthetic dataset.json here")
)

// synthRoles are film roles as the questions and queries write them: a
// copy permutes them all together, so question and query stay one meaning.
var synthRoles = [][3]string{
	{"director", "direct", "film.director.film"},
	{"editor", "edit", "film.editor.film"},
	{"writer", "write", "film.writer.film"},
}

// synthPerms are the six orders of three roles.
var synthPerms = [6][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}

// synthNations are adjectives with their Freebase ids (the two of the
// examples first).
var synthNations = [][2]string{
	{"Spanish", "m.06mkj"}, {"Canadian", "m.0d060g"}, {"American", "m.09c7w0"}, {"British", "m.07ssc"},
	{"French", "m.0f8l9c"}, {"German", "m.0345h"}, {"Swedish", "m.0d0vqn"}, {"Italian", "m.03rjj"},
}

// synthGenders swap "male" and "female" with their ids.
var synthGenders = [][2]string{{"male", "m.05zppz"}, {"female", "m.02zsn"}}

// writeSynth writes n examples as a dataset.json array.
func writeSynth(w io.Writer, base []map[string]string, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString("[\n")
	for i := 0; i < n; i++ {
		if i > 0 {
			bw.WriteString(",\n")
		}
		b, err := json.MarshalIndent(synthExample(base[i%len(base)], i/len(base)), "  ", "  ")
		if err != nil {
			return err
		}
		bw.WriteString("  ")
		bw.Write(b)
	}
	bw.WriteString("\n]\n")
	return bw.Flush()
}

// synthExample is copy k of example e.
func synthExample(e map[string]string, k int) map[string]any {
	q, s := e["questionPatternModEntities"], e["sparqlPatternModEntities"]
	var from, to []string
	for r, p := range synthPerms[k%6] {
		for f := range 3 {
			from = append(from, synthRoles[r][f])
			to = append(to, "\x00"+synthRoles[p][f]) // \x00: not substituted again
		}
	}
	nat, gen := synthNations[(k/6)%len(synthNations)], synthGenders[(k/48)%2]
	for _, x := range synthNations {
		from, to = append(from, x[0], x[1]), append(to, "\x00"+nat[0], "\x00"+nat[1])
	}
	for _, x := range synthGenders {
		from, to = append(from, x[0]+" ", x[1]), append(to, "\x00"+gen[0]+" ", "\x00"+gen[1])
	}
	q, s = substitute(q, from, to), substitute(s, from, to)
	// Named entities and their ids, one set per copy.
	named, brackets, sparql := q, q, s
	for m := 9; m >= 0; m-- {
		mm := "M" + strconv.Itoa(m)
		name := fmt.Sprintf("Entity %d-%d", k, m)
		mid := "ns:m." + strconv.FormatInt(int64(k*10+m)+1<<30, 36)
		named = strings.ReplaceAll(named, mm, name)
		brackets = strings.ReplaceAll(brackets, mm, "["+name+"]")
		sparql = strings.ReplaceAll(sparql, mm, mid)
	}
	lines := strings.Split(s, "\n")
	return map[string]any{
		"question":                   named + "?",
		"questionWithBrackets":       brackets + "?",
		"questionPatternModEntities": q,
		"sparql":                     sparql,
		"sparqlPatternModEntities":   s,
		"sparqlPattern":              s,
		"complexityMeasures": map[string]int{
			"parseTreeLeafCount": len(strings.Fields(q)), "sparqlNumConstraints": len(lines) - 2,
			"recursionDepth": 1 + k%7,
		},
		"ruleTree": synthRuleTree(lines),
	}
}

// substitute replaces every from[i] by to[i] in one pass over s, so a
// permutation does not replace its own output; to's \x00 marks are then
// dropped.
func substitute(s string, from, to []string) string {
	pairs := make([]string, 0, 2*len(from))
	for i := range from {
		pairs = append(pairs, from[i], to[i])
	}
	return strings.ReplaceAll(strings.NewReplacer(pairs...).Replace(s), "\x00", "")
}

// synthRuleTree builds a rule tree in CFQ's shape from the query's lines:
// the query form, then one knowledge rule per constraint with a grammar
// rule per argument.
func synthRuleTree(lines []string) map[string]any {
	node := func(typ, val string, sub ...map[string]any) map[string]any {
		n := map[string]any{"ruleId": map[string]string{"type": typ, "stringValue": val}}
		if len(sub) > 0 {
			n["subTree"] = sub
		}
		return n
	}
	form := "S=WHQ"
	if strings.Contains(lines[0], "count(*)") {
		form = "S=YNQ"
	}
	var kids []map[string]any
	for _, l := range lines[1 : len(lines)-1] {
		f := strings.Fields(strings.TrimSuffix(l, " ."))
		if len(f) < 3 {
			continue
		}
		arg := func(t string) map[string]any {
			if strings.HasPrefix(t, "?") {
				return node("GRAMMAR_RULE", "NP=VARIABLE")
			}
			return node("GRAMMAR_RULE", "NP=ENTITY")
		}
		kids = append(kids, node("KNOWLEDGE", "FreebasePropertyMapping("+f[1]+")", arg(f[0]), arg(f[len(f)-1])))
	}
	return node("SPARQL_GENERATION", "CONCEPT_TO_SPARQL", node("GRAMMAR_RULE", form, kids...))
}

func synthBase(t testing.TB) []map[string]string {
	b, err := os.ReadFile("testdata/google-example/dataset.json")
	if err != nil {
		t.Fatal(err)
	}
	var base []map[string]string
	if err := json.Unmarshal(b, &base); err != nil {
		t.Fatal(err)
	}
	return base
}

// TestSynthDataset writes -synth-n examples to -synth-out when given;
// otherwise it checks the generator on 120 examples: every one imports,
// the copies differ, and question and query were permuted together.
func TestSynthDataset(t *testing.T) {
	base := synthBase(t)
	if *synthOut != "" {
		f, err := os.Create(*synthOut)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeSynth(f, base, *synthN); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	p := filepath.Join(t.TempDir(), "dataset.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSynth(f, base, 120); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, err = os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := readAll(t, f, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Input+"\t"+r.Output] = true
	}
	if len(recs) != 120 || len(seen) < 40 || recs[0].Extra["ruleTree"] == nil {
		t.Fatalf("%d records, %d distinct", len(recs), len(seen))
	}
	// Copy 1 of record 5 swaps director and writer, its nationality kept.
	if r := recs[15]; r.Input != "Did M1 ' s Spanish executive producer write M0" || !strings.Contains(r.Output, "?x0 film.writer.film M0") {
		t.Errorf("record 15: %q / %q", r.Input, r.Output)
	}
}
