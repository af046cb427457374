package models

import (
	"testing"

	"compbench/data"
)

func TestCopyIDs(t *testing.T) {
	v := tinyVocab() // source a b c x, target a b y
	V := len(v.Target)
	for _, tc := range []struct {
		name   string
		rec    data.Record
		sep    bool
		maxSrc int
		want   []int
		unk    int
	}{
		{"target token kept", data.Record{Input: "a x", Output: "a"}, false, 8, []int{4, EOSID}, 0},
		{"copied from first position", data.Record{Input: "c x x", Output: "x c"}, false, 8, []int{V + 1, V + 0, EOSID}, 0},
		{"unknown everywhere", data.Record{Input: "a", Output: "zz"}, false, 8, []int{UnkID, EOSID}, 1},
		{"unseen source token", data.Record{Input: "a qq", Output: "qq"}, false, 8, []int{V + 1, EOSID}, 0},
		{"beyond max source", data.Record{Input: "a b x", Output: "x"}, false, 2, []int{UnkID, EOSID}, 1},
		{"with separators", data.Record{Input: "x c", Output: "x c", Parts: []string{"x", "c"}}, true, 8,
			[]int{V + 0, SepID, V + 1, SepID, EOSID}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rec.ID = "r"
			ex, st, err := Encode(v, []data.Record{tc.rec}, EncodeOptions{Separators: tc.sep, MaxSrc: tc.maxSrc, MaxTgt: 16, Copy: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := ex[0].Tgt; !equalInts(got, tc.want) {
				t.Errorf("target ids %v, want %v", got, tc.want)
			}
			if st.UnknownTgt != tc.unk {
				t.Errorf("%d unknown, want %d", st.UnknownTgt, tc.unk)
			}
		})
	}
}

func TestDetokSource(t *testing.T) {
	v := tinyVocab()
	V := len(v.Target)
	src := []string{"c", "qq"}
	for _, tc := range []struct {
		name string
		ids  []int
		want string
	}{
		{"target ids", []int{4, 6}, "a y"},
		{"copied", []int{4, V + 1, V + 0}, "a qq c"},
		{"stops at EOS", []int{V + 1, EOSID, 4}, "qq"},
		{"position beyond the source dropped", []int{V + 5, 4}, "a"},
		{"separators dropped", []int{4, SepID, 5}, "a b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := v.DetokSource(tc.ids, src); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tinyVocab has source tokens a b c x and target tokens a b y: x is only
// copyable, y only generable.
func tinyVocab() *Vocab {
	return NewVocab(append(append([]string(nil), specials...), "a", "b", "c", "x"),
		append(append([]string(nil), specials...), "a", "b", "y"))
}
