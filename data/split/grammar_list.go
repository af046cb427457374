package split

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteGrammarList prints one line per candidate grammar split: its index,
// validity, part sizes, the non-terminal pair, the kind of U and what it
// holds out (the pair, the rule, or the size of U_comb), and why an invalid
// candidate is invalid.
func WriteGrammarList(w io.Writer, cands []GrammarCandidate) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "index\tvalid\ttrain\tdev\ttest\tl1\tl2\tkind\theld out\tnote")
	valid := 0
	for i := range cands {
		c := &cands[i]
		ok := "no"
		if c.Valid {
			ok = "yes"
			valid++
		}
		var what string
		switch c.Kind {
		case KindComb:
			what = fmt.Sprintf("%d pairs", len(c.Pairs))
		case KindPair:
			what = fmt.Sprintf("(%s, %s)", c.Pairs[0][0], c.Pairs[0][1])
		case KindRule:
			what = fmt.Sprintf("%s (%d pairs)", c.Rule, len(c.Pairs))
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n",
			c.Index, ok, c.NTrain, c.NDev, c.NTest, c.L1, c.L2, c.Kind, what, c.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d candidate splits, %d valid\n", len(cands), valid)
	return err
}
