package lm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"compbench/data"
	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/model/bpe"
	"github.com/sugarme/tokenizer/pretokenizer"
	"github.com/sugarme/tokenizer/pretrained"
)

// EndOfText is GPT-2's end-of-text token; it also serves as the pad token.
const EndOfText = "<|endoftext|>"

// Tokenizer is GPT-2's byte-level BPE: text in, token ids out.
type Tokenizer struct {
	tk   *tokenizer.Tokenizer
	eos  int
	size int
	// longest is the most bytes one token stands for.
	longest int
	// cuttable: the tokenizer is GPT-2's byte-level BPE, which Tail's
	// argument holds for.
	cuttable bool
	// Files names the files it was loaded from, for messages.
	Files string
}

// tokenizerFiles are the accepted layouts, in order of preference.
var tokenizerFiles = [][]string{
	{"vocab.json", "merges.txt"},  // Hugging Face names
	{"encoder.json", "vocab.bpe"}, // OpenAI names
	{"tokenizer.json"},            // Hugging Face tokenizers
}

// LoadTokenizer loads the tokenizer files found in dir.
func LoadTokenizer(dir string) (*Tokenizer, error) {
	// A folder that is not there is not one without tokenizer files.
	if fi, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such folder (want one holding vocab.json+merges.txt, encoder.json+vocab.bpe or tokenizer.json)", dir)
	} else if err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a folder (want one holding vocab.json+merges.txt, encoder.json+vocab.bpe or tokenizer.json)", dir)
	}
	for _, names := range tokenizerFiles {
		paths := make([]string, len(names))
		found := true
		for i, n := range names {
			paths[i] = filepath.Join(dir, n)
			if _, err := os.Stat(paths[i]); err != nil {
				found = false
			}
		}
		if !found {
			continue
		}
		if len(paths) == 2 {
			return LoadBPE(paths[0], paths[1])
		}
		return LoadTokenizerJSON(paths[0])
	}
	return nil, fmt.Errorf("%s: no tokenizer files (want vocab.json+merges.txt, encoder.json+vocab.bpe or tokenizer.json)", dir)
}

// LoadBPE loads a byte-level BPE from a vocabulary JSON file (token -> id)
// and a merges file (one "a b" pair per line, "#version" lines skipped).
func LoadBPE(vocabPath, mergesPath string) (t *Tokenizer, err error) {
	vocab, err := readVocab(vocabPath)
	if err != nil {
		return nil, err
	}
	if err := checkMerges(mergesPath, vocab); err != nil {
		return nil, err
	}
	// The BPE library reads both files again by name.
	for _, p := range []string{vocabPath, mergesPath} {
		if err := data.CheckFileLimit(p, data.VocabFile); err != nil {
			return nil, err
		}
	}
	defer recoverInto(&err, "load tokenizer "+vocabPath)
	model, err := bpe.NewBpeFromFiles(vocabPath, mergesPath)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s, %s: %w", vocabPath, mergesPath, err)
	}
	tk := tokenizer.NewTokenizer(model)
	pre := pretokenizer.NewByteLevel()
	pre.SetAddPrefixSpace(false) // GPT-2 does not prepend a space
	pre.SetTrimOffsets(false)
	tk.WithPreTokenizer(pre)
	tk.WithDecoder(pre) // the byte-level pre-tokenizer also decodes
	return newTokenizer(tk, vocab, vocabPath+", "+mergesPath, true)
}

// LoadTokenizerJSON loads a Hugging Face tokenizer.json.
func LoadTokenizerJSON(path string) (t *Tokenizer, err error) {
	// The tokenizer library reads the file again by name: it must be a
	// regular file.
	if err := data.CheckFileLimit(path, data.VocabFile); err != nil {
		return nil, err
	}
	b, err := data.ReadFileLimit(path, data.VocabFile)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Model struct {
			Type  string         `json:"type"`
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
		} `json:"added_tokens"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if probe.Model.Type != "" && probe.Model.Type != "BPE" {
		return nil, fmt.Errorf("%s: model type %q is not a byte-level BPE", path, probe.Model.Type)
	}
	vocab := probe.Model.Vocab
	var added []string
	for _, a := range probe.AddedTokens {
		added = append(added, a.Content)
		if _, ok := vocab[a.Content]; !ok && vocab != nil {
			vocab[a.Content] = a.ID
		}
	}
	defer recoverInto(&err, "load tokenizer "+path)
	tk, err := pretrained.FromFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return newTokenizer(tk, vocab, path, byteLevel(tk, added))
}

func newTokenizer(tk *tokenizer.Tokenizer, vocab map[string]int, files string, cuttable bool) (*Tokenizer, error) {
	if err := checkByteLevel(vocab); err != nil {
		return nil, fmt.Errorf("%s: %w", files, err)
	}
	eos, ok := vocab[EndOfText]
	if !ok {
		return nil, fmt.Errorf("%s: the vocabulary has no %s token", files, EndOfText)
	}
	size, longest := 0, 0
	for tok, id := range vocab {
		size = max(size, id+1)
		// Byte-level tokens spell one byte per rune.
		longest = max(longest, utf8.RuneCountInString(tok))
	}
	return &Tokenizer{tk: tk, eos: eos, size: size, longest: longest, cuttable: cuttable, Files: files}, nil
}

// EOS is the id of the end-of-text token.
func (t *Tokenizer) EOS() int { return t.eos }

// MinTokens is a lower bound on the tokens of s, found without tokenizing:
// no token stands for more bytes than the longest in the vocabulary.
func (t *Tokenizer) MinTokens(s string) int {
	return (len(s) + t.longest - 1) / max(t.longest, 1)
}

// VocabSize is one more than the largest token id.
func (t *Tokenizer) VocabSize() int { return t.size }

// Encode tokenizes s. Occurrences of "<|endoftext|>" become the EOS id, as
// in GPT-2's own tokenizer; the text between them is encoded separately.
func (t *Tokenizer) Encode(s string) (ids []int, err error) {
	defer recoverInto(&err, "tokenize")
	parts := strings.Split(s, EndOfText)
	for i, p := range parts {
		if i > 0 {
			ids = append(ids, t.eos)
		}
		if p == "" {
			continue
		}
		enc, err := t.tk.EncodeSingle(p, false)
		if err != nil {
			return nil, fmt.Errorf("tokenize %q: %w", p, err)
		}
		ids = append(ids, enc.Ids...)
	}
	return ids, nil
}

// Decode turns ids back into text.
func (t *Tokenizer) Decode(ids []int) string {
	return t.tk.Decode(ids, false)
}

func readVocab(path string) (map[string]int, error) {
	b, err := data.ReadFileLimit(path, data.VocabFile)
	if err != nil {
		return nil, err
	}
	var vocab map[string]int
	if err := json.Unmarshal(b, &vocab); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of token ids: %w", path, err)
	}
	seen := make(map[int]string, len(vocab))
	for tok, id := range vocab {
		if id < 0 {
			return nil, fmt.Errorf("%s: token %q has negative id %d", path, tok, id)
		}
		if other, dup := seen[id]; dup {
			return nil, fmt.Errorf("%s: tokens %q and %q share id %d", path, other, tok, id)
		}
		seen[id] = tok
	}
	return vocab, nil
}

// checkMerges validates the merges file up front: the BPE library stops at
// the first bad line with an unhelpful message, or accepts unknown tokens.
func checkMerges(path string, vocab map[string]int) error {
	b, err := data.ReadFileLimit(path, data.VocabFile)
	if err != nil {
		return err
	}
	for n, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if strings.HasPrefix(line, "#version") {
			continue
		}
		a, c, ok := strings.Cut(line, " ")
		if !ok || a == "" || c == "" || strings.Contains(c, " ") {
			return fmt.Errorf("%s: line %d: want two tokens separated by one space, got %q", path, n+1, line)
		}
		if _, ok := vocab[a+c]; !ok {
			return fmt.Errorf("%s: line %d: merged token %q is not in the vocabulary", path, n+1, a+c)
		}
	}
	return nil
}

// checkByteLevel requires the 256 byte symbols of byte-level BPE, without
// which encoding some input would fail deep inside the library.
func checkByteLevel(vocab map[string]int) error {
	if vocab == nil {
		return errors.New("no vocabulary")
	}
	for b, sym := range pretokenizer.GenerateBytesChar() {
		if _, ok := vocab[sym]; !ok {
			return fmt.Errorf("the vocabulary lacks the byte-level symbol %q for byte %d", sym, b)
		}
	}
	return nil
}

// recoverInto turns a panic inside the tokenizer library into an error.
func recoverInto(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: %v", what, r)
	}
}

// FolderFiles names the files a GPT-2 folder may hold that scoring reads:
// the config, the weights and every tokenizer layout.
func FolderFiles() []string {
	out := []string{"config.json", "model.safetensors"}
	for _, l := range tokenizerFiles {
		out = append(out, l...)
	}
	return out
}
