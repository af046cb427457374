#!/usr/bin/env bash
# ptx_check.sh: assembles the committed PTX (kernels/ptx) for each GPU
# architecture compbench targets and checks what only a GPU would otherwise
# report, at launch time or as lost speed:
#
#   - ptxas errors (PTX the driver's JIT compiler would reject);
#   - register spills to local memory;
#   - registers × threads per block above the 65,536 registers of a
#     multiprocessor ("too many resources requested for launch"), with the
#     block size taken from the kernel's __launch_bounds__ or else the
#     1,024-thread maximum any launcher may use;
#   - static shared memory above 48 KiB.
#
# Prints one line per kernel and architecture with -v. Needs ptxas from the
# CUDA toolkit (make cuda-toolkit). PTX_ARCHS overrides the architectures.
set -euo pipefail
cd "$(dirname "$0")/.."
PTXAS=${PTXAS:-ptxas}
ARCHS=${PTX_ARCHS:-sm_80 sm_86 sm_89 sm_90}
verbose=${1:-}
fail=0
for ptx in kernels/ptx/*.ptx; do
	src=kernels/$(basename "$ptx" .ptx).cu
	# "name bound" for every kernel declared with __launch_bounds__(bound).
	bounds=$(grep -ho '__launch_bounds__([0-9]*) *[A-Za-z_0-9]*' "$src" | sed 's/__launch_bounds__(\([0-9]*\)) *\(.*\)/\2 \1/' | tr '\n' ';' || true)
	for arch in $ARCHS; do
		if ! out=$("$PTXAS" -arch="$arch" -v -o /dev/null "$ptx" 2>&1); then
			echo "ptx_check: $ptx does not assemble for $arch:"
			echo "$out" | grep -v '^ptxas info' | head -10
			fail=1
			continue
		fi
		echo "$out" | awk -v arch="$arch" -v ptx="$ptx" -v bounds="$bounds" -v verbose="$verbose" '
			BEGIN {
				n = split(bounds, b, ";")
				for (i = 1; i <= n; i++) if (b[i] != "") { split(b[i], kv, " "); bound[kv[1]] = kv[2] }
			}
			function check() {
				if (fn == "") return
				t = (fn in bound) ? bound[fn] : 1024
				why = ""
				if (spill > 0) why = why " spills " spill " bytes;"
				if (regs * t > 65536) why = why " " regs " registers x " t " threads > 65536;"
				if (smem > 49152) why = why " " smem " bytes of static shared memory > 48 KiB;"
				if (why != "") { printf "ptx_check: %s %s (%s):%s\n", ptx, fn, arch, why; bad = 1 }
				else if (verbose == "-v") printf "%-10s %-24s %3d registers, %5d bytes smem, block <= %d\n", arch, fn, regs, smem, t
				fn = ""
			}
			/Compiling entry function/ { check(); fn = $(NF - 2); gsub(/\047/, "", fn); regs = 0; smem = 0; spill = 0 }
			/spill stores/ { spill = $5 + $9 }
			/Used [0-9]+ registers/ {
				for (i = 1; i <= NF; i++) {
					if ($(i + 1) ~ /^registers/) regs = $i
					if ($(i + 1) == "bytes" && $(i + 2) == "smem") smem = $i
				}
			}
			END { check(); exit bad }' || fail=1
	done
done
if [ "$fail" -ne 0 ]; then
	echo "ptx_check: failed"
	exit 1
fi
echo "ptx_check: every kernel assembles for $ARCHS within the register, shared memory and spill limits"
