package sweep

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"compbench/train"
)

// Running is --status's state of a cell whose lock a process holds.
const Running State = "running"

// PrintStatus prints each cell's state from its folder (running when a
// process holds its lock) and, where Slurm still knows the array task,
// squeue's state, then the count of each state.
func PrintStatus(ctx context.Context, s *Spec, out string, w io.Writer) error {
	q := Queue(ctx, out)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tstate\tslurm")
	counts := map[State]int{}
	for _, c := range s.Cells() {
		st := StateOf(c.Dir(out))
		shown := string(st)
		if h, held := train.LockHolder(c.Dir(out)); held && st != Finished {
			// A process holds the cell: it runs, whatever its files say.
			st, shown = Running, fmt.Sprintf("%s (%s)", Running, h)
		}
		counts[st]++
		slurm := q[c.Index]
		if slurm == "" {
			slurm = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, shown, slurm)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d finished, %d running, %d started, %d failed, %d pending\n",
		counts[Finished], counts[Running], counts[Started], counts[Failed], counts[Pending])
	return err
}
