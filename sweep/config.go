package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"compbench/models"
	"compbench/train"
)

// merge sets src's keys over dst, recursing into objects both hold.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				merge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// model is the Models entry of a cell.
func (s *Spec) model(c Cell) Model {
	for _, m := range s.Models {
		if m.Label() == c.Model {
			return m
		}
	}
	return Model{Variant: c.Variant}
}

// CellPreset is the preset a cell's training starts from (compbench train
// --preset): its model's, else the sweep's; empty for none.
func (s *Spec) CellPreset(c Cell) string {
	if p := s.model(c).Preset; p != "" {
		return p
	}
	return s.Preset
}

// checkPresets refuses an unknown preset, naming the known ones, and a
// preset on a pretrained model, whose folder fixes its size (as train
// refuses --preset with --init).
func (s *Spec) checkPresets() error {
	if s.Preset != "" {
		if _, err := train.PresetConfig(s.Preset, ""); err != nil {
			return fmt.Errorf("preset: %w", err)
		}
	}
	for _, m := range s.Models {
		p := m.Preset
		if p != "" {
			if _, err := train.PresetConfig(p, m.Variant); err != nil {
				return fmt.Errorf("models: %s: preset: %w", m.Label(), err)
			}
		} else {
			p = s.Preset
		}
		if p != "" && models.IsPretrained(m.Variant) {
			return fmt.Errorf("models: %s: preset %s sizes a model; a pretrained model's folder fixes its size", m.Label(), p)
		}
	}
	return nil
}

// TrainConfig is the --config file of a cell: Config with the cell's Vary
// values set. It is checked strictly against train.Config over the model's
// defaults (its preset's, when it has one), as compbench train will read
// it.
func (s *Spec) TrainConfig(c Cell) ([]byte, error) {
	b, _, err := s.cellConfig(c)
	return b, err
}

// CellConfig is the training config a cell's run starts with: its
// TrainConfig file over the model's defaults or its preset, the model
// applied.
func (s *Spec) CellConfig(c Cell) (train.Config, error) {
	_, cfg, err := s.cellConfig(c)
	return cfg, err
}

func (s *Spec) cellConfig(c Cell) ([]byte, train.Config, error) {
	obj, err := s.patch(c)
	if err != nil {
		return nil, train.Config{}, err
	}
	b, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return nil, train.Config{}, err
	}
	cfg := train.DefaultsFor(c.Variant)
	if p := s.CellPreset(c); p != "" {
		if cfg, err = train.PresetConfig(p, c.Variant); err != nil {
			return nil, train.Config{}, err
		}
	}
	if cfg, err = decodeOver(b, cfg, obj, c.Variant); err != nil {
		return nil, train.Config{}, err
	}
	return append(b, '\n'), cfg, nil
}

// patch merges the sweep's config, the model's and the cell's vary values,
// in that order.
func (s *Spec) patch(c Cell) (map[string]any, error) {
	obj := map[string]any{}
	for _, part := range []struct {
		what string
		raw  json.RawMessage
	}{{"config", s.Config}, {"models: " + c.Model + ": config", s.model(c).Config}} {
		if len(bytes.TrimSpace(part.raw)) == 0 {
			continue
		}
		var o map[string]any
		if err := json.Unmarshal(part.raw, &o); err != nil {
			return nil, fmt.Errorf("%s: %w", part.what, err)
		}
		merge(obj, o)
	}
	for _, v := range c.Vary {
		var val any
		if err := json.Unmarshal(v.Value, &val); err != nil {
			return nil, fmt.Errorf("vary %s: %w", v.Key, err)
		}
		parent, key := obj, v.Key
		if head, rest, ok := strings.Cut(v.Key, "."); ok {
			sub, _ := obj[head].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
				obj[head] = sub
			}
			parent, key = sub, rest
		}
		parent[key] = val
	}
	return obj, nil
}

// decodeOver reads the config file b (the object obj) strictly over base,
// as compbench train --model variant --config does, and checks the result.
func decodeOver(b []byte, base train.Config, obj map[string]any, variant string) (train.Config, error) {
	cfg := base
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	given := cfg.Model
	if err := cfg.Model.ApplyVariant(variant); err != nil {
		return cfg, err
	}
	set := map[string]bool{}
	if m, ok := obj["model"].(map[string]any); ok {
		for k := range m {
			set[k] = true
		}
	}
	if err := models.CheckVariantFields(given, set, cfg.Model); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}
