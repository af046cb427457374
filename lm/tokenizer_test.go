package lm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const fixtureDir = "testdata/gpt2-tiny"

func TestTokenizerKnownEncodings(t *testing.T) {
	tok, err := LoadTokenizer(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	if tok.EOS() != 50256 || tok.VocabSize() != 50257 {
		t.Fatalf("eos %d size %d, want 50256 50257", tok.EOS(), tok.VocabSize())
	}
	tests := []struct {
		name string
		text string
		want []int
	}{
		{"gpt2 readme", "Hello world, this is a test.", []int{15496, 995, 11, 428, 318, 257, 1332, 13}},
		{"leading space", " jump twice", []int{4391, 5403}},
		{"end of text", "<|endoftext|>Hello<|endoftext|>", []int{50256, 15496, 50256}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tok.Encode(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
	for _, s := range []string{"Hello world, this is a test.", "naïve café — 東京 🙂 \t\n x"} {
		ids, err := tok.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if back := tok.Decode(ids); back != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, back)
		}
	}
}

// writeHFLayout copies the OpenAI-named files under the Hugging Face names
// and as a tokenizer.json, which must all tokenize identically.
func TestTokenizerLayouts(t *testing.T) {
	vocab, err := os.ReadFile(filepath.Join(fixtureDir, "encoder.json"))
	if err != nil {
		t.Fatal(err)
	}
	merges, err := os.ReadFile(filepath.Join(fixtureDir, "vocab.bpe"))
	if err != nil {
		t.Fatal(err)
	}
	hf := t.TempDir()
	os.WriteFile(filepath.Join(hf, "vocab.json"), vocab, 0o644)
	os.WriteFile(filepath.Join(hf, "merges.txt"), merges, 0o644)

	tj := t.TempDir()
	var mergeList []string
	for _, l := range strings.Split(strings.TrimSpace(string(merges)), "\n") {
		if !strings.HasPrefix(l, "#") {
			mergeList = append(mergeList, l)
		}
	}
	doc := map[string]any{
		"version":        "1.0",
		"added_tokens":   []any{map[string]any{"id": 50256, "content": EndOfText, "special": true, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}},
		"normalizer":     nil,
		"pre_tokenizer":  map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true},
		"post_processor": nil,
		"decoder":        map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true},
		"model":          map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "", "end_of_word_suffix": "", "vocab": json.RawMessage(vocab), "merges": mergeList},
	}
	b, _ := json.Marshal(doc)
	os.WriteFile(filepath.Join(tj, "tokenizer.json"), b, 0o644)

	text := "Hello world, this is a test. walk opposite left thrice"
	base, _ := LoadTokenizer(fixtureDir)
	want, _ := base.Encode(text)
	for _, dir := range []string{hf, tj} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			tok, err := LoadTokenizer(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tok.Encode(text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) || tok.EOS() != 50256 {
				t.Errorf("got %v eos %d, want %v", got, tok.EOS(), want)
			}
		})
	}
}

func TestTokenizerBadFiles(t *testing.T) {
	vocab := `{"a": 0, "b": 1, "ab": 2}`
	tests := []struct {
		name   string
		vocab  string
		merges string
		want   string
	}{
		{"vocab not json", `["a"]`, "a b\n", "not a JSON object"},
		{"duplicate ids", `{"a": 0, "b": 0}`, "", "share id"},
		{"bad merge line", vocab, "#version: 0.2\na b c\n", "line 2"},
		{"unknown merge", vocab, "b a\n", "not in the vocabulary"},
		{"not byte level", vocab, "a b\n", "byte-level symbol"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(tc.vocab), 0o644)
			os.WriteFile(filepath.Join(dir, "merges.txt"), []byte(tc.merges), 0o644)
			_, err := LoadTokenizer(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "vocab.json")
	os.WriteFile(file, []byte(vocab), 0o644)
	folders := []struct {
		name, dir, want string
	}{
		{"empty folder", t.TempDir(), "no tokenizer files"},
		{"missing folder", filepath.Join(dir, "testdata"), "testdata: no such folder"},
		{"a file", file, "vocab.json: not a folder"},
	}
	for _, tc := range folders {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LoadTokenizer(tc.dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}
