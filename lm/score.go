package lm

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"compbench/data"
	"compbench/models/gpt2"
	"compbench/progress"
)

// ScoreConfig says what to score and how.
type ScoreConfig struct {
	// Field is the record field holding the query: "input" or "output" (or
	// any extra string field).
	Field string
	// Template is the prompt; see ParseTemplate.
	Template string
	// Batch is the number of examples per forward pass.
	Batch int
	// Truncate keeps the last n_positions tokens of a too-long example
	// instead of failing. Prefix tokens are dropped first.
	Truncate bool
	// PerToken keeps each query token's log-probability in the result.
	PerToken bool
}

// DefaultScoreConfig scores the input after <|endoftext|> in batches of 32.
func DefaultScoreConfig() ScoreConfig {
	return ScoreConfig{Field: "input", Template: DefaultTemplate, Batch: 32}
}

// Validate checks the settings.
func (c ScoreConfig) Validate() error {
	if c.Field == "" {
		return fmt.Errorf("score: empty query field")
	}
	if c.Batch < 1 {
		return fmt.Errorf("score: batch %d must be at least 1", c.Batch)
	}
	_, err := ParseTemplate(c.Template)
	return err
}

// Score is one example's result, written as a JSONL line.
type Score struct {
	// ID is the record id.
	ID string `json:"id"`
	// Score is the total log-probability of the query tokens and the final
	// end-of-text token given the prompt prefix (Godbole & Jia §3.1).
	Score float64 `json:"score"`
	// Tokens is the number of scored tokens (query tokens + end-of-text).
	Tokens int `json:"tokens"`
	// PPL is exp(-Score / Tokens).
	PPL float64 `json:"ppl"`
	// TokenLogProbs are the scored tokens' log-probabilities (--per-token).
	TokenLogProbs []float64 `json:"token_logprobs,omitempty"`
}

// Encoded is one example as token ids: Ids = prefix + query + end-of-text,
// and the tokens from First on are scored.
type Encoded struct {
	ID    string
	Ids   []int
	First int
}

// EncodeRecords renders and tokenizes every record. Decision: the prefix
// and the query are tokenized separately so that no BPE token straddles
// the boundary; a space that ends the prefix moves to the start of the
// query ("question: " + "how" gives ":" then " how", as GPT-2 would
// tokenize the joined text). Records longer than n_positions are an error
// unless truncate is set; the count of truncated records is returned.
func EncodeRecords(tok *Tokenizer, recs []data.Record, cfg ScoreConfig, nPositions int) ([]Encoded, int, error) {
	tpl, err := ParseTemplate(cfg.Template)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Encoded, len(recs))
	truncated := 0
	for i := range recs {
		r := &recs[i]
		prefix, err := tpl.Prefix(r)
		if err != nil {
			return nil, 0, err
		}
		query, err := Field(r, cfg.Field)
		if err != nil {
			return nil, 0, err
		}
		if strings.HasSuffix(prefix, " ") {
			prefix, query = prefix[:len(prefix)-1], " "+query
		}
		if cfg.Truncate {
			// Only the last nPositions tokens survive: tokenize no more
			// than what holds them (Tail).
			if prefix, err = tok.Tail(prefix, nPositions); err != nil {
				return nil, 0, fmt.Errorf("record %q: prompt: %w", r.ID, err)
			}
			if query, err = tok.Tail(query, nPositions); err != nil {
				return nil, 0, fmt.Errorf("record %q: %w", r.ID, err)
			}
		} else if n := tok.MinTokens(prefix) + tok.MinTokens(query) + 1; n > nPositions {
			// Refused before tokenizing megabytes (a long prompt field).
			return nil, 0, fmt.Errorf("record %q: at least %d tokens (%d bytes) exceed the model's n_positions %d (use --truncate to keep the last %d)",
				r.ID, n, len(prefix)+len(query), nPositions, nPositions)
		}
		p, err := tok.Encode(prefix)
		if err != nil {
			return nil, 0, fmt.Errorf("record %q: %w", r.ID, err)
		}
		q, err := tok.Encode(query)
		if err != nil {
			return nil, 0, fmt.Errorf("record %q: %w", r.ID, err)
		}
		if len(p) == 0 {
			// Without a prefix the first query token has no condition;
			// start from <|endoftext|> as GPT-2's own scoring does.
			p = []int{tok.EOS()}
		}
		ids := append(append(p, q...), tok.EOS())
		first := len(p)
		if len(ids) > nPositions {
			if !cfg.Truncate {
				return nil, 0, fmt.Errorf("record %q: %d tokens exceed the model's n_positions %d (use --truncate to keep the last %d)", r.ID, len(ids), nPositions, nPositions)
			}
			cut := len(ids) - nPositions
			ids = ids[cut:]
			// When the cut reaches the query, its first kept token becomes the
			// unscored context: every scored token needs one before it.
			first = max(first-cut, 1)
			truncated++
		}
		out[i] = Encoded{ID: r.ID, Ids: ids, First: first}
	}
	return out, truncated, nil
}

// ScoreAll scores examples with m in batches of similar length (sorted by
// length, so padding is small; the order of the results is that of ex).
// bar may be nil.
func ScoreAll(ctx context.Context, m *gpt2.Engine, ex []Encoded, cfg ScoreConfig, bar *progress.Bar) ([]Score, error) {
	order := make([]int, len(ex))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(ex[order[a]].Ids) < len(ex[order[b]].Ids) })
	out := make([]Score, len(ex))
	start := time.Now()
	tokens := 0
	for lo := 0; lo < len(order); lo += cfg.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+cfg.Batch, len(order))
		seqs := make([][]int, hi-lo)
		first := make([]int, hi-lo)
		for k, i := range order[lo:hi] {
			seqs[k], first[k] = ex[i].Ids, ex[i].First
		}
		lps, err := m.TokenLogProbs(seqs, first, min(cfg.Batch, len(order)))
		if err != nil {
			return nil, fmt.Errorf("score batch from %q: %w", ex[order[lo]].ID, err)
		}
		for k, i := range order[lo:hi] {
			s := Score{ID: ex[i].ID, Tokens: len(lps[k])}
			for _, v := range lps[k] {
				s.Score += v
			}
			s.PPL = math.Exp(-s.Score / float64(s.Tokens))
			if cfg.PerToken {
				s.TokenLogProbs = lps[k]
			}
			out[i] = s
			tokens += len(seqs[k])
		}
		if bar != nil {
			bar.Add(int64(hi - lo))
			bar.SetExtra(fmt.Sprintf("%.0f tokens/s", float64(tokens)/time.Since(start).Seconds()))
		}
	}
	return out, nil
}
