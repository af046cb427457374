package pretrained

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/model/bpe"
	"github.com/sugarme/tokenizer/pretokenizer"
	hft "github.com/sugarme/tokenizer/pretrained"

	"compbench/data"
	"compbench/models"
)

// Tokenizer splits text into a pretrained model's pieces and joins them
// back: T5's SentencePiece unigram (tokenizer.json) or BART's byte-level
// BPE (vocab.json and merges.txt, GPT-2's pre-tokenizer without a prefix
// space, as Hugging Face's BartTokenizer). It works in compbench's ids
// (models.Subword): a model id k is compbench id models.NumSpecials + k,
// and the model's unknown token is models.UnkID.
type Tokenizer struct {
	tk *tokenizer.Tokenizer
	// pieces are the model's tokens by model id, one per embedding row
	// (rows past the tokenizer's vocabulary are named "<row N>").
	pieces []string
	unk    int // the model's unknown-token id
	// special are the model ids of its special tokens, which Text drops.
	special map[int]bool
}

// LoadTokenizer loads the tokenizer of a checked folder (Open).
func LoadTokenizer(f *Folder) (t *Tokenizer, err error) {
	defer func() {
		if r := recover(); r != nil { // the tokenizer library panics on some malformed files
			t, err = nil, fmt.Errorf("%s: tokenizer: %v", f.Dir, r)
		}
	}()
	var tk *tokenizer.Tokenizer
	var vocab map[string]int
	if f.Config.ModelType == TypeT5 {
		path := filepath.Join(f.Dir, "tokenizer.json")
		if tk, err = hft.FromFile(path); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		vocab = tk.GetVocab(true)
	} else {
		vpath, mpath := filepath.Join(f.Dir, "vocab.json"), filepath.Join(f.Dir, "merges.txt")
		b, err := data.ReadFileLimit(vpath, data.VocabFile)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &vocab); err != nil {
			return nil, fmt.Errorf("%s: %w", vpath, err)
		}
		model, err := bpe.NewBpeFromFiles(vpath, mpath)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", vpath, mpath, err)
		}
		tk = tokenizer.NewTokenizer(model)
		pre := pretokenizer.NewByteLevel()
		pre.SetAddPrefixSpace(false) // BartTokenizer's default
		pre.SetTrimOffsets(false)
		tk.WithPreTokenizer(pre)
		tk.WithDecoder(pre)
	}
	t = &Tokenizer{tk: tk, pieces: make([]string, f.Config.VocabSize), special: map[int]bool{}}
	for i := range t.pieces {
		t.pieces[i] = fmt.Sprintf("<row %d>", i)
	}
	for piece, id := range vocab {
		if id >= 0 && id < len(t.pieces) {
			t.pieces[id] = piece
		}
	}
	unk, ok := vocab["<unk>"]
	if !ok {
		return nil, fmt.Errorf("%s: the tokenizer has no <unk> token", f.Dir)
	}
	t.unk = unk
	for _, s := range []string{"<pad>", "<s>", "</s>", "<unk>", "<mask>"} {
		if id, ok := vocab[s]; ok {
			t.special[id] = true
		}
	}
	return t, nil
}

// Pieces are the model's tokens by model id.
func (t *Tokenizer) Pieces() []string { return t.pieces }

// IDs implements models.Subword: the compbench ids of text's pieces,
// without the model's special tokens.
func (t *Tokenizer) IDs(text string) (ids []int, err error) {
	defer func() {
		if r := recover(); r != nil {
			ids, err = nil, fmt.Errorf("tokenize %q: %v", text, r)
		}
	}()
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return nil, nil
	}
	enc, err := t.tk.EncodeSingle(text, false)
	if err != nil {
		return nil, fmt.Errorf("tokenize %q: %w", text, err)
	}
	ids = make([]int, len(enc.Ids))
	for i, id := range enc.Ids {
		ids[i] = models.NumSpecials + id
		if id == t.unk {
			ids[i] = models.UnkID
		}
	}
	return ids, nil
}

// Text implements models.Subword: the text of compbench ids (specials and
// the model's special tokens dropped), with runs of spaces collapsed.
func (t *Tokenizer) Text(ids []int) string {
	keep := make([]int, 0, len(ids))
	for _, id := range ids {
		k := id - models.NumSpecials
		if k < 0 || k >= len(t.pieces) || t.special[k] {
			continue
		}
		keep = append(keep, k)
	}
	return strings.Join(strings.Fields(t.tk.Decode(keep, false)), " ")
}
