package eval

import "testing"

func TestSPARQL(t *testing.T) {
	a := "SELECT DISTINCT ?x0 WHERE { ?x0 a people.person . ?x0 influenced_by ?x1 . ?x1 a film.director . FILTER ( ?x0 != ?x1 ) }"
	for _, tc := range []struct {
		name, b string
		same    bool
	}{
		{"identical", a, true},
		{"clause order and names", "SELECT DISTINCT ?x1 WHERE { ?x0 a film.director . FILTER ( ?x1 != ?x0 ) . ?x1 influenced_by ?x0 . ?x1 a people.person }", true},
		{"other names", "SELECT DISTINCT ?a WHERE { ?b a film.director . ?a a people.person . ?a influenced_by ?b . FILTER ( ?a != ?b ) }", true},
		{"repeated clause", "SELECT DISTINCT ?x0 WHERE { ?x0 a people.person . ?x0 a people.person . ?x0 influenced_by ?x1 . ?x1 a film.director . FILTER ( ?x0 != ?x1 ) }", true},
		{"roles swapped", "SELECT DISTINCT ?x0 WHERE { ?x1 a people.person . ?x0 influenced_by ?x1 . ?x1 a film.director . FILTER ( ?x0 != ?x1 ) }", false},
		{"head differs", "SELECT DISTINCT ?x1 WHERE { ?x0 a people.person . ?x0 influenced_by ?x1 . ?x1 a film.director . FILTER ( ?x0 != ?x1 ) }", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			na, nb := NormalizeSPARQL(a), NormalizeSPARQL(tc.b)
			if (na == nb) != tc.same {
				t.Fatalf("\n%s\n%s", na, nb)
			}
		})
	}
	if got, want := NormalizeSPARQL("SELECT DISTINCT ?y WHERE { ?y p M0 . ?y a M1 }"), "SELECT DISTINCT ?x0 WHERE { ?x0 a M1 . ?x0 p M0 }"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if got := NormalizeSPARQL("  not  sparql "); got != "not sparql" {
		t.Fatalf("non-query: %q", got)
	}
}

func TestSPARQLManyVariables(t *testing.T) {
	// 8 variables: the fixed-point renumbering must still see through
	// renaming and clause order of a chain anchored at the head.
	a := "SELECT DISTINCT ?a WHERE { ?a r ?b . ?b r ?c . ?c r ?d . ?d r ?e . ?e r ?f . ?f r ?g . ?g r ?h . ?h s M0 }"
	b := "SELECT DISTINCT ?q WHERE { ?k s M0 . ?p r ?k . ?q r ?z . ?z r ?y . ?y r ?w . ?v r ?u . ?w r ?v . ?u r ?p }"
	if na, nb := NormalizeSPARQL(a), NormalizeSPARQL(b); na != nb {
		t.Fatalf("\n%s\n%s", na, nb)
	}
}

func TestSortConjuncts(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		same       bool
	}{
		{"prefix", "and(exists(find(dog)), exists(find(cat)))", "and ( exists ( find ( cat ) ) , exists ( find ( dog ) ) )", true},
		{"nested", "or(b, and(d, c))", "or(and(c, d), b)", true},
		{"other functions keep order", "eq(a, b)", "eq(b, a)", false},
		{"infix", "a && b || c", "c || b && a", true},
		{"infix precedence", "a && b || c", "a && c || b", false},
		{"infix in group", "filter ( Person ) ( x >= 8 && y == 2 )", "filter ( Person ) ( y == 2 && x >= 8 )", true},
		{"unbalanced: white space only", "and(b, a", "and(b,  a", true},
		{"unbalanced: no sorting", "and(b, a", "and(a, b", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SortConjuncts(tc.a) == SortConjuncts(tc.b); got != tc.same {
				t.Fatalf("%q vs %q", SortConjuncts(tc.a), SortConjuncts(tc.b))
			}
		})
	}
}

func TestOrderFilters(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		same       bool
	}{
		{"sexpr", "( filter ( filter ( getProperty x !type ) posting_date = 2004 ) size = 800 )",
			"( filter ( filter ( getProperty x !type ) size = 800 ) posting_date = 2004 )", true},
		{"call", "( call filter ( call filter X ( string a ) ) ( string b ) )",
			"( call filter ( call filter X ( string b ) ) ( string a ) )", true},
		{"prefix", "filter(filter(find(dog), white), big)", "filter(filter(find(dog), big), white)", true},
		{"different base", "( filter ( filter X a ) b )", "( filter ( filter Y b ) a )", false},
		{"single filter", "( filter X a )", "( filter X a )", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OrderFilters(tc.a) == OrderFilters(tc.b); got != tc.same {
				t.Fatalf("%q vs %q", OrderFilters(tc.a), OrderFilters(tc.b))
			}
		})
	}
}
