package lm

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"compbench/data"
	"compbench/engine"
	"compbench/models/gpt2"
)

var fixture struct {
	once sync.Once
	tok  *Tokenizer
	m    *gpt2.Engine
	err  error
}

// loadFixture loads the tiny model and tokenizer once per test binary; the
// model runs on the engine's CPU backend.
func loadFixture(t *testing.T) (*Tokenizer, *gpt2.Engine) {
	t.Helper()
	fixture.once.Do(func() {
		fixture.tok, fixture.err = LoadTokenizer(fixtureDir)
		var m *gpt2.Model
		if fixture.err == nil {
			m, fixture.err = gpt2.Load(fixtureDir)
		}
		if fixture.err == nil {
			fixture.m, fixture.err = gpt2.NewEngine(m, &engine.CPU{BLAS: true})
		}
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.tok, fixture.m
}

func TestScoreMatchesReference(t *testing.T) {
	tok, m := loadFixture(t)
	b, err := os.ReadFile(filepath.Join(fixtureDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Cases []struct {
			LogProbs []float64 `json:"logprobs"`
		} `json:"cases"`
	}
	json.Unmarshal(b, &exp)
	// Case 0 of the fixture is <|endoftext|>Hello world, this is a test.<|endoftext|>.
	recs := []data.Record{{ID: "a", Input: "Hello world, this is a test."}}
	cfg := DefaultScoreConfig()
	cfg.PerToken = true
	ex, _, err := EncodeRecords(tok, recs, cfg, nPositions)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{50256, 15496, 995, 11, 428, 318, 257, 1332, 13, 50256}
	if !reflect.DeepEqual(ex[0].Ids, want) || ex[0].First != 1 {
		t.Fatalf("encoded %v first %d, want %v first 1", ex[0].Ids, ex[0].First, want)
	}
	s, err := ScoreAll(context.Background(), m, ex, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, v := range exp.Cases[0].LogProbs {
		sum += v
	}
	if math.Abs(s[0].Score-sum) > 1e-3 || s[0].Tokens != 9 {
		t.Errorf("score %.6f over %d tokens, want %.6f over 9", s[0].Score, s[0].Tokens, sum)
	}
	if ppl := math.Exp(-sum / 9); math.Abs(s[0].PPL-ppl)/ppl > 1e-4 {
		t.Errorf("ppl %g, want %g", s[0].PPL, ppl)
	}
	for j, v := range exp.Cases[0].LogProbs {
		if math.Abs(s[0].TokenLogProbs[j]-v) > 1e-4 {
			t.Errorf("token %d: %.6f, want %.6f", j, s[0].TokenLogProbs[j], v)
		}
	}
}

// nPositions is the fixture's n_positions (its config.json).
const nPositions = 32

// TestBatchInvariance: padding must not change any score.
func TestBatchInvariance(t *testing.T) {
	tok, m := loadFixture(t)
	words := []string{"jump", "walk", "run", "look", "twice", "thrice", "and", "after", "left", "around"}
	var recs []data.Record
	for i := 0; i < 40; i++ {
		var w []string
		for k := 0; k <= i%9; k++ {
			w = append(w, words[(i*7+k*3)%len(words)])
		}
		recs = append(recs, data.Record{ID: fmt.Sprint(i), Input: strings.Join(w, " "), Output: "X"})
	}
	base := DefaultScoreConfig()
	base.Template = "command: {output} {query}"
	base.PerToken = true
	var ref []Score
	for _, batch := range []int{1, 32, 7} {
		cfg := base
		cfg.Batch = batch
		ex, _, err := EncodeRecords(tok, recs, cfg, nPositions)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ScoreAll(context.Background(), m, ex, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = s
			continue
		}
		for i := range s {
			if s[i].ID != ref[i].ID || s[i].Tokens != ref[i].Tokens || math.Abs(s[i].Score-ref[i].Score) > 1e-4 {
				t.Errorf("batch %d, record %s: %+v, batch 1 gave %+v", batch, s[i].ID, s[i], ref[i])
			}
		}
	}
}

func TestEncodeRecords(t *testing.T) {
	tok, _ := loadFixture(t)
	recs := []data.Record{{ID: "r", Input: "how many", Output: "SELECT", Extra: map[string]json.RawMessage{"db": json.RawMessage(`"cars"`)}}}
	tests := []struct {
		name     string
		template string
		field    string
		npos     int
		truncate bool
		wantIDs  string // the decoded prefix | query
		wantErr  string
	}{
		{"fine-tuning format", DefaultTemplate, "input", 64, false, "<|endoftext|>|how many<|endoftext|>", ""},
		{"prompt with space", "question: {query}", "input", 64, false, "question:| how many<|endoftext|>", ""},
		{"bare query", "{query}", "output", 64, false, "<|endoftext|>|SELECT<|endoftext|>", ""},
		{"extra field", "{db} {query}", "input", 64, false, "cars| how many<|endoftext|>", ""},
		{"missing field", "{nope} {query}", "input", 64, false, "", "no field"},
		{"query not last", "{query} ok", "input", 64, false, "", "at the end"},
		{"too long", "question: {query}", "input", 3, false, "", "--truncate"},
		{"truncated", "question: {query}", "input", 3, true, " how| many<|endoftext|>", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultScoreConfig()
			cfg.Template, cfg.Field, cfg.Truncate = tc.template, tc.field, tc.truncate
			ex, n, err := EncodeRecords(tok, recs, cfg, tc.npos)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e := ex[0]
			got := tok.Decode(e.Ids[:e.First]) + "|" + tok.Decode(e.Ids[e.First:])
			if got != tc.wantIDs {
				t.Errorf("got %q, want %q", got, tc.wantIDs)
			}
			if (n == 1) != tc.truncate {
				t.Errorf("truncated count %d", n)
			}
		})
	}
}
