package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"

	"compbench/data"
	"compbench/progress"
)

// Config is one generated benchmark of the scan or robustfill domain.
type Config struct {
	// Domain is "scan" or "robustfill".
	Domain string
	// Task is the generalization task (Shi et al. §2), or None.
	Task Task
	// Train, Dev, Test and Finetune are the example counts of the four
	// files; Train and Test must be positive, Dev and Finetune may be 0
	// (the file is then written empty, so a folder always holds all four).
	Train, Dev, Test, Finetune int
	// Seed determines every random choice; each file draws from its own
	// stream, data.SubRand(Seed, streamName(file)).
	Seed uint64
	// Out is the output folder.
	Out string
	// Force allows replacing existing files.
	Force bool
}

// DefaultConfig is "compbench gen"'s: Shi et al.'s file sizes scaled to
// 10,000 training examples, no task.
func DefaultConfig() Config {
	return Config{Domain: "scan", Task: None, Train: 10000, Dev: 1000, Test: 1000, Finetune: 40}
}

// genFile is one output file and its example count.
type genFile struct {
	split FileSplit
	n     int
}

func (c Config) files() []genFile {
	return []genFile{{FileTrain, c.Train}, {FileDev, c.Dev}, {FileTest, c.Test}, {FileFinetune, c.Finetune}}
}

func (c Config) path(f FileSplit) string {
	return filepath.Join(c.Out, string(f)+".jsonl")
}

// FileStats summarises one generated file.
type FileStats struct {
	n, parts, outTokens int
	samples             []data.Record
}

// Generate writes the four files of c through one OutputSet, all or
// nothing, with a progress bar on status (nil: none).
func Generate(ctx context.Context, c Config, s Sampler, status io.Writer) ([]FileStats, error) {
	files := c.files()
	total := 0
	for _, f := range files {
		if err := data.CheckFree(c.path(f.split), c.Force); err != nil {
			return nil, err
		}
		total += f.n
	}
	set := data.NewOutputSet(c.Force)
	defer set.Abort() // no-op after Commit
	bar := progress.New(status, "gen "+c.Domain+" "+string(c.Task), int64(total))
	defer bar.Finish()
	stats := make([]FileStats, len(files))
	for k, f := range files {
		w, err := set.Create(c.path(f.split))
		if err != nil {
			return nil, err
		}
		pipe := newEncodePipe(w)
		err = genFileTo(ctx, c, s, f, pipe, &stats[k], bar)
		if cerr := pipe.Close(); cerr != nil {
			err = fmt.Errorf("write %s: %w", c.path(f.split), cerr)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := set.Commit(); err != nil {
		return nil, err
	}
	return stats, nil
}

// streamName names a file's random stream. The dev file keeps the stream
// of its former name, valid.jsonl, so a seed generates the same examples
// as before the rename.
func streamName(f FileSplit) string {
	if f == FileDev {
		return "valid"
	}
	return string(f)
}

// genFileTo draws the examples of one file and queues them on pipe.
func genFileTo(ctx context.Context, c Config, s Sampler, f genFile, pipe *encodePipe, st *FileStats, bar *progress.Bar) error {
	rng := data.SubRand(c.Seed, streamName(f.split))
	var drawn [2]int // examples drawn so far per distribution
	for i := 0; i < f.n; i++ {
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
			bar.Add(4096)
		}
		d := DistOf(f.split, i)
		rec, err := s.Sample(rng, d, drawn[d])
		if err != nil {
			return fmt.Errorf("%s example %d: %w", f.split, i+1, err)
		}
		drawn[d]++
		rec.ID = fmt.Sprintf("%s-%06d", f.split, i+1)
		st.add(&rec)
		if err := pipe.Add(&rec); err != nil {
			return err
		}
	}
	bar.Add(int64(f.n % 4096))
	return nil
}

// encodePipe encodes and writes records on a second goroutine, so sampling
// runs on one core while JSON encoding and disk writes run on the other.
// Records travel in batches; order is kept, so output stays deterministic.
type encodePipe struct {
	batch  []data.Record
	full   chan []data.Record
	free   chan []data.Record
	done   chan error
	failed atomic.Bool
}

const pipeBatch = 512

// errPipe stops generation after a write failed; Close returns the cause.
var errPipe = errors.New("write failed")

func newEncodePipe(w io.Writer) *encodePipe {
	// Three batches circulate; free can hold all of them, so the encoder
	// never blocks returning one.
	p := &encodePipe{full: make(chan []data.Record, 2), free: make(chan []data.Record, 3), done: make(chan error, 1)}
	for i := 0; i < 2; i++ {
		p.free <- make([]data.Record, 0, pipeBatch)
	}
	p.batch = make([]data.Record, 0, pipeBatch)
	go func() {
		enc := data.NewEncoder(w)
		var err error
		for b := range p.full {
			for i := 0; i < len(b) && err == nil; i++ {
				if err = enc.Encode(&b[i]); err != nil {
					p.failed.Store(true)
				}
			}
			clear(b)
			p.free <- b[:0]
		}
		p.done <- err
	}()
	return p
}

// Add queues one record for encoding.
func (p *encodePipe) Add(rec *data.Record) error {
	p.batch = append(p.batch, *rec)
	if len(p.batch) == pipeBatch {
		if p.failed.Load() {
			return errPipe
		}
		p.full <- p.batch
		p.batch = <-p.free
	}
	return nil
}

// Close encodes what is queued, stops the goroutine and reports the first
// write error.
func (p *encodePipe) Close() error {
	if len(p.batch) > 0 {
		p.full <- p.batch
	}
	close(p.full)
	return <-p.done
}

func (st *FileStats) add(rec *data.Record) {
	st.n++
	st.parts += recordParts(rec)
	if rec.Output != "" {
		st.outTokens += strings.Count(rec.Output, " ") + 1
	}
	if len(st.samples) < 2 {
		st.samples = append(st.samples, *rec)
	}
}

// recordParts is the number of program parts: SCAN's parts, or the
// expressions of a RobustFill program.
func recordParts(rec *data.Record) int {
	if rec.Parts != nil || len(rec.Program) == 0 {
		return len(rec.Parts)
	}
	var exprs []json.RawMessage
	if json.Unmarshal(rec.Program, &exprs) != nil {
		return 0
	}
	return len(exprs)
}

// PrintSummary writes a table of the generated files (examples, mean
// parts, mean output tokens) and two examples of train and test.
func PrintSummary(w io.Writer, c Config, stats []FileStats) {
	fmt.Fprintf(w, "%s %s, seed %d -> %s\n", c.Domain, c.Task, c.Seed, c.Out)
	fmt.Fprintf(w, "%-15s %8s %10s %12s\n", "file", "examples", "mean parts", "mean output")
	for k, f := range c.files() {
		st := stats[k]
		mp, mo := 0.0, 0.0
		if st.n > 0 {
			mp, mo = float64(st.parts)/float64(st.n), float64(st.outTokens)/float64(st.n)
		}
		fmt.Fprintf(w, "%-15s %8d %10.2f %12.1f\n", string(f.split)+".jsonl", st.n, mp, mo)
	}
	for k, f := range c.files() {
		if f.split != FileTrain && f.split != FileTest {
			continue
		}
		for _, r := range stats[k].samples {
			fmt.Fprintf(w, "  %s: %s => %s\n", r.ID, clip(r.Input, 70), clip(r.Output, 70))
		}
	}
}

// clip shortens s to at most n bytes for display.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
