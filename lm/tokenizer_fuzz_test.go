package lm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sugarme/tokenizer/pretokenizer"
)

// byteVocab is the start of a vocabulary JSON object holding the 256
// byte-level symbols and the end-of-text token, followed by a comma: the
// fuzzers append the rest, so small inputs reach past the byte-level check
// (a valid vocabulary is at least these 3 KB).
func byteVocab() string {
	syms := map[string]int{}
	for b, s := range pretokenizer.GenerateBytesChar() {
		syms[s] = int(b)
	}
	syms[EndOfText] = 256
	keys := make([]string, 0, len(syms))
	for k := range syms {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{")
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteString(":")
		b.WriteString(jsonInt(syms[k]))
		b.WriteString(",")
	}
	return b.String()
}

func jsonInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// dirNames lists dir, to check that loading wrote nothing.
func dirNames(t *testing.T, dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// checkTokenizer asserts what a loaded tokenizer promises: an EOS inside
// the vocabulary, and text encoded to ids below the vocabulary size.
func checkTokenizer(t *testing.T, tok *Tokenizer) {
	if tok.EOS() < 0 || tok.EOS() >= tok.VocabSize() {
		t.Fatalf("eos %d outside the vocabulary of %d", tok.EOS(), tok.VocabSize())
	}
	ids, err := tok.Encode("ab c<|endoftext|>\u00e9")
	if err != nil {
		return // an error is an answer, not a crash
	}
	for _, id := range ids {
		if id < 0 || id >= tok.VocabSize() {
			t.Fatalf("id %d outside the vocabulary of %d", id, tok.VocabSize())
		}
	}
}

// FuzzLoadBPE: any vocab.json and merges.txt give an error or a working
// tokenizer, never a panic, and nothing is written beside them. With
// prefixed set, vocab is appended to the byte-level symbols (byteVocab).
func FuzzLoadBPE(f *testing.F) {
	f.Add(true, `"ab":257}`, "#version: 0.2\na b\n")
	f.Add(true, `"ab":257,"abc":258}`, "a b\nab c")
	f.Add(true, `"ab":7}`, "a b\n")
	f.Add(true, `}`, "")
	f.Add(false, `{"a":0,"b":1,"ab":2}`, "a b\n")
	f.Add(false, `{"a":-1}`, "")
	f.Add(false, `[1]`, "x")
	prefix := byteVocab()
	f.Fuzz(func(t *testing.T, prefixed bool, vocab, merges string) {
		if prefixed {
			vocab = prefix + vocab
		}
		dir := t.TempDir()
		vp, mp := filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt")
		os.WriteFile(vp, []byte(vocab), 0o644)
		os.WriteFile(mp, []byte(merges), 0o644)
		before := dirNames(t, dir)
		tok, err := LoadBPE(vp, mp)
		if after := dirNames(t, dir); after != before {
			t.Fatalf("loading wrote to the folder: %s -> %s", before, after)
		}
		if err == nil {
			checkTokenizer(t, tok)
		}
	})
}

// FuzzLoadTokenizerJSON: any tokenizer.json gives an error or a working
// tokenizer, never a panic. With prefixed set, doc continues a document
// whose model vocabulary already holds the byte-level symbols.
func FuzzLoadTokenizerJSON(f *testing.F) {
	f.Add(true, `"ab":257},"merges":["a b"]}}`)
	f.Add(true, `"ab":257},"merges":["a c"]}}`)
	f.Add(true, `"ab":257},"merges":"a b"}}`)
	f.Add(true, `"ab":2},"merges":[]}}`)
	f.Add(false, `{"model":{"type":"WordPiece"}}`)
	f.Add(false, `{"model":{"type":"BPE","vocab":{"a":0}}}`)
	f.Add(false, `{}`)
	prefix := `{"version":"1.0","added_tokens":[{"id":256,"content":"<|endoftext|>","special":true}],` +
		`"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true},` +
		`"decoder":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true},` +
		`"model":{"type":"BPE","vocab":` + byteVocab()
	f.Fuzz(func(t *testing.T, prefixed bool, doc string) {
		if prefixed {
			doc = prefix + doc
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "tokenizer.json")
		os.WriteFile(p, []byte(doc), 0o644)
		tok, err := LoadTokenizerJSON(p)
		if after := dirNames(t, dir); after != "tokenizer.json" {
			t.Fatalf("loading wrote to the folder: %s", after)
		}
		if err == nil {
			checkTokenizer(t, tok)
		}
	})
}

// TestFuzzPrefixesLoad: the fuzzers' smallest seeds are valid tokenizers,
// so mutations start from inputs that pass every check.
func TestFuzzPrefixesLoad(t *testing.T) {
	dir := t.TempDir()
	vp, mp := filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt")
	os.WriteFile(vp, []byte(byteVocab()+`"ab":257}`), 0o644)
	os.WriteFile(mp, []byte("a b\n"), 0o644)
	tok, err := LoadBPE(vp, mp)
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := tok.Encode("ab"); err != nil || len(ids) != 1 || ids[0] != 257 {
		t.Errorf("ab: %v %v, want [257]", ids, err)
	}
}
