package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"compbench/engine"
	"compbench/provenance"
)

// ProvenanceFile logs every invocation that wrote the run: one JSON line
// per start or resume, with the build, the command line and the input
// files' fingerprints, so a run's numbers trace to the exact code and data
// that made them.
const ProvenanceFile = "provenance.jsonl"

// provenanceLine is one invocation: the step it started at and where it
// computed, then the record.
type provenanceLine struct {
	// StartStep is the step the invocation started from (0 for a new run).
	StartStep int `json:"start_step"`
	// Device is the backend the invocation trained on (engine.Describe):
	// "cpu", or the GPU with its product kernel and why that one
	// ("cuda:0 NVIDIA H100 (sm_90), GEMM cuBLAS ... (auto)").
	Device string `json:"device"`
	// Gemm is the GPU's product kernel ("cublas", "tf32", "fp32";
	// engine.GemmName), absent on the CPU: two GPU runs of one seed that
	// differ in it differ by rounding and speed.
	Gemm string `json:"gemm,omitempty"`
	provenance.Record
}

// appendProvenance adds one line to dir's provenance log, synced, so the
// line is on disk before the invocation's first checkpoint.
func appendProvenance(dir string, step int, be engine.Backend, r *provenance.Record) error {
	b, err := json.Marshal(provenanceLine{StartStep: step, Device: engine.Describe(be), Gemm: engine.GemmName(be), Record: *r})
	if err != nil {
		return fmt.Errorf("%s: %w", ProvenanceFile, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ProvenanceFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", ProvenanceFile, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", ProvenanceFile, err)
	}
	return f.Close()
}

// RunFiles lists the files a run folder owns (what --force replaces), for
// callers that must not write over them.
func RunFiles() []string { return append([]string(nil), runFiles...) }
