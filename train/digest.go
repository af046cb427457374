package train

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A checkpoint records, in the __metadata__ of each of its safetensors
// files, the SHA-256 of what its weights go with: the config (less the
// keys a resume may change by flag), vocab.json, data.json and its own
// state.json. --resume recomputes them from the run's files and refuses
// a difference, so a hand-edited lr, a swapped token or an edited adam_t
// cannot resume silently into another run than the one checkpointed.
const (
	metaStep   = "step"
	metaConfig = "config_sha256"
	metaVocab  = "vocab_sha256"
	metaData   = "data_sha256" // absent: the run had no data.json
	metaState  = "state_sha256"
)

// digests are the SHA-256 (hex) of the run files a checkpoint goes with,
// besides its state.json; data is "" for a run without data.json.
type digests struct {
	config, vocab, data string
}

// metadata is a checkpoint's __metadata__: its step and the digests,
// state.json's (stateJSON) among them.
func (d digests) metadata(step int, stateJSON []byte) map[string]string {
	m := map[string]string{metaStep: strconv.Itoa(step), metaConfig: d.config, metaVocab: d.vocab, metaState: sha256Hex(stateJSON)}
	if d.data != "" {
		m[metaData] = d.data
	}
	return m
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// configDigest is the SHA-256 of c's settings, one "key=value" line each
// in key order, without ResumableKeys: changing those by flag on resume is
// allowed (and logged), so it must not count as an edit of config.json.
func configDigest(c Config) (string, error) {
	flat, err := flatConfig(c)
	if err != nil {
		return "", err
	}
	for _, k := range ResumableKeys {
		delete(flat, k)
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(flat)) {
		b.WriteString(k + "=" + flat[k] + "\n")
	}
	return sha256Hex([]byte(b.String())), nil
}

// digestCheck is one run file and the digest its checkpoint recorded.
type digestCheck struct {
	path, got, want string
	// fix says what to do about a difference.
	fix string
}

// checkDigests compares the run's files with the digests in meta, the
// __metadata__ of checkpoint file ckpt; the first difference is an error
// naming the file.
func checkDigests(ckpt string, step int, checks []digestCheck) error {
	for _, c := range checks {
		if c.got != c.want {
			return fmt.Errorf("%s changed since the checkpoint of step %d (%s records another SHA-256): %s",
				c.path, step, ckpt, c.fix)
		}
	}
	return nil
}
