package main

import (
	"compbench/data"
	"compbench/models"
)

// truncationNote is what the length limits of c would cut from recs, as
// models.Encode counts it ("" when nothing), so that a run says before any
// work how many examples lose tokens, how many, and which limits keep them
// whole. A pretrained model counts subword pieces, which need its
// tokenizer; its runs rely on the training loop's count alone.
func truncationNote(c models.Config, recs []data.Record) string {
	if c.Pretrained != "" || len(recs) == 0 {
		return ""
	}
	// Token counts do not depend on which ids the tokens get: a vocabulary
	// of recs themselves measures them.
	o := c.EncodeOptions(false)
	_, st, err := models.Encode(models.BuildVocab(recs), recs, o)
	if err != nil {
		return ""
	}
	return st.Truncation(len(recs), o)
}
