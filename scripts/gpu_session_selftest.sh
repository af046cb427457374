#!/usr/bin/env bash
# gpu_session_selftest.sh (scripts/gpu_session.sh --self-test, part of make
# test-scripts): runs the session script on stand-in kits whose binaries are
# shell scripts, in seconds and without a GPU, and checks its exit status
# and summary against each:
#
#   fail     every binary fails at once: exit 1, FAILED lines, every
#            section still run, the result line says FAILED
#   pass     every binary succeeds, runs on cuda and cpu agree, the
#            benchmarks print numbers (PyTorch a stand-in python too):
#            exit 0, no FAILED, the benchmark table filled and its ratios
#   diverge  the cuda runs' losses, weights and outputs differ from the
#            CPU's and between repeats, and the engine test binary never
#            returns: each comparison FAILED, the repeats DIFFER, the
#            engine tests TIMED OUT at their step's timeout (capped to
#            10 s) while the rest still runs; exit 1
#
# SELFTEST_KITS="pass" runs only the kits named; SELFTEST_KEEP=1 keeps the
# temporary folder with every kit's output.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
d=$(mktemp -d) || exit 1
# shellcheck disable=SC2064 # d is fixed now
[ -n "${SELFTEST_KEEP:-}" ] || trap "rm -rf '$d'" EXIT

# kit KIND: a stand-in kit in $d/kit-KIND.
kit() {
	local k=$1 dir=$d/kit-$1 f
	mkdir -p "$dir"
	echo "tags: gpu (stand-in kit of gpu_session.sh --self-test)" >"$dir/MANIFEST"
	if [ "$k" = fail ]; then
		for f in compbench kernels.test engine.test; do
			printf '#!/bin/sh\necho "FAIL: stand-in %s"\nexit 1\n' "$f" >"$dir/$f"
		done
		chmod +x "$dir"/*
		return
	fi
	# compbench: train and finetune write a run folder (weights, Adam
	# state, metrics), predict and score an output; on cuda the diverging
	# kit writes values that differ from the CPU's and from run to run.
	cat >"$dir/compbench" <<STUB
#!/bin/sh
cmd=\$1 out= dev=cpu
while [ \$# -gt 0 ]; do
	case \$1 in --out) out=\$2 ;; --device) dev=\$2 ;; esac
	shift
done
v=1.5
if [ "$k" = diverge ] && [ "\$dev" != cpu ]; then v=\$((\$\$ % 97 + 2)); fi
echo "\$cmd: engine executor on \$dev (stand-in), GEMM stand-in (auto)" >&2
case \$cmd in
gen) mkdir -p "\$out" ;;
train | finetune)
	mkdir -p "\$out"
	echo "weights \$v" >"\$out/model.safetensors"
	echo "adam \$v" >"\$out/optim.safetensors"
	printf '{"grad_norm":1,"loss":%s,"lr":0.001,"step":2,"tokens_per_s":100}\n{"dev_em":0,"dev_loss":%s,"step":2}\n' "\$v" "\$v" >"\$out/metrics.jsonl"
	;;
predict | score) printf '{"id":"1","prediction":"JUMP","score":-%s}\n' "\$v" >"\$out" ;;
esac
STUB
	printf '#!/bin/sh\necho "--- PASS: TestStandIn (0.00s)"\necho PASS\n' >"$dir/kernels.test"
	if [ "$k" = diverge ]; then
		printf '#!/bin/sh\nexec sleep 60\n' >"$dir/engine.test"
	else
		cat >"$dir/engine.test" <<'STUB'
#!/bin/sh
re=
while [ $# -gt 0 ]; do [ "$1" = -test.bench ] && re=$2; shift; done
if [ -n "$re" ]; then
	for b in TrainStep GPT2Score LSTMTrainStep T5TrainStep T5Decode; do
		echo "BenchmarkGPU$b" | grep -Eq "$re" &&
			echo "BenchmarkGPU$b-16   	      20	   1000 ns/op	 1.000 ms/step	 2000 tokens/s"
	done
	exit 0
fi
echo "--- PASS: TestGPUStandIn (0.00s)"
echo PASS
STUB
	fi
	chmod +x "$dir"/*
}

# python: a stand-in for PyTorch's interpreter: torch "sees" a GPU, the
# checkpoints are files, every benchmark prints 1000 tokens/s.
cat >"$d/python" <<'STUB'
#!/bin/sh
case "$*" in
*torch.cuda.is_available*) echo "torch 0.0 built for CUDA 0.0 cuda available True stand-in GPU" ;;
*random-checkpoint*) mkdir -p "$3" && echo w >"$3/model.safetensors" && echo '{}' >"$3/config.json" ;;
*bench_torch_*) echo "pytorch ms/step 1.000"; echo "pytorch tokens/s 1000.0 (stand-in)" ;;
esac
STUB
chmod +x "$d/python"
# The comparisons run python3: the interpreter itself, not a version
# manager's shim that costs seconds per call.
mkdir -p "$d/bin"
py3=$(python3 -c 'import sys; print(sys.executable)') && ln -s "$py3" "$d/bin/python3" && PATH=$d/bin:$PATH

ok=1
for k in ${SELFTEST_KITS:-fail pass diverge}; do
	kit "$k"
	env=(KIT="$d/kit-$k" BUDGET_S=300 PYTHON="$d/python")
	case $k in
	fail) env+=(PYTHON="$d/no-python" QUICK=1) ;;
	diverge) env+=(STEP_TIMEOUT_MAX=10 QUICK=1) ;;
	esac
	env -u FORCE -u QUICK "${env[@]}" scripts/gpu_session.sh "$d/out-$k" >"$d/$k.log" 2>&1
	rc=$?
	sum=$d/out-$k/summary.txt
	why=
	has() { grep -q -- "$1" "$sum" || why="$why; no line matching \"$1\""; }
	hasnt() { ! grep -q -- "$1" "$sum" || why="$why; a line matching \"$1\""; }
	case $k in
	fail)
		[ "$rc" = 1 ] || why="exit $rc, want 1"
		has ': FAILED, exit 1'
		for s in a b c d; do has "^== $s\. "; done
		has '^result: FAILED'
		;;
	pass)
		[ "$rc" = 0 ] || why="exit $rc, want 0"
		hasnt 'FAILED\|TIMED OUT\|DIFFER\|budget is spent'
		has '^result: ok, nothing failed'
		has 'repeat of cuda-transformer: weights and Adam state identical'
		has '^  transformer *2000 *2000 *2000 *1000.0 *1000.0 *1000.0 *2.00 *2.00 *2.00$'
		has '^  t5-decode *2000 *2000 *- '
		has 'judged: loss, dev_loss within 2e-02 of the CPU run: all runs'
		;;
	diverge)
		[ "$rc" = 1 ] || why="exit $rc, want 1"
		for s in cmp-transformer cmp-universal-act cmp-lstm-copy-tenc cmp-predict-bart cmp-finetune cmp-score-folds; do
			has "^  $s: FAILED"
		done
		has 'repeat of cuda-transformer-tf32: weights or Adam state DIFFER'
		has '^  engine-gpu-tests: TIMED OUT after 10 s'
		hasnt 'kernels-parity: TIMED OUT'
		has '^== d\. '
		has '^result: FAILED: .*cmp-bart.*engine-gpu-tests'
		;;
	esac
	if [ -n "$why" ]; then
		cat "$d/$k.log"
		echo "gpu_session self-test: the $k kit: ${why#; }" >&2
		ok=0
	fi
done
[ "$ok" = 1 ] || exit 1
echo "gpu_session self-test: ok (failing, passing, and diverging and hanging stand-in kits; exit status and summary agree)"
