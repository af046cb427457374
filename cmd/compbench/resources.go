package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/train"
)

// fallbackMemory is the memory assumed where /proc/meminfo cannot be read.
const fallbackMemory = 64 << 30

// machineMemory is the machine's total memory in bytes and where the
// number comes from. A variable, so that tests can pretend a smaller one.
var machineMemory = func() (float64, string) {
	if b, ok := memTotal("/proc/meminfo"); ok {
		return b, "MemTotal in /proc/meminfo"
	}
	return fallbackMemory, "assumed where /proc/meminfo cannot be read"
}

// memTotal reads MemTotal (kB) from a meminfo file.
func memTotal(path string) (float64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		return kb * 1024, err == nil && kb > 0
	}
	return 0, false
}

// memPart is one share of a command's working set and the settings that
// size it, named as the user gives them.
type memPart struct {
	what     string
	settings string
	bytes    float64
}

// memDevice is the device of the running command, set by parseDevice
// (every command reads its --device before it checks memory): on a GPU,
// checkMemory holds the working set to the GPU's free memory too.
var memDevice engine.Device

// deviceMemory is GPU d's free and total memory in bytes (cuMemGetInfo).
// A variable, so that tests can pretend a smaller card.
var deviceMemory = func(d engine.Device) (free, total float64, err error) {
	f, t, err := engine.DeviceMemory(d)
	return float64(f), float64(t), err
}

// checkMemory refuses, as a usage error, a working set larger than the
// machine's memory or, on a GPU, than the GPU's free memory, naming the
// largest share and what sets it. Go's allocator would otherwise end the
// process with a fatal "out of memory" and a goroutine dump, and the GPU
// would fail an allocation, either possibly after minutes of work; the
// GPU is asked before the command allocates anything there.
func checkMemory(cmd string, parts ...memPart) error {
	total, largest := 0.0, parts[0]
	for _, p := range parts {
		total += p.bytes
		if p.bytes > largest.bytes {
			largest = p
		}
	}
	have, source := machineMemory()
	if total > have {
		return usagef("%s: needs about %s of memory, mostly %s (%s), but the machine has %s (%s); lower %s",
			cmd, fmtBytes(total), largest.what, fmtBytes(largest.bytes), fmtBytes(have), source, largest.settings)
	}
	if !memDevice.CUDA {
		return nil
	}
	free, all, err := deviceMemory(memDevice)
	if err != nil {
		return fmt.Errorf("%s: GPU memory: %w", cmd, err)
	}
	if total > free {
		return usagef("%s: needs about %s of GPU memory, mostly %s (%s), but %s has %s free of %s (cuMemGetInfo); lower %s",
			cmd, fmtBytes(total), largest.what, fmtBytes(largest.bytes), memDevice, fmtBytes(free), fmtBytes(all), largest.settings)
	}
	return nil
}

// fmtBytes writes a size with a binary unit.
func fmtBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b >= 1e4 {
		return fmt.Sprintf("%.3g %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

// The estimates below count the float32 arrays that dominate each share;
// they are within a small factor of the truth, which is all a refusal
// "larger than the machine" needs. Sizes are float64 so that absurd
// settings cannot overflow.

// paramCount estimates a model's weights.
func paramCount(c models.Config, srcVocab, tgtVocab int) float64 {
	d, m, l := float64(c.Dim), float64(c.MLPDim), float64(c.Layers)
	emb := d * float64(srcVocab+2*tgtVocab) // embeddings and the output layer
	if !models.IsLSTM(c.Variant) {
		return emb + l*(4*d*d+2*d*m) + l*(8*d*d+2*d*m)
	}
	enc := l * 16 * d * d // bidirectional LSTM, 4 gates over [input, state]
	if c.Encoder == models.EncoderTransformer {
		el := float64(c.EncoderLayers)
		if el == 0 {
			el = l
		}
		enc = el * (4*d*d + 2*d*m)
	}
	return emb + enc + l*8*d*d + 3*d*d
}

// weightsPart is the weights alone, or with gradients and Adam's two
// moments when training.
func weightsPart(c models.Config, srcVocab, tgtVocab int, training bool) memPart {
	copies := 1.0
	what := "the weights"
	if training {
		copies, what = 4, "the weights, gradients and Adam moments"
	}
	return memPart{what, "--dim (dim), --mlp (mlp_dim) or --layers (layers)", 4 * copies * paramCount(c, srcVocab, tgtVocab)}
}

// activationsPart is one training step's activations and their gradients
// for rows examples of srcLen and tgtLen tokens.
func activationsPart(c models.Config, rows, srcLen, tgtLen, tgtVocab int) memPart {
	b, s, t := float64(rows), float64(srcLen), float64(tgtLen)
	d, m, l, h := float64(c.Dim), float64(c.MLPDim), float64(c.Layers), float64(c.Heads)
	per := (s+t)*l*(8*d+2*m) + 2*l*h*(s*s+t*t+s*t) + 2*t*float64(tgtVocab)
	return memPart{"a training step's activations", "--batch (batch), --max-src (max_src_len) or --max-tgt (max_tgt_len)", 2 * 4 * b * per}
}

// decodePart is decoding rows hypotheses up to maxLen tokens: the token
// buffers, the attention cache of each decoder layer, the logits.
func decodePart(c models.Config, rows, srcLen, maxLen, tgtVocab int, settings string) memPart {
	r, s, n, d, l := float64(rows), float64(srcLen), float64(maxLen), float64(c.Dim), float64(c.Layers)
	bytes := r * n * 8
	if !models.IsLSTM(c.Variant) {
		bytes += 4 * r * 2 * l * d * (n + s)
	}
	bytes += 4 * 2 * r * float64(tgtVocab)
	return memPart{"decoding", settings, bytes}
}

// dataLengths are the longest source and target of recs in model tokens,
// cut to the config's limits (separators counted once per part).
func dataLengths(c models.Config, recs []data.Record) (src, tgt int) {
	for i := range recs {
		src = max(src, len(models.SourceTokens(&recs[i])))
		tgt = max(tgt, len(models.Tokens(recs[i].Output))+len(recs[i].Parts)+1)
	}
	return min(src, c.MaxSrcLen), min(tgt, c.MaxTgtLen)
}

// checkTrainData refuses training records without an input or an output,
// and a run whose working set would not fit in memory.
func checkTrainData(cfg train.Config, trainPath string, recs []data.Record, devPath string, dev []data.Record) error {
	if err := data.RequireText(recs, true); err != nil {
		return fmt.Errorf("%s: %w", trainPath, err)
	}
	if err := data.RequireText(dev, true); err != nil {
		return fmt.Errorf("%s: %w", devPath, err)
	}
	m := cfg.Model
	if models.IsPretrained(m.Variant) {
		// The estimate below is of compbench's own architectures; a
		// pretrained model's size is its folder's.
		return nil
	}
	v := models.BuildVocab(recs)
	src, tgt := dataLengths(m, recs)
	rows := batchRows(cfg)
	parts := []memPart{
		weightsPart(m, len(v.Source), len(v.Target), true),
		activationsPart(m, rows, src, tgt, len(v.Target)),
	}
	if len(dev) > 0 {
		// Dev evaluation decodes greedily up to max_tgt_len, in batches
		// padded to --batch rows as well.
		dsrc, _ := dataLengths(m, dev)
		parts = append(parts, decodePart(m, cfg.Batch, dsrc, m.MaxTgtLen, len(v.Target), "--max-tgt (max_tgt_len) or --batch (batch)"))
	}
	return checkMemory("train", parts...)
}

// batchRows is the rows of a training batch: models.Batches pads every
// batch to --batch rows however few records there are (so the compiled
// graphs keep few shapes), or with --batch-tokens to at most that many
// tokens' worth of targets, each at least one bucket wide.
func batchRows(cfg train.Config) int {
	if cfg.BatchTokens > 0 {
		return max(1, min(cfg.Batch, cfg.BatchTokens/max(cfg.BucketWidth, 1)))
	}
	return cfg.Batch
}
