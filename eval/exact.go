package eval

import (
	"fmt"
	"strings"

	"compbench/data/robustfill"
)

// Options say how a prediction is judged.
type Options struct {
	// Normalizers rewrite gold and prediction before exact match.
	Normalizers []Normalizer
	// Execute judges RobustFill programs by running them: correct when the
	// parsed program reproduces every output from its input (Shi et al.
	// §3); a prediction that does not parse is wrong and counted apart.
	Execute bool
	// Tokens adds SCAN token accuracy and the longest correct prefix.
	Tokens bool
}

// Example is the judgement of one prediction.
type Example struct {
	// ID is the gold record's id.
	ID string `json:"id"`
	// Correct is exact match (or execution match with Execute).
	Correct bool `json:"correct"`
	// Missing marks a gold record that had no prediction.
	Missing bool `json:"missing,omitempty"`
	// ParseError is why a program prediction did not parse (Execute).
	ParseError string `json:"parse_error,omitempty"`
	// TokenAccuracy is the fraction of aligned positions with the gold
	// token, over the longer of the two sequences (Tokens).
	TokenAccuracy *float64 `json:"token_accuracy,omitempty"`
	// Prefix is the number of leading tokens equal to the gold (Tokens).
	Prefix *int `json:"correct_prefix,omitempty"`
}

// Summary aggregates Examples.
type Summary struct {
	// N is the number of gold records scored.
	N int `json:"n"`
	// Correct is how many were correct.
	Correct int `json:"correct"`
	// Accuracy is Correct / N (exact match, or execution accuracy).
	Accuracy float64 `json:"accuracy"`
	// Missing counts gold records without a prediction.
	Missing int `json:"missing"`
	// Unknown counts predictions whose id is not in the gold file.
	Unknown int `json:"unknown"`
	// ParseFailures counts predictions that did not parse (Execute).
	ParseFailures int `json:"parse_failures"`
	// TokenAccuracy is the mean token accuracy (Tokens).
	TokenAccuracy *float64 `json:"token_accuracy,omitempty"`
	// MeanPrefix is the mean longest correct prefix in tokens (Tokens).
	MeanPrefix *float64 `json:"mean_correct_prefix,omitempty"`
	// ByCategory breaks exact match down by the gold records' categories
	// (ByCategory; eval --by category).
	ByCategory *Breakdown `json:"by_category,omitempty"`
}

// Score judges every pair of j.
func Score(j *Joined, opt Options) ([]Example, Summary, error) {
	out := make([]Example, len(j.Pairs))
	s := Summary{N: len(j.Pairs), Missing: len(j.MissingPred), Unknown: len(j.Unknown)}
	var tokSum, preSum float64
	for i, p := range j.Pairs {
		ex := Example{ID: p.Gold.ID}
		pred := ""
		if p.Pred == nil {
			ex.Missing = true
		} else {
			pred = p.Pred.Text
		}
		gold := normalize(p.Gold.Output, opt.Normalizers)
		np := normalize(pred, opt.Normalizers)
		switch {
		case ex.Missing:
		case opt.Execute:
			ok, perr, err := executes(p.Gold.ID, p.Gold.Inputs, p.Gold.Outputs, pred)
			if err != nil {
				return nil, s, err
			}
			ex.Correct, ex.ParseError = ok, perr
			if perr != "" {
				s.ParseFailures++
			}
		default:
			ex.Correct = gold == np
		}
		if opt.Tokens {
			acc, pre := tokenMatch(strings.Fields(gold), strings.Fields(np))
			ex.TokenAccuracy, ex.Prefix = &acc, &pre
			tokSum += acc
			preSum += float64(pre)
		}
		if ex.Correct {
			s.Correct++
		}
		out[i] = ex
	}
	if s.N > 0 {
		s.Accuracy = float64(s.Correct) / float64(s.N)
		if opt.Tokens {
			ta, mp := tokSum/float64(s.N), preSum/float64(s.N)
			s.TokenAccuracy, s.MeanPrefix = &ta, &mp
		}
	}
	return out, s, nil
}

// executes runs a predicted RobustFill program on the gold inputs. A parse
// failure is reported in perr (the prediction is wrong, not an error);
// err is for gold records that cannot be executed against.
func executes(id string, inputs, outputs []string, pred string) (ok bool, perr string, err error) {
	if len(inputs) == 0 || len(inputs) != len(outputs) {
		return false, "", fmt.Errorf("record %q: --execute needs \"inputs\" and \"outputs\" of equal, non-zero length", id)
	}
	prog, perrv := robustfill.ParseTokens(pred)
	if perrv != nil {
		return false, perrv.Error(), nil
	}
	for k, in := range inputs {
		got, rerr := prog.Run(in)
		if rerr != nil || got != outputs[k] {
			return false, "", nil
		}
	}
	return true, "", nil
}

// tokenMatch is SCAN token accuracy (matches at aligned positions over the
// longer length; 1 for two empty sequences) and the longest correct prefix.
func tokenMatch(gold, pred []string) (acc float64, prefix int) {
	n := max(len(gold), len(pred))
	if n == 0 {
		return 1, 0
	}
	same := 0
	inPrefix := true
	for i := range min(len(gold), len(pred)) {
		if gold[i] == pred[i] {
			same++
			if inPrefix {
				prefix++
			}
		} else {
			inPrefix = false
		}
	}
	return float64(same) / float64(n), prefix
}
