// Package structure turns records into program trees and trees into atoms
// and weighted compounds (Keysers et al. 2020, §2.1 and App. L.4), or into
// the unweighted parent-child compounds of Shaw et al. 2021's TMCD splits
// as NQG's code defines them (nqg.go). COGS's logical forms (Kim & Linzen
// 2020, §2) become trees linked by variable (cogs.go). It is the only
// place in compbench that knows how a record becomes a tree; splits and
// evaluation both call it.
package structure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"compbench/data"
	"compbench/data/scan"
)

// TreeKind names where a record's program tree comes from.
type TreeKind string

// The tree sources RecordTree understands.
const (
	// TreeAuto picks by which fields are present: tree, ruleTree, program,
	// then the output (a COGS logical form: cogs; SELECT first: sparql;
	// "(" first: s-expression; else bracketed).
	TreeAuto TreeKind = "auto"
	// TreeSCAN reads the record's tree field (SCAN rule applications).
	TreeSCAN TreeKind = "scan"
	// TreeSCANRules derives the tree from the input, an original SCAN
	// command: Keysers et al.'s 38 rule applications (scan.RuleTree), what
	// SCAN's text files and gen scan-original store in the tree field.
	TreeSCANRules TreeKind = "scan-rules"
	// TreeSCANShi derives Shi et al.'s derivation tree from the input, a
	// command of their extended grammar (what gen scan stores).
	TreeSCANShi TreeKind = "scan-shi"
	// TreeRobustFill reads the program field: nested ["Op", arg...] arrays.
	TreeRobustFill TreeKind = "robustfill"
	// TreeBracketed parses the output as f(a, b) (COVR, GeoQuery FunQL).
	TreeBracketed TreeKind = "bracketed"
	// TreeSExpr parses the output as ( f a b ) (Overnight-style).
	TreeSExpr TreeKind = "sexpr"
	// TreeCFQ reads a CFQ rule tree kept in Extra["ruleTree"].
	TreeCFQ TreeKind = "cfq"
	// TreeCOGS reads the output as a COGS logical form, linked by
	// variable (ParseCOGS).
	TreeCOGS TreeKind = "cogs"
	// TreeSPARQL reads the output as a CFQ SPARQL query, linked by
	// variable (ParseSPARQL), for CFQ data without rule trees.
	TreeSPARQL TreeKind = "sparql"
)

// TreeKinds lists every kind, for flag help.
var TreeKinds = []TreeKind{TreeAuto, TreeSCAN, TreeSCANRules, TreeSCANShi, TreeRobustFill, TreeBracketed, TreeSExpr, TreeCFQ, TreeCOGS, TreeSPARQL}

// ParseTreeKind checks a --tree value.
func ParseTreeKind(s string) (TreeKind, error) {
	for _, k := range TreeKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown tree kind %q (want one of %v)", s, TreeKinds)
}

// RecordTree returns r's program tree read as kind.
func RecordTree(r *data.Record, kind TreeKind) (*data.Tree, error) {
	if kind == TreeAuto {
		kind = autoKind(r)
	}
	switch kind {
	case TreeSCAN:
		if r.Tree == nil {
			return nil, fmt.Errorf("record %q has no \"tree\" field", r.ID)
		}
		return r.Tree, nil
	case TreeSCANRules, TreeSCANShi:
		c, err := scan.Parse(r.Input)
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		if kind == TreeSCANShi {
			return c.Tree(), nil
		}
		return c.RuleTree()
	case TreeRobustFill:
		if len(r.Program) == 0 {
			return nil, fmt.Errorf("record %q has no \"program\" field", r.ID)
		}
		t, err := ParseProgramJSON(r.Program)
		if err != nil {
			return nil, fmt.Errorf("program: %w", err)
		}
		return t, nil
	case TreeBracketed:
		t, err := ParseBracketed(r.Output)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		return t, nil
	case TreeSExpr:
		t, err := ParseSExpr(r.Output)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		return t, nil
	case TreeCOGS:
		t, err := ParseCOGS(r.Output)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		return t, nil
	case TreeSPARQL:
		t, err := ParseSPARQL(r.Output)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		return t, nil
	case TreeCFQ:
		raw, ok := r.Extra["ruleTree"]
		if !ok {
			return nil, fmt.Errorf("record %q has no \"ruleTree\" field", r.ID)
		}
		t, err := ParseRuleTree(raw)
		if err != nil {
			return nil, fmt.Errorf("ruleTree: %w", err)
		}
		return t, nil
	}
	return nil, fmt.Errorf("unknown tree kind %q", kind)
}

func autoKind(r *data.Record) TreeKind {
	switch {
	case r.Tree != nil:
		return TreeSCAN
	case r.Extra["ruleTree"] != nil:
		return TreeCFQ
	case len(r.Program) > 0:
		return TreeRobustFill
	case isCOGSForm(r.Output):
		return TreeCOGS
	case strings.HasPrefix(r.Output, "SELECT "):
		return TreeSPARQL
	case strings.HasPrefix(strings.TrimSpace(r.Output), "("):
		return TreeSExpr
	}
	return TreeBracketed
}

// ParseProgramJSON reads a RobustFill program: ["Op", arg...] is a node Op
// whose children are its arguments; a scalar argument is a leaf labelled by
// its value (strings unquoted, numbers and booleans as written). A list of
// expressions (the program is a concatenation) becomes a root "Concat" with
// one child per expression, matching the DSL's top-level Concat.
func ParseProgramJSON(raw json.RawMessage) (*data.Tree, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after program")
	}
	if l, ok := v.([]any); ok && len(l) > 0 {
		if _, isOp := l[0].(string); !isOp {
			root := &data.Tree{Label: "Concat"}
			for i, e := range l {
				c, err := programNode(e, 0)
				if err != nil {
					return nil, fmt.Errorf("expression %d: %w", i+1, err)
				}
				root.Children = append(root.Children, c)
			}
			return root, nil
		}
	}
	return programNode(v, 0)
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 1000

func programNode(v any, depth int) (*data.Tree, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	switch x := v.(type) {
	case string:
		return &data.Tree{Label: x}, nil
	case json.Number:
		return &data.Tree{Label: x.String()}, nil
	case bool:
		return &data.Tree{Label: fmt.Sprint(x)}, nil
	case []any:
		if len(x) == 0 {
			return nil, fmt.Errorf("empty expression []")
		}
		op, ok := x[0].(string)
		if !ok {
			return nil, fmt.Errorf("expression must start with an operation name, got %v", x[0])
		}
		n := &data.Tree{Label: op}
		for _, a := range x[1:] {
			c, err := programNode(a, depth+1)
			if err != nil {
				return nil, err
			}
			n.Children = append(n.Children, c)
		}
		return n, nil
	case nil:
		return nil, fmt.Errorf("null in program")
	}
	return nil, fmt.Errorf("unsupported program value %v", v)
}

// ParseRuleTree reads a CFQ rule tree {"ruleId": ..., "subTree": [...]}.
// A ruleId may be a string or an object; an object {"type","stringValue"}
// becomes "type:stringValue" and any other object its compact JSON with
// sorted keys, so the label is stable. Numbers keep their digits (two ids
// past 2^53 would otherwise share a label) and <, >, & stay as written.
func ParseRuleTree(raw json.RawMessage) (*data.Tree, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the rule tree")
	}
	return ruleNode(v, 0)
}

func ruleNode(v any, depth int) (*data.Tree, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("rule tree node is not an object")
	}
	id, ok := m["ruleId"]
	if !ok {
		return nil, fmt.Errorf("rule tree node has no ruleId")
	}
	n := &data.Tree{Label: ruleLabel(id)}
	if n.Label == "" {
		return nil, fmt.Errorf("rule tree node has an empty ruleId")
	}
	sub, _ := m["subTree"].([]any)
	if st, ok := m["subTree"]; ok && st != nil && sub == nil {
		return nil, fmt.Errorf("subTree is not a list")
	}
	for _, s := range sub {
		c, err := ruleNode(s, depth+1)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
	}
	return n, nil
}

func ruleLabel(id any) string {
	switch x := id.(type) {
	case string:
		return x
	case map[string]any:
		t, tok := x["type"].(string)
		s, sok := x["stringValue"].(string)
		if tok && sok && len(x) == 2 {
			return t + ":" + s
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(compactJSON(k))
			b.WriteByte(':')
			b.WriteString(compactJSON(x[k]))
		}
		b.WriteByte('}')
		return b.String()
	}
	return compactJSON(id)
}

// compactJSON encodes decoded JSON back (it always re-encodes; maps sort
// their keys) without escaping <, > and &.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// TreeError is a record whose program does not parse, in file Path.
type TreeError struct {
	Path, ID string
	Err      error
}

func (e *TreeError) Error() string { return fmt.Sprintf("%s: record %q: %v", e.Path, e.ID, e.Err) }
func (e *TreeError) Unwrap() error { return e.Err }

// RecordTrees parses each record's program (read from file path); with
// skipBad, records whose program does not parse are dropped and counted,
// otherwise the first one is a *TreeError.
func RecordTrees(path string, recs []data.Record, kind TreeKind, skipBad bool) ([]data.Record, []*data.Tree, int, error) {
	var keep []data.Record
	var trees []*data.Tree
	bad := 0
	for i := range recs {
		t, err := RecordTree(&recs[i], kind)
		if err != nil {
			if !skipBad {
				return nil, nil, 0, &TreeError{path, recs[i].ID, err}
			}
			bad++
			continue
		}
		keep = append(keep, recs[i])
		trees = append(trees, t)
	}
	return keep, trees, bad, nil
}
