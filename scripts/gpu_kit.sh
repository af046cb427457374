#!/usr/bin/env bash
# gpu_kit.sh builds what scripts/gpu_session.sh runs on a GPU machine that
# has no Go toolchain: the compbench binary and the kernels and engine test
# binaries, built with -tags gpu, gzip-compressed into one folder (default
# gpu-kit/, ignored by git) with a MANIFEST. Copy the folder next to the
# repository on the GPU machine (docs/gpu-session.md).
#
#   GPU_KIT_DIR   output folder (default gpu-kit)
#   GPU_KIT_TAGS  GPU build tag: gpu (default) or gpuemu (the CPU emulator of
#                 the GPU path, for trying the session script without a GPU)
#   GPU_KIT_BLAS  purego (default): gonum's pure-Go BLAS for the CPU side, so
#                 the binaries need no libopenblas on the GPU machine;
#                 openblas links the system OpenBLAS instead
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
KIT=${GPU_KIT_DIR:-gpu-kit}
TAGS=${GPU_KIT_TAGS:-gpu}
BLAS=${GPU_KIT_BLAS:-purego}
LIMIT=$((64 * 1024 * 1024)) # what a GPU machine's file transfer may take

case "$TAGS" in
gpu | gpuemu) ;;
*) echo "gpu_kit: GPU_KIT_TAGS must be gpu or gpuemu, not \"$TAGS\"" >&2; exit 2 ;;
esac
case "$BLAS" in
purego) tags="$TAGS,purego" ;;
openblas) tags="$TAGS" ;;
*) echo "gpu_kit: GPU_KIT_BLAS must be purego or openblas, not \"$BLAS\"" >&2; exit 2 ;;
esac
if [ "$TAGS" = gpu ] && [ ! -e /usr/include/cuda.h ]; then
	echo "gpu_kit: the gpu build needs cuda.h; run make cuda-toolkit first" >&2
	exit 1
fi

# Build into a fresh folder and swap it in at the end: a failed build never
# leaves a half-made kit behind.
tmp="$KIT.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
ld='-s -w' # no symbol table or DWARF: about a third smaller; panics still print file:line
echo "gpu_kit: building with -tags $tags"
$GO build -tags "$tags" -ldflags="$ld" -o "$tmp/compbench" ./cmd/compbench
$GO test -tags "$tags" -ldflags="$ld" -c -o "$tmp/kernels.test" ./kernels
$GO test -tags "$tags" -ldflags="$ld" -c -o "$tmp/engine.test" ./engine

glibc=$(objdump -T "$tmp/compbench" "$tmp/kernels.test" "$tmp/engine.test" 2>/dev/null |
	grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1 || true)
{
	echo "tags: $tags"
	echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "go: $($GO env GOVERSION) $($GO env GOOS)/$($GO env GOARCH)"
	echo "needs: ${glibc:-unknown} or newer; $(ldd "$tmp/compbench" 2>/dev/null | awk '/=>/ {print $1}' | sort | tr '\n' ' ')"
	for f in compbench kernels.test engine.test; do
		echo "sha256: $(sha256sum "$tmp/$f" | awk '{print $1}') $f"
	done
} >"$tmp/MANIFEST"
# gzip -n: no name or time stamp, so the same binaries give the same kit.
for f in compbench kernels.test engine.test; do
	gzip -9 -n "$tmp/$f"
done

rm -rf "$KIT"
mv "$tmp" "$KIT"
trap - EXIT
size=$(du -cb "$KIT"/* | awk 'END {print $1}')
cat "$KIT/MANIFEST"
ls -l "$KIT"
awk -v s="$size" -v l="$LIMIT" -v k="$KIT" 'BEGIN {printf "gpu_kit: %s/ holds %.1f MiB (limit %.0f MiB)\n", k, s / 1048576, l / 1048576}'
if [ "$size" -gt "$LIMIT" ]; then
	echo "gpu_kit: the kit is over the limit" >&2
	exit 1
fi
