package train

import (
	"fmt"

	"compbench/data"
	"compbench/models"
	"compbench/models/lstm"
	"compbench/models/pretrained"
	"compbench/models/transformer"
)

// family is one model family: the check of its own configuration fields
// and its constructor.
type family struct {
	// validate checks the fields the family reads (its Config's Validate);
	// models.Config.Validate has checked the shared ones.
	validate func(cfg models.Config) error
	// make builds a model with weights drawn from seed; v is the run's
	// vocabulary.
	make func(cfg models.Config, seed uint64, v *models.Vocab) (models.Model, error)
}

// families are the model families, by models.Variant.Family. A new model
// family touches three places: its own package (as models/transformer and
// models/lstm: its Config, the model, its Bind and its engine programs),
// its --model names in models.Variants, and its entry in this map.
var families = map[string]family{
	"transformer": {
		validate: func(cfg models.Config) error { c := transformer.ConfigOf(cfg); return c.Validate() },
		make: func(cfg models.Config, seed uint64, v *models.Vocab) (models.Model, error) {
			m, err := transformer.New(cfg, seed)
			if err == nil && cfg.DoubleIO() {
				err = m.SetIOVocab(v)
			}
			if err != nil {
				return nil, err
			}
			return m, nil
		},
	},
	"lstm": {
		validate: func(cfg models.Config) error { c := lstm.ConfigOf(cfg); return c.Validate() },
		make: func(cfg models.Config, seed uint64, v *models.Vocab) (models.Model, error) {
			return lstm.New(cfg, seed, v)
		},
	},
	// The pretrained models' architecture is their folder's (checked when
	// the folder is read); they load their weights (the seed draws only
	// their dropout masks) and give v, read back from a run, its
	// tokenizer.
	"pretrained": {
		validate: func(models.Config) error { return nil },
		make: func(cfg models.Config, seed uint64, v *models.Vocab) (models.Model, error) {
			return pretrained.New(cfg, seed, v)
		},
	},
}

// ValidateModel checks a run's model configuration: the fields every
// family shares (models.Config.Validate), then those of its family.
func ValidateModel(cfg models.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	return families[models.Variants[cfg.Variant].Family].validate(cfg)
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
	return families[vr.Family].make(cfg, seed, v)
}
