# Sourced by the side-by-side benchmark scripts: thread settings that are
# fair to both sides on $THREADS cores.
#
# Debian's PyTorch runs its products in the system OpenBLAS, whose thread
# pool torch.set_num_threads does not limit. Unset, OpenBLAS takes every
# core, so a "1-thread" PyTorch step used both cores of a 2-core machine;
# set to $THREADS beside $THREADS intra-op threads, the two pools
# oversubscribe the cores and PyTorch runs up to twice slower. torch_best
# therefore runs PyTorch in each split of $THREADS between the two pools
# and keeps its fastest; compbench gets GOMAXPROCS=$THREADS and
# OPENBLAS_NUM_THREADS=$THREADS (its Go ops and BLAS calls do not overlap).

export OPENBLAS_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS

# torch_best lower|higher CMD...: runs CMD --threads T under each thread
# split; CMD's first line is "pytorch UNIT VALUE ..." (the bench_torch_*.py
# scripts print a tokens/s line after it). Puts the first line of the best
# VALUE (lower or higher is better), its split appended, in TORCH_LINE,
# and that split's thread counts in TORCH_THREADS and TORCH_BLAS.
torch_best() {
	local better=$1 best="" bestv="" line v t b
	shift
	local splits="1:1"
	[ "$THREADS" -gt 1 ] && splits="$THREADS:1 1:$THREADS"
	for s in $splits; do
		t=${s%:*} b=${s#*:}
		line=$(OPENBLAS_NUM_THREADS=$b OMP_NUM_THREADS=$t "$@" --threads "$t" | awk 'NR == 1')
		v=$(echo "$line" | awk '{print $3}')
		if [ -z "$bestv" ] || awk -v v="$v" -v w="$bestv" -v m="$better" 'BEGIN {exit !((m == "lower") ? v < w : v > w)}'; then
			best="$line [torch threads $t, OpenBLAS threads $b]" bestv=$v
			TORCH_THREADS=$t TORCH_BLAS=$b
		fi
	done
	TORCH_LINE=$best
}
