package cfq

import (
	"strings"
	"testing"
)

// An example in the shape Keysers et al. print in App. A (every field of
// CFQ's dataset.json, the rule tree nested), with what real entity names
// hold: non-ASCII letters, a typographic apostrophe, JSON \u escapes, and
// a number past 2^64 in a kept field.
const appendixA = `[{
  "question": "Was Cach\u00fan cach\u00fan ra ra!\u2019s director Agust\u00edn Almod\u00f3var",
  "questionWithBrackets": "Was [Cachún cachún ra ra!]’s director [Agustín Almodóvar]",
  "questionPatternModEntities": "Was M0 's director M1",
  "questionTemplate": "Was [entity] 's [ROLE] [entity]",
  "expectedResponse": "No",
  "sparql": "SELECT count(*) WHERE {\nns:m.0abc ns:film.film.directed_by ns:m.04lhs01\n}",
  "sparqlPatternModEntities": "SELECT count(*) WHERE {\nM0 ns:film.film.directed_by M1\n}",
  "sparqlPattern": "SELECT count(*) WHERE {\nM0 P0 M1\n}",
  "complexityMeasures": {"parseTreeLeafCount": 5, "parseTreeRuleCount": 12, "big": 123456789012345678901234567890},
  "aggregatedRuleInfo": {"ruleId": [{"type": "SPARQL_GENERATION", "stringValue": "ENTITY_MID"}]},
  "ruleTree": {"ruleId": {"type": "SPARQL_GENERATION", "stringValue": "CONCEPT_TO_SPARQL"}, "subTree": [{"ruleId": {"type": "GRAMMAR_RULE", "stringValue": "S=YNQ"}}]}
}]`

func TestRecordAppendixA(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cfg           Config
		input, output string
		extra         map[string]string
	}{
		{"patterns", DefaultConfig(), "Was M0 ' s director M1", "SELECT count ( * ) WHERE { M0 film.film.directed_by M1 }",
			map[string]string{"ruleTree": `{"ruleId": {"type": "SPARQL_GENERATION", "stringValue": "CONCEPT_TO_SPARQL"}, "subTree": [{"ruleId": {"type": "GRAMMAR_RULE", "stringValue": "S=YNQ"}}]}`}},
		{"raw entities, keep all", Config{RawEntities: true, Keep: []string{"all"}},
			"Was Cachún cachún ra ra ! ’s director Agustín Almodóvar", "SELECT count ( * ) WHERE { m_0abc film.film.directed_by m_04lhs01 }",
			map[string]string{"complexityMeasures": `{"parseTreeLeafCount": 5, "parseTreeRuleCount": 12, "big": 123456789012345678901234567890}`,
				"question": `"Was Cach\u00fan cach\u00fan ra ra!\u2019s director Agust\u00edn Almod\u00f3var"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := readAll(t, strings.NewReader(appendixA), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := recs[0]
			if r.Input != tc.input || r.Output != tc.output {
				t.Errorf("got %q / %q\nwant %q / %q", r.Input, r.Output, tc.input, tc.output)
			}
			// Kept fields are the file's bytes, not re-encoded.
			for k, want := range tc.extra {
				if got := string(r.Extra[k]); got != want {
					t.Errorf("%s: %s, want %s", k, got, want)
				}
			}
		})
	}
}
