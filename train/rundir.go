package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"compbench/data"
	"compbench/models"
)

// runFiles are the files a run owns; --force removes exactly these.
var runFiles = []string{ConfigFile, VocabFile, ModelFile, OptimFile, StateFile, BestFile, MetricsFile, DataFileName, ProvenanceFile}

// checkNewDir refuses a folder that holds a run unless force; it writes
// nothing.
func checkNewDir(dir string, force bool) error {
	if force {
		return nil
	}
	for _, f := range append(runFiles, pendingDir) {
		if data.Exists(filepath.Join(dir, f)) {
			return fmt.Errorf("run folder %s already holds a run (%s): use --resume to continue it or --force to replace it", dir, f)
		}
	}
	return nil
}

// prepareDir makes dir ready for a new run: with force it removes the
// run's own files (nothing else in the folder), and the leftovers of a
// killed run.
func prepareDir(dir string, force bool) error {
	if err := checkNewDir(dir, force); err != nil {
		return err
	}
	for _, f := range append(runFiles, pendingDir) {
		if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return removeStale(dir)
}

// resumeDir brings a checked run folder to its resume point: leftovers
// of a killed process removed, a committed checkpoint installed, metrics
// after the checkpoint dropped, changed data recorded.
func resumeDir(dir string, rp *resumePoint) error {
	if err := removeStale(dir); err != nil {
		return err
	}
	if err := installPending(dir); err != nil {
		return err
	}
	// The changes are logged before config.json records them: a process
	// killed in between logs them again on the next resume, never not.
	var resumed []byte
	if len(rp.changes) > 0 {
		ch := make(map[string]any, len(rp.changes))
		for _, c := range rp.changes {
			ch[c.Key] = map[string]json.RawMessage{"from": json.RawMessage(c.From), "to": json.RawMessage(c.To)}
		}
		b, err := json.Marshal(map[string]any{"step": rp.state.Step, "resumed": ch})
		if err != nil {
			return err
		}
		resumed = append(b, '\n')
	}
	if err := trimMetrics(filepath.Join(dir, MetricsFile), rp.state.Step, resumed); err != nil {
		return err
	}
	if len(rp.changes) > 0 {
		if err := replaceSynced(filepath.Join(dir, ConfigFile), bytesFill(rp.config)); err != nil {
			return err
		}
	}
	if rp.data != nil {
		return writeData(dir, rp.data)
	}
	return nil
}

// trimMetrics drops the lines a stopped run logged after its last
// checkpoint, so a resumed run's metrics.jsonl has each step once, and
// appends extra.
func trimMetrics(path string, step int, extra []byte) error {
	b, err := data.ReadFileLimit(path, data.MetricsFile)
	if errors.Is(err, os.ErrNotExist) && extra == nil {
		return nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var keep []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		var m struct {
			Step int `json:"step"`
		}
		if len(bytes.TrimSpace(line)) == 0 || (json.Unmarshal(line, &m) == nil && m.Step > step) {
			continue
		}
		keep = append(keep, line...)
	}
	keep = append(keep, extra...)
	return replaceSynced(path, func(w io.Writer) error {
		_, err := w.Write(keep)
		return err
	})
}

// writeStart writes vocab.json, data.json and, when the start weights are
// not the seed's (fine-tuning, a pretrained encoder), a step-0 checkpoint
// to resume from; config.json comes last, so a folder with config.json
// holds everything a resume needs. It fills in dg's vocabulary and data
// digests (dg.config is set).
func writeStart(dir string, cfg *Config, v *models.Vocab, files []DataFile, p *models.Params, opt *Adam, initialised bool, dg *digests) error {
	cb, err := cfg.Marshal()
	if err != nil {
		return err
	}
	vb, err := v.MarshalIndent()
	if err != nil {
		return err
	}
	if err := replaceSynced(filepath.Join(dir, VocabFile), bytesFill(vb)); err != nil {
		return err
	}
	dg.vocab = sha256Hex(vb)
	if files != nil {
		db, err := dataJSON(files)
		if err != nil {
			return err
		}
		if err := replaceSynced(filepath.Join(dir, DataFileName), bytesFill(db)); err != nil {
			return err
		}
		dg.data = sha256Hex(db)
	}
	if initialised {
		if err := saveCheckpoint(dir, p, opt, State{}, false, *dg); err != nil {
			return err
		}
	}
	return replaceSynced(filepath.Join(dir, ConfigFile), bytesFill(cb))
}

func bytesFill(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}
