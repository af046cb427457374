package models

import (
	"fmt"
	"math"
)

// MaskNames are the decoder self-attention masks (Shi et al. §4).
var MaskNames = []string{"causal", "sep-full", "sep-to-sep-and-last", "sep-to-last"}

// DecoderMask says which decoder input positions may attend to which:
// allowed[i*T+j] for query i and key j over x_0..x_{T-1}, where x_0 is the
// start token, which counts as a separator. With C[i,j] = j <= i, k_i the
// number of separators among x_0..x_i, P[i,j] = C[i,j] and k_i = k_j, and
// BB[i,j] = C[i,j] and x_i, x_j both separators: non-separator rows use P;
// separator rows use P or B, where B = C (sep-full), B[i,j] = BB[i,j+1]
// (sep-to-last: the last token of each earlier part), or BB[i,j] or
// BB[i,j+1] (sep-to-sep-and-last). Positions at or beyond n (padding) never
// attend or are attended to.
func DecoderMask(kind string, x []int, n int) ([]bool, error) {
	T := len(x)
	out := make([]bool, T*T)
	sep := func(i int) bool { return i < n && x[i] == SepID }
	k := make([]int, T)
	for i, c := 0, 0; i < T; i++ {
		if sep(i) {
			c++
		}
		k[i] = c
	}
	bb := func(i, j int) bool { return j <= i && j < n && sep(i) && sep(j) }
	for i := 0; i < n && i < T; i++ {
		for j := 0; j <= i; j++ {
			var ok bool
			switch kind {
			case "causal":
				ok = true
			case "sep-full", "sep-to-last", "sep-to-sep-and-last":
				ok = k[i] == k[j]
				if !ok && sep(i) {
					switch kind {
					case "sep-full":
						ok = true
					case "sep-to-last":
						ok = bb(i, j+1)
					default:
						ok = bb(i, j) || bb(i, j+1)
					}
				}
			default:
				return nil, fmt.Errorf("unknown mask %q (known: %v)", kind, MaskNames)
			}
			out[i*T+j] = ok
		}
	}
	return out, nil
}

// RelBucket maps the relative position rel = key - query to one of
// buckets buckets, T5 style (Raffel et al. 2020): exact below half the
// buckets, log-spaced up to maxDist, clipped beyond. Bidirectional
// (encoder) buckets give half the buckets to each sign; causal (decoder)
// ones treat positive distances as 0.
func RelBucket(rel int, bidirectional bool, buckets, maxDist int) int {
	ret, n := 0, -rel
	if bidirectional {
		buckets /= 2
		if n < 0 {
			ret += buckets
			n = -n
		}
	} else if n < 0 {
		n = 0
	}
	exact := buckets / 2
	if n < exact {
		return ret + n
	}
	v := exact + int(math.Log(float64(n)/float64(exact))/math.Log(float64(maxDist)/float64(exact))*float64(buckets-exact))
	return ret + min(v, buckets-1)
}
