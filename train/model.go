package train

import (
	"fmt"

	"compbench/data"
	"compbench/models"
	"compbench/models/lstm"
	"compbench/models/pretrained"
	"compbench/models/transformer"
)

// families are the model families' constructors, by models.Variant.Family.
// A new model family touches three places: its own package (as
// models/transformer and models/lstm: the model, its Bind and its engine
// programs), its --model names in models.Variants, and its constructor in
// this map.
var families = map[string]func(cfg models.Config, seed uint64, v *models.Vocab) (models.Model, error){
	"transformer": func(cfg models.Config, seed uint64, v *models.Vocab) (models.Model, error) {
		m, err := transformer.New(cfg, seed)
		if err == nil && cfg.DoubleIO() {
			err = m.SetIOVocab(v)
		}
		if err != nil {
			return nil, err
		}
		return m, nil
	},
	"lstm": func(cfg models.Config, seed uint64, v *models.Vocab) (models.Model, error) {
		return lstm.New(cfg, seed, v)
	},
	// The pretrained models load their weights (the seed draws only their
	// dropout masks) and give v, read back from a run, its tokenizer.
	"pretrained": func(cfg models.Config, seed uint64, v *models.Vocab) (models.Model, error) {
		return pretrained.New(cfg, seed, v)
	},
}

// NewVocab is the vocabulary of a new run of cfg: the pretrained model's
// own (its tokenizer's pieces), or the tokens of recs.
func NewVocab(cfg models.Config, recs []data.Record) (*models.Vocab, error) {
	if cfg.Pretrained != "" {
		return pretrained.NewVocab(cfg.Pretrained)
	}
	return models.BuildVocab(recs), nil
}

// NewModel makes the model cfg.Variant names, with weights drawn from
// seed; v is the run's vocabulary (the copying model and the double I/O
// encoder need it). Bind puts it on a device.
func NewModel(cfg models.Config, seed uint64, v *models.Vocab) (models.Model, error) {
	vr, ok := models.Variants[cfg.Variant]
	if !ok {
		return nil, fmt.Errorf("unknown model %q (known: %v)", cfg.Variant, models.VariantNames())
	}
	return families[vr.Family](cfg, seed, v)
}
