# Sourced by the GPU scripts. cublas_path PYTHON prints the folder of the
# cuBLAS that pip's CUDA PyTorch brings (nvidia/cublas/lib or nvidia/cu13/lib
# next to torch) when no system cuBLAS is on the loader's path, for the
# caller to add to LD_LIBRARY_PATH (COMPBENCH_GEMM=cublas loads it at run
# time); it prints nothing otherwise.
cublas_path() {
	local py=$1 site dir
	ldconfig -p 2>/dev/null | grep -q 'libcublas\.so' && return 0
	site=$(timeout 60 "$py" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null) || return 0
	[ -n "$site" ] || return 0
	dir=$(find "$site/nvidia" "$site/torch/lib" -name 'libcublas.so*' 2>/dev/null | sort | head -1)
	dir=${dir%/*}
	if [ -n "$dir" ] && [ -d "$dir" ]; then
		echo "$dir"
	fi
	return 0
}
