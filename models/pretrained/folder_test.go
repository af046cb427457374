package pretrained

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenFixtures reads the three tiny checkpoints of
// scripts/seq2seq_reference.py.
func TestOpenFixtures(t *testing.T) {
	cases := []struct {
		dir       string
		typ       string
		ff        string
		tied      bool
		tokenizer int
	}{
		{"t5-tiny", TypeT5, "relu", true, 80},
		{"t5v11-tiny", TypeT5, "gated-gelu", false, 80},
		{"bart-tiny", TypeBART, "relu", true, 276}, // ff: the T5 default, unused by BART
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			f, err := Open(filepath.Join("testdata", tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			c := f.Config
			if c.ModelType != tc.typ || c.FeedForward != tc.ff || c.TieEmbeddings != tc.tied || f.TokenizerSize != tc.tokenizer {
				t.Errorf("model_type %q, feed_forward_proj %q, tied %v, tokenizer %d; want %q, %q, %v, %d",
					c.ModelType, c.FeedForward, c.TieEmbeddings, f.TokenizerSize, tc.typ, tc.ff, tc.tied, tc.tokenizer)
			}
			if tc.typ == TypeT5 && (c.NumDecoderLayers != 2 || c.DecoderStartID != 0 || c.RelBuckets != 8) {
				t.Errorf("T5 decoder layers %d, decoder start %d, buckets %d", c.NumDecoderLayers, c.DecoderStartID, c.RelBuckets)
			}
			if tc.typ == TypeBART && (c.DecoderStartID != 2 || c.MaxPositions != 32) {
				t.Errorf("BART decoder start %d, positions %d", c.DecoderStartID, c.MaxPositions)
			}
		})
	}
}

// copyFixture copies testdata/name into a temporary folder.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src, dst := filepath.Join("testdata", name), t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// editJSON rewrites the JSON object in dir/file with edit.
func editJSON(t *testing.T, dir, file string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func setKey(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }

// TestOpenBadInput: each broken folder fails with one line naming the file
// and what is wrong.
func TestOpenBadInput(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		spoil   func(t *testing.T, dir string)
		want    string
	}{
		{"no config", "t5-tiny", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "config.json")) }, "no config.json"},
		{"no weights", "bart-tiny", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "model.safetensors")) }, "no model.safetensors"},
		{"only pytorch_model.bin", "bart-tiny", func(t *testing.T, d string) {
			os.Rename(filepath.Join(d, "model.safetensors"), filepath.Join(d, "pytorch_model.bin"))
		}, "only pytorch_model.bin"},
		{"no tokenizer.json", "t5-tiny", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "tokenizer.json")) }, "no tokenizer.json"},
		{"no merges", "bart-tiny", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "merges.txt")) }, "no merges.txt"},
		{"unknown model_type", "t5-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("model_type", "gpt2")) },
			`model_type "gpt2" is not an encoder-decoder`},
		{"no model_type", "bart-tiny", func(t *testing.T, d string) {
			editJSON(t, d, "config.json", func(m map[string]any) { delete(m, "model_type") })
		}, "no model_type"},
		{"heads disagree with tensors", "t5-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("num_heads", 4)) },
			"config.json implies [16 16]"},
		{"more layers than tensors", "t5v11-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("num_layers", 3)) },
			`tensors missing, e.g. "encoder.block.2.`},
		{"fewer layers than tensors", "bart-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("decoder_layers", 1)) },
			`unexpected tensor "model.decoder.layers.1.`},
		{"untied without lm_head", "t5-tiny", func(t *testing.T, d string) {
			editJSON(t, d, "config.json", setKey("tie_word_embeddings", false))
		}, `"lm_head.weight"`},
		{"unknown feed-forward", "t5-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("feed_forward_proj", "swish")) },
			`feed_forward_proj "swish"`},
		{"unknown activation", "bart-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("activation_function", "relu")) },
			`activation_function "relu" is not gelu`},
		{"eos outside the vocabulary", "bart-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("eos_token_id", 999)) },
			"eos_token_id 999 outside the vocabulary of 276"},
		{"absurd layer count", "t5-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("num_layers", 1e9)) },
			"num_layers 1000000000 > 1048576"},
		{"dropout of 1", "bart-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("attention_dropout", 1)) },
			"attention_dropout 1 outside [0, 1)"},
		{"wrong type", "t5-tiny", func(t *testing.T, d string) { editJSON(t, d, "config.json", setKey("d_model", "sixteen")) },
			"config.json: json: cannot unmarshal"},
		{"BPE vocabulary larger than the embeddings", "bart-tiny", func(t *testing.T, d string) {
			editJSON(t, d, "vocab.json", setKey("Ġextra", 400))
		}, "the tokenizer has 401 tokens, more than config.json's vocab_size 276"},
		{"unigram vocabulary larger than the embeddings", "t5-tiny", func(t *testing.T, d string) {
			editJSON(t, d, "tokenizer.json", func(m map[string]any) {
				model := m["model"].(map[string]any)
				vocab := model["vocab"].([]any)
				for i := 0; i < 5; i++ {
					vocab = append(vocab, []any{"▁extra" + string(rune('a'+i)), -9.0})
				}
				model["vocab"] = vocab
			})
		}, "the tokenizer has 85 tokens, more than config.json's vocab_size 80"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := copyFixture(t, tc.fixture)
			tc.spoil(t, d)
			_, err := Open(d)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v; want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// FuzzParseConfig: no config.json, however malformed, panics ParseConfig,
// and what it accepts validates.
func FuzzParseConfig(f *testing.F) {
	for _, d := range []string{"t5-tiny", "t5v11-tiny", "bart-tiny"} {
		b, err := os.ReadFile(filepath.Join("testdata", d, "config.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"model_type":"t5","vocab_size":1,"d_model":1}`))
	f.Add([]byte(`{"model_type":"bart","d_model":7,"encoder_attention_heads":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b, "config.json")
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted a config that does not validate: %v", err)
		}
		need, _ := Shapes(c)
		for n, s := range need {
			for _, k := range s {
				if k < 1 {
					t.Fatalf("tensor %s has shape %v", n, s)
				}
			}
		}
	})
}
