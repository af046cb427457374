package train

import (
	"fmt"
	"io"

	"compbench/models"
	"compbench/models/lstm"
	"compbench/models/transformer"
)

// InitEncoder opens the Transformer run dir and returns the hook
// (Options.Init) that loads its encoder (best checkpoint) into a new LSTM
// model whose encoder is "transformer" (Bogin et al.'s pretrained encoder
// under the copying decoder), and the weights file it read. The hook's
// errors name the flag, --init-encoder, since they surface mid-training.
func InitEncoder(dir string, status io.Writer) (func(models.Model, *models.Vocab) error, string, error) {
	run, err := OpenRun(dir, true)
	if err != nil {
		return nil, "", err
	}
	tr, ok := run.Def.(*transformer.Model)
	if !ok {
		return nil, "", fmt.Errorf("run %s is a %s model, not a Transformer", dir, run.Config.Model.Variant)
	}
	return func(m models.Model, v *models.Vocab) error {
		l, ok := m.(*lstm.Model)
		if !ok {
			return fmt.Errorf("--init-encoder: the model is not an LSTM model")
		}
		found, err := l.InitEncoder(tr, run.Vocab, v)
		if err != nil {
			return fmt.Errorf("--init-encoder %s: %w", dir, err)
		}
		fmt.Fprintf(status, "encoder initialised from %s: %d of %d source tokens found in its vocabulary\n", dir, found, len(v.Source))
		return nil
	}, run.WeightsPath(), nil
}
