package data

import (
	"strings"
)

// Tree is a derivation or program tree: a label and ordered children.
// SCAN records store the grammar rules applied to produce a command; the
// structure package turns trees into atoms, compounds and local structures.
type Tree struct {
	// Label is the rule name (SCAN) or symbol (programs).
	Label string `json:"label"`
	// Children are the sub-derivations in left-to-right order.
	Children []*Tree `json:"children,omitempty"`
}

// String renders the tree as "label(child, child)" for messages and tests.
func (t *Tree) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Tree) write(b *strings.Builder) {
	if t == nil {
		b.WriteString("<nil>")
		return
	}
	b.WriteString(t.Label)
	if len(t.Children) == 0 {
		return
	}
	b.WriteByte('(')
	for i, c := range t.Children {
		if i > 0 {
			b.WriteString(", ")
		}
		c.write(b)
	}
	b.WriteByte(')')
}

// Size is the number of nodes in the tree.
func (t *Tree) Size() int {
	if t == nil {
		return 0
	}
	n := 1
	for _, c := range t.Children {
		n += c.Size()
	}
	return n
}

// Walk calls fn on every node in pre-order.
func (t *Tree) Walk(fn func(*Tree)) {
	if t == nil {
		return
	}
	fn(t)
	for _, c := range t.Children {
		c.Walk(fn)
	}
}
