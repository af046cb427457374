package train

import (
	"strconv"

	"compbench/data"
	"compbench/models"
)

// epochs gives the batch of each step: epoch e's batches are shuffled by
// the sub-stream "batches/e" of the seed, so step s's batch depends only
// on (seed, s) and a resumed run sees the same batches.
type epochs struct {
	ex    []models.Example
	cfg   *Config
	cur   int
	order []*models.Batch
}

func (e *epochs) batch(step int) *models.Batch {
	if e.order == nil {
		e.cur = -1
		e.order = e.make(0)
	}
	n := len(e.order)
	ep, k := (step-1)/n, (step-1)%n
	if ep != e.cur {
		e.order, e.cur = e.make(ep), ep
	}
	return e.order[k]
}

func (e *epochs) make(ep int) []*models.Batch {
	rng := data.SubRand(e.cfg.Seed, "batches/"+strconv.Itoa(ep))
	return models.Batches(e.ex, e.cfg.Batch, e.cfg.BatchTokens, e.cfg.BucketWidth, rng)
}
