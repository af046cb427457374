package structure

import (
	"strings"
	"testing"

	"compbench/data"
)

// Spouse is CFQ's property path for "spouse" / "marry".
const spouse = "people.person.spouse_s/ns:people.marriage.spouse|ns:fictional_universe.fictional_character.married_to/ns:fictional_universe.marriage_of_fictional_characters.spouses"

// The queries are sparqlPatternModEntities of records 0, 2 and 7 of CFQ's
// example_data/dataset.json (data/cfq/testdata/google-example); the trees
// were derived by hand from the rules in ParseSPARQL's comment.
func TestParseSPARQL(t *testing.T) {
	actor, producer := "film.actor.film/ns:film.performance.character", "film.producer.film|ns:film.production_company.films"
	record0 := "count(?x(and(" + actor + "(M), and(film.editor.film(M), and(" + producer + "(M), people.person.gender(m_02zsn))))))"
	x2 := "?x(and(!=(?x), and(film.cinematographer.film(M), people.person.gender(m_05zppz))))"
	x1 := "?x(and(!=(?x), and(people.person.nationality(m_0d060g), " + spouse + "(" + x2 + "))))"
	for _, tc := range []struct{ name, in, want string }{
		{"record 0: one variable, four relations",
			"SELECT count(*) WHERE {\n?x0 ns:film.actor.film/ns:film.performance.character M1 .\n?x0 ns:film.editor.film M0 .\n?x0 ns:film.producer.film|ns:film.production_company.films M0 .\n?x0 ns:people.person.gender ns:m.02zsn\n}",
			record0},
		{"record 2: inverse edge and filter",
			"SELECT count(*) WHERE {\n?x0 ns:" + spouse + " ?x1 .\n?x1 a ns:fictional_universe.fictional_character .\nFILTER ( ?x0 != ?x1 ) .\nM1 ns:business.employer.employees/ns:business.employment_tenure.person ?x0\n}",
			"count(?x(and(^business.employer.employees/ns:business.employment_tenure.person(M), " + spouse + "(?x(and(!=(?x), a(fictional_universe.fictional_character)))))))"},
		{"record 7: a chain of spouses",
			"SELECT count(*) WHERE {\n?x0 ns:" + spouse + " ?x1 .\n?x0 ns:" + spouse + " M0 .\n?x1 ns:people.person.nationality ns:m.0d060g .\n?x1 ns:" + spouse + " ?x2 .\n?x2 ns:film.cinematographer.film M3 .\n?x2 ns:people.person.gender ns:m.05zppz .\nFILTER ( ?x0 != ?x1 ) .\nFILTER ( ?x0 != M0 ) .\nFILTER ( ?x1 != ?x2 )\n}",
			"count(?x(and(!=(M), and(" + spouse + "(" + x1 + "), " + spouse + "(M)))))"},
		{"constants do not join",
			"SELECT count ( * ) WHERE { ?x0 p M0 . M0 q M1 . ?x0 r M0 }",
			"count(and(?x(and(p(M), r(M))), M(q(M))))"},
		{"selected variable first",
			"SELECT DISTINCT ?x1 WHERE { ?x0 p ?x1 . ?x1 a film.film }",
			"distinct(?x(and(^p(?x), a(film.film))))"},
		{"preprocessed as in the MCD releases",
			"SELECT count ( * ) WHERE { ?x0 " + actor + " M1 . ?x0 film.editor.film M0 . ?x0 " + producer + " M0 . ?x0 people.person.gender m_02zsn }",
			record0},
		{"select distinct",
			"SELECT DISTINCT ?x0 WHERE { ?x0 film.film.edited_by M0 . ?x0 a film.film }",
			"distinct(?x(and(a(film.film), film.film.edited_by(M))))"},
		{"no variables, two parts",
			"SELECT count ( * ) WHERE { M1 a film.writer . M0 a film.producer . }",
			"count(and(M(a(film.producer)), M(a(film.writer))))"},
		{"plain select", "SELECT ?x1 WHERE { ?x1 a film.film }", "select(?x(a(film.film)))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseSPARQL(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.String(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// The order of the triples does not change the tree.
func TestParseSPARQLOrder(t *testing.T) {
	a, err := ParseSPARQL("SELECT count(*) WHERE { ?x0 p ?x1 . ?x1 q M0 . ?x0 r M1 }")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseSPARQL("SELECT count(*) WHERE { ?x0 r M1 . ?x1 q M0 . ?x0 p ?x1 }")
	if err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || a.String() != "count(?x(and(p(?x(q(M))), r(M))))" {
		t.Errorf("%s and %s", a, b)
	}
}

func TestParseSPARQLErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, msg string }{
		{"empty", "  ", "at the end of the query: expected SELECT"},
		{"not select", "ASK { ?x0 a b }", `token 1 "ASK": expected SELECT`},
		{"no where", "SELECT ?x0 { ?x0 a b }", `token 3 "{": expected WHERE`},
		{"bad head", "SELECT count WHERE { ?x0 a b }", "expected count ( * ) or a variable"},
		{"no brace", "SELECT ?x0 WHERE ?x0 a b", "expected {"},
		{"unclosed", "SELECT ?x0 WHERE { ?x0 a b", "at the end of the query: expected . or }"},
		{"unclosed after dot", "SELECT ?x0 WHERE { ?x0 a b .", "at the end of the query: expected }"},
		{"short triple", "SELECT ?x0 WHERE { ?x0 a }", "expected a triple"},
		{"no dot", "SELECT ?x0 WHERE { ?x0 a b ?x0 c d }", "expected . or }"},
		{"bad filter", "SELECT ?x0 WHERE { FILTER ( ?x0 = M0 ) }", "expected FILTER ( a != b )"},
		{"empty body", "SELECT ?x0 WHERE { }", "no triple patterns"},
		{"trailing", "SELECT ?x0 WHERE { ?x0 a b } LIMIT 1", "data after the closing }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSPARQL(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want %q", err, tc.msg)
			}
		})
	}
}

// A long chain of variables is refused, not a deep recursion.
func TestParseSPARQLDeep(t *testing.T) {
	var b strings.Builder
	b.WriteString("SELECT ?x0 WHERE { ")
	for i := 0; i < 2*maxDepth; i++ {
		if i > 0 {
			b.WriteString(" . ")
		}
		b.WriteString("?v" + strings.Repeat("a", i) + " p ?v" + strings.Repeat("a", i+1))
	}
	b.WriteString(" }")
	if _, err := ParseSPARQL(b.String()); err == nil || !strings.Contains(err.Error(), "deeper than") {
		t.Errorf("error %v, want one on depth", err)
	}
}

func TestRecordTreeSPARQL(t *testing.T) {
	r := &data.Record{ID: "r", Output: "SELECT DISTINCT ?x0 WHERE { ?x0 a film.film }"}
	for _, kind := range []TreeKind{TreeSPARQL, TreeAuto} {
		t.Run(string(kind), func(t *testing.T) {
			tr, err := RecordTree(r, kind)
			if err != nil || tr.String() != "distinct(?x(a(film.film)))" {
				t.Errorf("tree %v, error %v", tr, err)
			}
		})
	}
	if _, err := RecordTree(&data.Record{ID: "r", Output: "SELECT"}, TreeSPARQL); err == nil || !strings.HasPrefix(err.Error(), "output: ") {
		t.Errorf("error %v, want one naming the output", err)
	}
}

// FuzzParseSPARQL checks the parser never panics and that a tree it
// returns has labels and at most two nodes per constraint plus one per
// part and the root.
func FuzzParseSPARQL(f *testing.F) {
	for _, s := range []string{
		"SELECT count(*) WHERE {\n?x0 ns:film.editor.film M0 .\n?x0 ns:people.person.gender ns:m.02zsn\n}",
		"SELECT DISTINCT ?x0 WHERE { ?x0 a film.film . FILTER ( ?x0 != M0 ) . M1 p ?x0 }",
		"SELECT count ( * ) WHERE { M0 a b . M1 a c }", "SELECT ?x WHERE { ?x p ?x }",
		"SELECT", "SELECT ?x0 WHERE { } }", "{ . } ( ) FILTER !=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseSPARQL(s)
		if err != nil {
			return
		}
		nodes := 0
		tr.Walk(func(n *data.Tree) {
			nodes++
			if n.Label == "" {
				t.Fatalf("empty label in %s (from %q)", tr, s)
			}
		})
		if limit := 3*len(strings.Fields(s)) + 1; nodes > limit {
			t.Fatalf("%d nodes from %d tokens (%q)", nodes, len(strings.Fields(s)), s)
		}
	})
}
