#!/usr/bin/env bash
# cuda_binary_check.sh checks the gpu build as a lab deploys it (docs/cuda.md):
# the driver-function list is current, neither the binary nor a test
# binary depends on any CUDA library at load time (libcuda.so.1 included),
# and the binary trains with --device cpu where the driver library is
# absent, while --device cuda there stops with one clear line and no run
# folder.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
./scripts/gen_cudashim.sh --check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$GO build -tags gpu -o "$tmp/compbench" ./cmd/compbench
$GO test -tags gpu -c -o "$tmp/kernels.test" ./kernels
for b in "$tmp/compbench" "$tmp/kernels.test"; do
	if readelf -d "$b" | grep -E 'NEEDED.*(libcuda|libcudart|libcublas|libnvrtc|libcudnn)'; then
		echo "cuda-binary-check: $(basename "$b") depends on a CUDA library at load time; run scripts/gen_cudashim.sh (docs/cuda.md)" >&2
		exit 1
	fi
done
printf '{"id":"a","input":"walk","output":"I_WALK"}\n{"id":"b","input":"jump","output":"I_JUMP"}\n' >"$tmp/train.jsonl"
export COMPBENCH_LIBCUDA=/nonexistent/libcuda.so.1 # a node without the driver
"$tmp/compbench" train --model lstm-attention --preset cpu-small --train "$tmp/train.jsonl" --dev "$tmp/train.jsonl" \
	--steps 2 --out "$tmp/cpu" --device cpu >"$tmp/cpu.log" 2>&1 || { cat "$tmp/cpu.log"; echo "cuda-binary-check: --device cpu failed without a driver" >&2; exit 1; }
[ -e "$tmp/cpu/model.safetensors" ] || { echo "cuda-binary-check: --device cpu wrote no checkpoint" >&2; exit 1; }
rc=0
"$tmp/compbench" train --model lstm-attention --preset cpu-small --train "$tmp/train.jsonl" --dev "$tmp/train.jsonl" \
	--steps 2 --out "$tmp/gpu" --device cuda >"$tmp/gpu.log" 2>&1 || rc=$?
if [ "$rc" != 1 ] || [ -e "$tmp/gpu" ] || ! grep -q 'no usable NVIDIA GPU/driver on this machine (/nonexistent/libcuda.so.1: cannot open' "$tmp/gpu.log" || [ "$(wc -l <"$tmp/gpu.log")" != 1 ]; then
	cat "$tmp/gpu.log"
	echo "cuda-binary-check: --device cuda without a driver: want exit 1, one line naming the missing library and no run folder (got exit $rc)" >&2
	exit 1
fi
echo "cuda-binary-check: ok (no load-time CUDA dependency; --device cpu runs without a driver; --device cuda refuses in one line)"
