package main

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
	"compbench/data/tasks"
	"compbench/progress"
)

// genConfig is one "compbench gen" run for the scan and robustfill domains.
type genConfig struct {
	// Domain is "scan" or "robustfill".
	Domain string
	// Task is the generalization task (Shi et al. §2), or none.
	Task tasks.Task
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

func defaultGenConfig() genConfig {
	return genConfig{Domain: "scan", Task: tasks.None, Train: 10000, Dev: 1000, Test: 1000, Finetune: 40}
}

// Validate checks the counts and the output folder name.
func (c genConfig) Validate() error {
	for _, f := range []struct {
		name string
		n    int
		min  int
	}{{"train-size", c.Train, 1}, {"dev-size", c.Dev, 0}, {"test-size", c.Test, 1}, {"finetune-size", c.Finetune, 0}} {
		if f.n < f.min {
			return fmt.Errorf("--%s must be at least %d, got %d", f.name, f.min, f.n)
		}
		if f.n > tasks.MaxExamples {
			return fmt.Errorf("--%s %d: at most %d examples", f.name, f.n, tasks.MaxExamples)
		}
	}
	if c.Out == "" {
		return fmt.Errorf("--out is required")
	}
	return nil
}

// genFile is one output file and its example count.
type genFile struct {
	split tasks.FileSplit
	n     int
}

func (c genConfig) files() []genFile {
	return []genFile{{tasks.FileTrain, c.Train}, {tasks.FileDev, c.Dev},
		{tasks.FileTest, c.Test}, {tasks.FileFinetune, c.Finetune}}
}

func (c genConfig) path(f tasks.FileSplit) string {
	return filepath.Join(c.Out, string(f)+".jsonl")
}

// runGen implements "compbench gen".
func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// scfg has flags of its own; it is dispatched before gen's flags parse.
	if len(args) > 0 && args[0] == "scfg" {
		return runGenSCFG(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "scan-original" {
		return runGenSCANOriginal(ctx, args[1:], stdout, stderr)
	}
	c := defaultGenConfig()
	fs := newFlags("gen", "gen scan|robustfill [flags] --out DIR   (or: gen scfg --help, gen scan-original --help)", `
Generate a benchmark of Shi et al.: SCAN commands or RobustFill programs for
one compositional-generalization task. Writes DIR/train.jsonl and
DIR/dev.jsonl (training distribution), DIR/test.jsonl (test distribution)
and DIR/finetune.jsonl (alternating training and test distribution), all or
nothing. The same seed gives the same bytes.
Tasks: `+taskNames()+`.`, stderr)
	task := fs.String("task", string(c.Task), "generalization task")
	fs.IntVar(&c.Train, "train-size", c.Train, "training examples (> 0)")
	fs.IntVar(&c.Dev, "dev-size", c.Dev, "dev examples, training distribution (>= 0)")
	fs.IntVar(&c.Test, "test-size", c.Test, "test examples, test distribution (> 0)")
	fs.IntVar(&c.Finetune, "finetune-size", c.Finetune, "few-shot fine-tuning examples, alternating distributions (>= 0)")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
	fs.StringVar(&c.Out, "out", c.Out, "output folder (required)")
	fs.BoolVar(&c.Force, "force", c.Force, "replace existing files in the output folder")
	if err := checkRenamed("gen", args, genRenamed); err != nil {
		return err
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("gen: want one domain (scan, robustfill or scfg), got %d arguments", len(pos))
	}
	c.Domain = pos[0]
	if c.Task, err = tasks.Parse(*task); err != nil {
		return usagef("gen: %v", err)
	}
	if err := c.Validate(); err != nil {
		return usagef("gen: %v", err)
	}
	var s tasks.Sampler
	switch c.Domain {
	case "scan":
		s, err = tasks.NewSCAN(c.Task)
	case "robustfill":
		s, err = tasks.NewRobustFill(c.Task)
	case "scfg":
		// Another generator with its own flags, dispatched above.
		return usagef("gen: put the domain first for scfg: compbench gen scfg --grammar FILE ...")
	default:
		return usagef("gen: unknown domain %q (want scan, robustfill or scfg)", c.Domain)
	}
	if err != nil {
		return fmt.Errorf("gen %s: %w", c.Domain, err)
	}
	stats, err := generate(ctx, c, s, stderr)
	if err != nil {
		return err
	}
	printGenSummary(stdout, c, stats)
	return nil
}

// genRenamed are gen's old count flags: --train and --test name files in
// train, predict and split, so counts are --X-size everywhere (as in run).
var genRenamed = []renamedFlag{
	{"train", "train-size", "a count; --train names a file elsewhere"},
	{"valid", "dev-size", "a count, written to dev.jsonl"},
	{"test", "test-size", "a count; --test names a file elsewhere"},
	{"finetune", "finetune-size", "a count"},
}

func taskNames() string {
	names := make([]string, len(tasks.All))
	for i, t := range tasks.All {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// fileStats summarises one generated file.
type fileStats struct {
	n, parts, outTokens int
	samples             []data.Record
}

// generate writes the four files through one OutputSet.
func generate(ctx context.Context, c genConfig, s tasks.Sampler, stderr io.Writer) ([]fileStats, error) {
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
	bar := progress.New(stderr, "gen "+c.Domain+" "+string(c.Task), int64(total))
	defer bar.Finish()
	stats := make([]fileStats, len(files))
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
func streamName(f tasks.FileSplit) string {
	if f == tasks.FileDev {
		return "valid"
	}
	return string(f)
}

// genFileTo draws the examples of one file and queues them on pipe.
func genFileTo(ctx context.Context, c genConfig, s tasks.Sampler, f genFile, pipe *encodePipe, st *fileStats, bar *progress.Bar) error {
	rng := data.SubRand(c.Seed, streamName(f.split))
	var drawn [2]int // examples drawn so far per distribution
	for i := 0; i < f.n; i++ {
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
			bar.Add(4096)
		}
		d := tasks.DistOf(f.split, i)
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

func (st *fileStats) add(rec *data.Record) {
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

func printGenSummary(w io.Writer, c genConfig, stats []fileStats) {
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
		if f.split != tasks.FileTrain && f.split != tasks.FileTest {
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
