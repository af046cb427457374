package transformer

import (
	"fmt"

	"compbench/engine"
)

// decodeBufs are the decoding buffers on the backend, kept from one
// decoding to the next and grown when one needs more. The bound ones are
// the step programs' inputs of those names (bound when a program's
// machine is made), so growing one drops the programs.
type decodeBufs struct {
	be    engine.Backend
	bound map[string]*sized
	// spare [maxLen*B, D] is Reorder's gather target; zero [D] and the
	// int32 zeroID [1] are constants; lp [B, V] the log-probabilities;
	// topV [B, k] and pick int32 [B, k] the choices, pickLP float64 [B]
	// their log-probabilities; order int32 [maxLen*B] the rows a gather
	// takes.
	spare, zero, lp, topV       sized
	pick, order, zeroID, pickLP sized
}

// sized is a buffer of n elements of kind.
type sized struct {
	buf  engine.Buf
	n    int
	kind bufKind
}

type bufKind int

const (
	f32 bufKind = iota
	i32
	f64
)

// fit makes s hold at least n elements, reallocating (contents lost) when
// it holds fewer; it reports whether it reallocated.
func (d *decodeBufs) fit(s *sized, n int) (bool, error) {
	if s.buf != nil && s.n >= n {
		return false, nil
	}
	d.free(s)
	alloc := map[bufKind]func(int) (engine.Buf, error){f32: d.be.Alloc, i32: d.be.AllocInt, f64: d.be.AllocF64}[s.kind]
	buf, err := alloc(max(n, 1))
	if err != nil {
		return false, err
	}
	s.buf, s.n = buf, n
	return true, nil
}

func (d *decodeBufs) free(s *sized) {
	if s.buf != nil {
		d.be.Free(s.buf)
	}
	s.buf, s.n = nil, 0
}

// fitBound sizes the bound buffers for B rows, S memory positions and
// maxLen positions of a model with nSelf self-attentions and nCross
// distinct cross-attentions of width D; it reports whether any was
// reallocated (the programs bound to them must go).
func (d *decodeBufs) fitBound(B, S, maxLen, D, nSelf, nCross int) (bool, error) {
	if d.bound == nil {
		d.bound = map[string]*sized{}
	}
	need := map[string]int{crossBiasName: B * S}
	for i := 0; i < nSelf; i++ {
		need[fmt.Sprintf("%s.%d", cacheKName, i)] = maxLen * B * D
		need[fmt.Sprintf("%s.%d", cacheVName, i)] = maxLen * B * D
	}
	for i := 0; i < nCross; i++ {
		need[fmt.Sprintf("%s.%d", crossKName, i)] = B * S * D
		need[fmt.Sprintf("%s.%d", crossVName, i)] = B * S * D
	}
	grown := false
	for name, n := range need {
		s, ok := d.bound[name]
		if !ok {
			s = &sized{}
			d.bound[name] = s
		}
		// Doubled: batches of growing source lengths then reallocate (and
		// recompile) a few times, not at every length.
		if s.buf != nil && s.n < n {
			n = max(n, 2*s.n)
		}
		re, err := d.fit(s, n)
		if err != nil {
			return grown, err
		}
		grown = grown || re
	}
	return grown, nil
}

// fitRest sizes the unbound buffers and sets the constants.
func (d *decodeBufs) fitRest(B, maxLen, D, V int) error {
	d.pick.kind, d.order.kind, d.zeroID.kind, d.pickLP.kind = i32, i32, i32, f64
	for _, f := range []struct {
		s *sized
		n int
	}{{&d.spare, maxLen * B * D}, {&d.lp, B * V}, {&d.order, maxLen * B}, {&d.pickLP, B},
		{&d.zero, D}, {&d.zeroID, 1}} { // Alloc zeroes the constants
		if _, err := d.fit(f.s, f.n); err != nil {
			return err
		}
	}
	return nil
}

// fitPick sizes the choice buffers for k per row.
func (d *decodeBufs) fitPick(B, k int) error {
	if _, err := d.fit(&d.pick, B*k); err != nil {
		return err
	}
	_, err := d.fit(&d.topV, B*k)
	return err
}

// shared is the weights' buffers and the bound ones, by name.
func (d *decodeBufs) shared(weights map[string]engine.Buf) map[string]engine.Buf {
	for name, s := range d.bound {
		weights[name] = s.buf
	}
	return weights
}

// get is the bound buffer called name.
func (d *decodeBufs) get(prefix string, i int) engine.Buf {
	return d.bound[fmt.Sprintf("%s.%d", prefix, i)].buf
}

// copy copies n elements of src into dst: a gather of src's row 0, n wide.
func (d *decodeBufs) copy(n int, src, dst engine.Buf) error {
	return d.be.Embed(1, n, src, d.zeroID.buf, dst)
}

// close frees every buffer.
func (d *decodeBufs) close() {
	for _, s := range d.bound {
		d.free(s)
	}
	d.bound = nil
	for _, s := range []*sized{&d.spare, &d.zero, &d.lp, &d.topV, &d.pick, &d.order, &d.zeroID, &d.pickLP} {
		d.free(s)
	}
}
