package robustfill

import "compbench/data"

// Record turns a task into a record without an ID: input is the encoded I/O
// examples (EncodeIO), output the program's tokens, parts one token string
// per expression, program the program JSON.
func (t *Task) Record() data.Record {
	parts := t.Program.Parts()
	out := make([]byte, 0, 16*len(parts))
	for i, p := range parts {
		if i > 0 {
			out = append(out, " "+Separator+" "...)
		}
		out = append(out, p...)
	}
	return data.Record{
		Input:   EncodeIO(t.Inputs, t.Outputs),
		Output:  string(out),
		Parts:   parts,
		Inputs:  t.Inputs,
		Outputs: t.Outputs,
		Program: t.Program.AppendJSON(nil),
	}
}
