package robustfill

// args lists pointers to the fields holding an expression's arguments, in
// Fig. 3's argument order, so the JSON and token encodings share one
// definition of every operation's signature. Compose's two expression
// arguments are handled by the encoders themselves. The pointer types are
// *int (position or index), *Type, *Regex, *Boundary, *Case and *byte
// (delimiter or character); ranges are checked by Validate.
func (e *Expr) args() []any {
	switch e.Op {
	case SubStr:
		return []any{&e.K1, &e.K2}
	case GetSpan:
		return []any{&e.R1, &e.I1, &e.B1, &e.R2, &e.I2, &e.B2}
	case GetToken, GetFirst, Remove:
		return []any{&e.T, &e.I1}
	case Substitute:
		return []any{&e.T, &e.I1, &e.C}
	case SubstituteAll:
		return []any{&e.T, &e.C}
	case GetAll, RemoveAll:
		return []any{&e.T}
	case GetUpto, GetFrom:
		return []any{&e.R1}
	case ToCase:
		return []any{&e.Case}
	case Replace:
		return []any{&e.D1, &e.D2}
	case ConstStr:
		return []any{&e.C}
	}
	return nil // Trim, Compose
}
