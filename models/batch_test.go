package models

import (
	"slices"
	"testing"

	"compbench/data"
)

func TestBatches(t *testing.T) {
	var ex []Example
	for i := 0; i < 50; i++ {
		ex = append(ex, Example{ID: string(rune('a' + i%26)), Src: make([]int, 1+i%9), Tgt: make([]int, 1+(i*7)%30)})
	}
	for _, c := range []struct {
		name      string
		b, tokens int
	}{{"rows", 8, 0}, {"tokens", 8, 64}} {
		t.Run(c.name, func(t *testing.T) {
			a := Batches(ex, c.b, c.tokens, 4, data.NewRand(3))
			seen := map[*Example]bool{}
			for _, bt := range a {
				if len(bt.Rows) > bt.B || bt.B > c.b || (c.tokens > 0 && bt.B > max(1, c.tokens/bt.T)) {
					t.Errorf("batch of %d rows, B %d, T %d", len(bt.Rows), bt.B, bt.T)
				}
				for _, e := range bt.Rows {
					if seen[e] {
						t.Errorf("example twice")
					}
					seen[e] = true
					if len(e.Tgt) > bt.T || len(e.Src) > bt.S || bt.T%4 != 0 || bt.S%4 != 0 {
						t.Errorf("example %d/%d in batch %dx%d", len(e.Src), len(e.Tgt), bt.S, bt.T)
					}
				}
			}
			if len(seen) != len(ex) {
				t.Errorf("%d of %d examples batched", len(seen), len(ex))
			}
			b := Batches(ex, c.b, c.tokens, 4, data.NewRand(3))
			for i := range a {
				if a[i].Rows[0] != b[i].Rows[0] {
					t.Fatal("same seed, different batch order")
				}
			}
		})
	}
}

func TestEncodeSeparators(t *testing.T) {
	recs := []data.Record{{ID: "a", Input: "jump and walk", Output: "JUMP WALK", Parts: []string{"JUMP", "WALK"}}}
	v := BuildVocab(recs)
	ex, _, err := Encode(v, recs, EncodeOptions{Separators: true, MaxSrc: 10, MaxTgt: 10})
	if err != nil {
		t.Fatal(err)
	}
	j, w := v.tgt["JUMP"], v.tgt["WALK"]
	want := []int{j, SepID, w, SepID, EOSID}
	if len(ex[0].Tgt) != len(want) {
		t.Fatalf("target %v, want %v", ex[0].Tgt, want)
	}
	for i := range want {
		if ex[0].Tgt[i] != want[i] {
			t.Fatalf("target %v, want %v", ex[0].Tgt, want)
		}
	}
	bt := MakeBatch([]*Example{&ex[0]}, 1, 8)
	if bt.DecIn[0] != StartID || bt.DecIn[1] != j || bt.DecIn[2] != SepID || v.Detok(ex[0].Tgt) != "JUMP WALK" {
		t.Errorf("decoder input %v, detok %q", bt.DecIn, v.Detok(ex[0].Tgt))
	}
}

func TestSyntheticBatch(t *testing.T) {
	for _, c := range []struct {
		name              string
		n, s, tl, v       int
		wantS, wantT, tok int
	}{
		{"benchmark shape", 64, 16, 48, 24, 16, 48, 64 * 48},
		{"padded", 3, 5, 9, 10, 8, 16, 27},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := SyntheticBatch(c.n, c.s, c.tl, c.v)
			if b.B != c.n || b.S != c.wantS || b.T != c.wantT || b.Tokens != c.tok {
				t.Fatalf("shape %dx%d->%d, %d tokens; want %dx%d->%d, %d", b.B, b.S, b.T, b.Tokens, c.n, c.wantS, c.wantT, c.tok)
			}
			for i, r := range b.Rows {
				if r.Tgt[len(r.Tgt)-1] != EOSID {
					t.Fatalf("row %d does not end with EOS", i)
				}
				for _, id := range append(r.Src, r.Tgt[:len(r.Tgt)-1]...) {
					if id < 4 || id >= c.v {
						t.Fatalf("row %d: id %d outside [4, %d)", i, id, c.v)
					}
				}
			}
			if again := SyntheticBatch(c.n, c.s, c.tl, c.v); !slices.Equal(again.Src, b.Src) || !slices.Equal(again.Tgt, b.Tgt) {
				t.Fatal("not deterministic")
			}
		})
	}
}

// TestEncodeTruncation: Encode counts what its limits cut from each side,
// and Truncation says it in one line with the limits that keep all whole.
func TestEncodeTruncation(t *testing.T) {
	recs := []data.Record{
		{ID: "short", Input: "a b", Output: "X"},
		{ID: "src", Input: "a b c d e f", Output: "X"},            // 6 source tokens
		{ID: "both", Input: "a b c d e f g h", Output: "X Y Z W"}, // 8 source, 5 target
	}
	v := BuildVocab(recs)
	o := EncodeOptions{MaxSrc: 4, MaxTgt: 3}
	ex, st, err := Encode(v, recs, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex[2].Src) != 4 || len(ex[2].Tgt) != 3 || ex[2].Tgt[2] != EOSID {
		t.Errorf("cut example: source %v, target %v", ex[2].Src, ex[2].Tgt)
	}
	cases := []struct {
		name string
		got  Cut
		want Cut
	}{
		{"sources", st.SrcCut, Cut{N: 2, Max: 4, Sum: 6}},
		{"targets", st.TgtCut, Cut{N: 1, Max: 2, Sum: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %+v, want %+v", c.got, c.want)
			}
		})
	}
	t.Run("note", func(t *testing.T) {
		want := "2 of 3 examples truncated; sources: 2 longer than 4 tokens, cut by up to 4 (mean 3.0), --max-src 8 keeps them whole; " +
			"targets: 1 longer than 3 tokens, cut by up to 2 (mean 2.0), --max-tgt 5 keeps them whole"
		if got := st.Truncation(len(recs), o); st.Truncated != 2 || got != want {
			t.Errorf("truncated %d, note\n%s\nwant\n%s", st.Truncated, got, want)
		}
		if got := (EncodeStats{}).Truncation(3, o); got != "" {
			t.Errorf("nothing cut: %q", got)
		}
	})
}
