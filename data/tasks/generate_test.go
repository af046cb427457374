package tasks

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
)

// failingGenSampler fails after ok examples.
type failingGenSampler struct{ ok, n int }

func (f *failingGenSampler) Sample(rng *rand.Rand, d Dist, i int) (data.Record, error) {
	f.n++
	if f.n > f.ok {
		return data.Record{}, errors.New("no example fits")
	}
	return data.Record{Input: "walk", Output: "WALK"}, nil
}

func TestGenSamplerFailureLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	c := DefaultConfig()
	c.Out, c.Train, c.Dev, c.Test, c.Finetune = dir, 10, 10, 10, 0
	_, err := Generate(context.Background(), c, &failingGenSampler{ok: 25}, nil)
	if err == nil || !strings.Contains(err.Error(), "test example 6: no example fits") {
		t.Fatalf("error %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("%d files left after a failure", len(entries))
	}
}

func TestGenCancelled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := DefaultConfig()
	c.Out = dir
	if _, err := Generate(ctx, c, &failingGenSampler{ok: 1 << 30}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want cancellation", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("%d files left after cancellation", len(entries))
	}
}

// BenchmarkGenSCAN runs the generation of "compbench gen scan" (sampling, encoding,
// writing to disk) for 100,000 examples of the none task. The target is
// 1,000,000 examples in under 10 s on two cores; the s/1M metric extrapolates.
func BenchmarkGenSCAN(b *testing.B) {
	const n = 100000
	s, err := NewSCAN(None)
	if err != nil {
		b.Fatal(err)
	}
	c := DefaultConfig()
	c.Out, c.Train, c.Dev, c.Test, c.Finetune, c.Force = b.TempDir(), n, 0, 1, 0, true
	for b.Loop() {
		if _, err := Generate(context.Background(), c, s, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e6/n, "s/1M")
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

func TestEncodePipeWriteError(t *testing.T) {
	p := newEncodePipe(failWriter{})
	rec := data.Record{ID: "x", Input: "walk", Output: "WALK"}
	var err error
	for i := 0; i < 100*pipeBatch && err == nil; i++ {
		err = p.Add(&rec)
	}
	if !errors.Is(err, errPipe) {
		t.Errorf("Add error %v, want the pipe to stop", err)
	}
	if err := p.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close error %v, want the write error", err)
	}
}

func TestEncodePipeKeepsOrder(t *testing.T) {
	var b bytes.Buffer
	p := newEncodePipe(&b)
	var want bytes.Buffer
	enc := data.NewEncoder(&want)
	for i := 0; i < 3*pipeBatch+7; i++ {
		rec := data.Record{ID: strings.Repeat("i", 1+i%5) + string(rune('a'+i%26)), Input: "walk", Output: "WALK"}
		enc.Encode(&rec)
		if err := p.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want.Bytes()) {
		t.Error("the pipe changed the records or their order")
	}
}
