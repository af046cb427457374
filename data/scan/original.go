package scan

// OriginalParts are the 102 phrases of the original SCAN grammar (Lake &
// Baroni 2018, Fig. 6: S := V | V twice | V thrice; V := D opposite D' |
// D around D' | D | U; D := U left | U right | turn left | turn right),
// which are exactly the phrases P of Shi et al.'s extended grammar: 4
// bare actions and 5 verbs × 3 direction forms × 2 directions, each once,
// twice or thrice. The order is fixed: form, verb, direction, times.
func OriginalParts() []Part {
	var out []Part
	for _, f := range Forms {
		verbs := Verbs
		if f == Bare {
			verbs = Actions
		}
		for _, v := range verbs {
			dirs := Dirs
			if f == Bare {
				dirs = []Dir{NoDir}
			}
			for _, d := range dirs {
				for times := 1; times <= 3; times++ {
					out = append(out, Part{Verb: v, Form: f, Dir: d, Times: times})
				}
			}
		}
	}
	return out
}

// OriginalCommands enumerates every command of the original SCAN grammar
// (C := S | S and S | S after S), the 20,910 commands of its tasks.txt:
// first the 102 single phrases, then every pair joined by "and", then by
// "after". Shi et al.'s grammar allows longer commands; the original stops
// at two phrases.
func OriginalCommands() []Command {
	parts := OriginalParts()
	out := make([]Command, 0, len(parts)+2*len(parts)*len(parts))
	for _, p := range parts {
		out = append(out, Command{Parts: []Part{p}})
	}
	for _, conj := range []Conj{And, After} {
		for _, a := range parts {
			for _, b := range parts {
				out = append(out, Command{Parts: []Part{a, b}, Conjs: []Conj{conj}})
			}
		}
	}
	return out
}
