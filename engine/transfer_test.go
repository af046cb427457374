package engine_test

import (
	"fmt"
	"testing"

	"compbench/engine"
	"compbench/models"
	"compbench/models/transformer"
)

// counting wraps a backend and counts host-device transfers and
// synchronisations.
type counting struct {
	engine.Backend
	up, down, sync int
}

func (c *counting) Upload(dst engine.Buf, src []float32) error {
	c.up++
	return c.Backend.Upload(dst, src)
}
func (c *counting) UploadInt(dst engine.Buf, src []int32) error {
	c.up++
	return c.Backend.UploadInt(dst, src)
}
func (c *counting) UploadF64(dst engine.Buf, src []float64) error {
	c.up++
	return c.Backend.UploadF64(dst, src)
}
func (c *counting) Download(dst []float32, src engine.Buf) error {
	c.down++
	return c.Backend.Download(dst, src)
}
func (c *counting) DownloadF64(dst []float64, src engine.Buf) error {
	c.down++
	return c.Backend.DownloadF64(dst, src)
}
func (c *counting) Sync() error {
	c.sync++
	return c.Backend.Sync()
}

// TestTrainStepTransfers pins the GPU design's rule that nothing makes a
// host round trip per op: after the first step (which uploads the
// weights), a training step moves the batch in and the loss and gradient
// norm out, and the number of transfers does not grow with the depth of
// the model or with the steps.
func TestTrainStepTransfers(t *testing.T) {
	perStep := map[int]string{}
	for _, layers := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d layers", layers), func(t *testing.T) {
			m, _ := tinyWith(t, "sep-to-last", func(c *models.Config) { c.Layers = layers })
			batches := twoShapes(t, m)
			be := &counting{Backend: &engine.CPU{BLAS: true}}
			tr, err := transformer.NewTrainer(m, be, adamCfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			var counts []string
			for step := 1; step <= 5; step++ {
				be.up, be.down, be.sync = 0, 0, 0
				if _, _, err := tr.Step(batches[step%2], 0.1, step, 1, 1e-3); err != nil {
					t.Fatal(err)
				}
				if step <= 2 {
					continue // each batch shape's first step sets its program up
				}
				counts = append(counts, fmt.Sprintf("up %d down %d sync %d", be.up, be.down, be.sync))
				if be.down > 2 {
					t.Errorf("step %d: %d downloads, want at most 2 (loss, gradient norm)", step, be.down)
				}
				if be.up > 8 {
					t.Errorf("step %d: %d uploads, want at most 8 (the batch's ids, masks and positions)", step, be.up)
				}
			}
			t.Logf("steps 3-5: %v", counts)
			if counts[0] != counts[2] {
				t.Errorf("steps 3 and 5 (the same batch shape) move %q and %q", counts[0], counts[2])
			}
			perStep[layers] = counts[0] + "; " + counts[1]
		})
	}
	if perStep[1] != perStep[3] {
		t.Errorf("transfers per step grow with depth: 1 layer %q, 3 layers %q", perStep[1], perStep[3])
	}
}
