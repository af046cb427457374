package lm

import (
	"fmt"
	"strings"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretokenizer"
)

// Truncation keeps the last n_positions tokens of a long example, so a
// 50 MB record needs only its end tokenized (tokenizing all of it takes
// gigabytes). Tail cuts a text to a suffix whose tokens are the text's
// last tokens, enough of them, by this argument for GPT-2's byte-level
// BPE:
//
//  1. No token spells more than longest bytes (the vocabulary's longest
//     token), so the last keep tokens of a text spell at most
//     keep*longest bytes, and a suffix of that many bytes or more holds
//     at least keep tokens.
//  2. Encode first splits the text at "<|endoftext|>"; the pre-tokenizer
//     then cuts each part into pieces with the regular expression
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+
//     (the whitespace between matches forming pieces of its own), and BPE
//     merges only within a piece. No match holds a space but as its first
//     byte, and at a space followed by a byte outside \s ([\t\n\f\r ])
//     one of the " ?X+" alternatives matches, so such a space always
//     starts a piece, whatever precedes it. The expression looks neither
//     behind nor at the start of the text, so the pieces from that space
//     on are those of the suffix that starts there. A byte other than '<'
//     after the space keeps the cut out of an end-of-text marker.
//
// So the suffix from such a space, at least keep*longest bytes long,
// tokenizes into exactly the last tokens of the whole text, at least keep
// of them: truncating either to keep tokens gives the same ids. The tests
// check it on real GPT-2 vocabulary and text (TestTailKeepsLastTokens).

// tailSlack is how far before the needed suffix Tail looks for a cut, in
// multiples of that suffix: texts up to (1+tailSlack) times it are
// tokenized whole.
const tailSlack = 3

// Tail returns s, or a suffix of it whose tokens are the last tokens of s,
// at least keep of them, when s is long enough for that to save work. It
// fails on a long text it cannot cut exactly: one with no word boundary
// (a space before a word) in the tailSlack suffix lengths before the
// suffix, or any long text when the tokenizer is not GPT-2's byte-level
// BPE (tokenizer.json may configure another pre-tokenizer).
func (t *Tokenizer) Tail(s string, keep int) (string, error) {
	need := keep * max(t.longest, 1)
	if len(s) <= (1+tailSlack)*need {
		return s, nil
	}
	if !t.cuttable {
		return "", fmt.Errorf("%d bytes: --truncate tokenizes at most %d bytes with %s, whose pre-tokenizer is not GPT-2's byte-level one", len(s), (1+tailSlack)*need, t.Files)
	}
	hi := len(s) - need
	for i := hi; i >= hi-tailSlack*need; i-- {
		if s[i] == ' ' && !strings.ContainsRune(" \t\n\f\r<", rune(s[i+1])) {
			return s[i:], nil
		}
	}
	return "", fmt.Errorf("%d bytes with no word boundary in the %d bytes before their last %d: --truncate cannot cut it exactly", len(s), tailSlack*need, need)
}

// byteLevel reports whether tk tokenizes as Tail's argument assumes: the
// GPT-2 byte-level pre-tokenizer, no normalizer, and no added token but
// "<|endoftext|>" (which Encode splits out first).
func byteLevel(tk *tokenizer.Tokenizer, added []string) bool {
	if _, ok := tk.GetPreTokenizer().(*pretokenizer.ByteLevel); !ok || tk.GetNormalizer() != nil {
		return false
	}
	for _, a := range added {
		if a != EndOfText {
			return false
		}
	}
	return true
}
