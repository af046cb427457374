package kernels

// EmbedRef computes ops.Embed: y [N,D] row i = table [V,D] row ids[i]. Ids
// must lie in [0,V) (CheckIDs).
func EmbedRef(n, d int, table []float32, ids []int32, y []float32) {
	for i := 0; i < n; i++ {
		id := int(ids[i])
		copy(y[i*d:(i+1)*d], table[id*d:(id+1)*d])
	}
}

// EmbedGradRef computes ops' GradEmbed: dtable [V,D] = scatter-add of dy
// [N,D] rows into rows ids, in increasing i (the GPU kernel keeps that
// order per column, so it is deterministic and bit-identical).
func EmbedGradRef(v, d, n int, dy []float32, ids []int32, dtable []float32) {
	clear(dtable[:v*d])
	for i := 0; i < n; i++ {
		id := int(ids[i])
		dst, src := dtable[id*d:(id+1)*d], dy[i*d:(i+1)*d]
		for j, x := range src {
			dst[j] += x
		}
	}
}

// RelBiasRef computes ops.RelativeBias: y [1,H,Tq,Tk] at (h, p) =
// table [NB,H] at (buckets[p], h), with buckets [Tq*Tk] in [0,NB).
func RelBiasRef(nb, h, tq, tk int, table []float32, buckets []int32, y []float32) {
	n := tq * tk
	for k := 0; k < h; k++ {
		for p := 0; p < n; p++ {
			y[k*n+p] = table[int(buckets[p])*h+k]
		}
	}
}

// RelBiasGradRef computes ops' GradRelBias: dtable [NB,H] = scatter-add of
// dy [1,H,Tq,Tk] by bucket, in increasing position per head.
func RelBiasGradRef(nb, h, tq, tk int, dy []float32, buckets []int32, dtable []float32) {
	n := tq * tk
	clear(dtable[:nb*h])
	for k := 0; k < h; k++ {
		for p := 0; p < n; p++ {
			dtable[int(buckets[p])*h+k] += dy[k*n+p]
		}
	}
}
