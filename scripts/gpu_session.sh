#!/usr/bin/env bash
# gpu_session.sh OUTDIR: every GPU check and measurement of compbench in one
# go, on a GPU machine, from the repository root, with the kit of
# scripts/gpu_kit.sh (make gpu-kit) in gpu-kit/. Needs no Go; needs python3
# with a CUDA build of PyTorch for the side-by-side numbers. Writes one log
# per step and OUTDIR/summary.txt (also printed); see docs/gpu-session.md.
#
#   a. the GPU and driver (nvidia-smi), PyTorch's view of them
#   b. kernel parity tests and the engine's GPU tests (pass/fail per test)
#   c. benchmarks with COMPBENCH_GEMM=tf32 and fp32, PyTorch on the same GPU
#      with matmul.allow_tf32 True and False, and the throughput ratios
#   d. a short SCAN training run on cuda (TF32 and FP32 products, and
#      cuBLAS's where one loads) and on the CPU from the same seed: loss
#      columns side by side, max relative gap; the TF32 and cuBLAS runs
#      again, whose weights must be the first's byte for byte
#   e. short SCAN runs of lstm-attention, lstm-copy and lstm-copy with the
#      Transformer encoder on cuda (FP32 products) and on the CPU from the
#      same seed, compared the same way
#
# A failing or hanging step never stops the script: each runs under its own
# timeout, cut further so that the whole stays within BUDGET_S seconds. The
# exit status agrees with the summary: 0 when nothing failed, 1 when any
# step FAILED or TIMED OUT (or repeated runs DIFFER, or the kit lacks a
# binary), after every step has run and the summary's last line lists them.
#
#   scripts/gpu_session.sh --self-test   runs the script on two stand-in kits
#                      (every binary failing, every binary passing) and checks
#                      its exit status and summary against each; seconds, no GPU
#
#   KIT=gpu-kit        the kit folder
#   BUDGET_S=540       wall-clock budget of the whole session
#   QUICK=1            tiny sizes, for the emulator kit (GPU_KIT_TAGS=gpuemu)
#   PYTHON=python3     interpreter with torch
#   TORCH_DEVICE=cuda  PyTorch's device (cpu only to try the script's plumbing)
#   FORCE=1            write into a non-empty OUTDIR
#   ENGINE_GEMM_MODES="tf32 cublas fp32"  COMPBENCH_GEMM values of the engine
#                      benchmarks, in order (the budget cuts the last first)
set -uo pipefail
# The tests choose their product kernels themselves; the runs below set it.
unset COMPBENCH_GEMM
cd "$(dirname "$0")/.."
ROOT=$PWD

# self_test: the session on stand-in kits, where each binary is a shell
# script that fails (or passes) at once; the exit status and the summary
# must agree, and a failing kit must still run every step to the end.
self_test() {
	local d rc k ok=1
	d=$(mktemp -d) || exit 1
	# shellcheck disable=SC2064 # d is fixed now
	trap "rm -rf '$d'" EXIT
	for k in fail pass; do
		mkdir -p "$d/kit-$k"
		echo "tags: gpu (stand-in kit of gpu_session.sh --self-test)" >"$d/kit-$k/MANIFEST"
	done
	for f in compbench kernels.test engine.test; do
		printf '#!/bin/sh\necho "FAIL: stand-in %s"\nexit 1\n' "$f" >"$d/kit-fail/$f"
	done
	# The passing compbench writes the weight files the repeat runs compare.
	cat >"$d/kit-pass/compbench" <<'STUB'
#!/bin/sh
out=
while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
if [ -n "$out" ]; then
	mkdir -p "$out" && echo weights >"$out/model.safetensors" && echo adam >"$out/optim.safetensors"
fi
exit 0
STUB
	printf '#!/bin/sh\necho PASS\n' >"$d/kit-pass/kernels.test"
	cp "$d/kit-pass/kernels.test" "$d/kit-pass/engine.test"
	chmod +x "$d"/kit-*/*
	for k in fail pass; do
		env -u FORCE KIT="$d/kit-$k" QUICK=1 BUDGET_S=300 PYTHON="$d/no-python" \
			"$ROOT/scripts/gpu_session.sh" "$d/out-$k" >"$d/$k.log" 2>&1
		rc=$?
		local sum=$d/out-$k/summary.txt want
		case $k in
		fail) want="exit 1, FAILED lines, every step run" ;;
		pass) want="exit 0, no FAILED line" ;;
		esac
		if [ "$k" = fail ] && { [ "$rc" -ne 1 ] || ! grep -q ': FAILED, exit 1' "$sum" ||
			! grep -q '^== c. benchmarks' "$sum" || ! grep -q '^result: FAILED' "$sum"; }; then
			ok=0
		elif [ "$k" = pass ] && { [ "$rc" -ne 0 ] || grep -q 'FAILED' "$sum" || ! grep -q '^result: ok' "$sum"; }; then
			ok=0
		fi
		if [ "$ok" = 0 ]; then
			cat "$d/$k.log"
			echo "gpu_session self-test: the $k kit gave exit $rc; want $want" >&2
			exit 1
		fi
	done
	echo "gpu_session self-test: ok (a failing kit exits 1 after every step, a passing one 0)"
}
if [ "${1:-}" = --self-test ]; then
	self_test
	exit 0
fi

if [ $# -ne 1 ]; then
	echo "usage: scripts/gpu_session.sh OUTDIR" >&2
	exit 2
fi
OUT=$1
if [ -d "$OUT" ] && [ -n "$(ls -A "$OUT")" ] && [ -z "${FORCE:-}" ]; then
	echo "gpu_session: $OUT is not empty; choose another folder or set FORCE=1" >&2
	exit 2
fi
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
KIT=$(cd "${KIT:-gpu-kit}" 2>/dev/null && pwd) || {
	echo "gpu_session: no kit folder ${KIT:-gpu-kit}; build it with make gpu-kit" >&2
	exit 1
}
QUICK=${QUICK:-}
BUDGET_S=${BUDGET_S:-540}
PY=${PYTHON:-python3}
TORCH_DEVICE=${TORCH_DEVICE:-cuda}
NPROC=$(nproc 2>/dev/null || echo 4)
SUM=$OUT/summary.txt
# FAILS lists what failed, one name a line; a file, because steps also run
# in subshells.
FAILS=$OUT/.failed
T0=$SECONDS
: >"$SUM"
: >"$FAILS"

say() { echo "$*" | tee -a "$SUM"; }
elapsed() { echo $((SECONDS - T0)); }

# budget T: T cut to what is left of BUDGET_S, keeping 10 s for the summary.
budget() {
	local left=$((BUDGET_S - (SECONDS - T0) - 10))
	if [ "$1" -lt "$left" ]; then echo "$1"; else echo "$left"; fi
}

# step NAME TIMEOUT CMD...: runs CMD with its output in OUT/NAME.log and
# records the outcome in the summary. Returns CMD's status.
step() {
	local name=$1 t
	t=$(budget "$2")
	shift 2
	if [ "$t" -lt 5 ]; then
		say "  $name: skipped, the session budget is spent"
		return 125
	fi
	local s=$SECONDS rc
	timeout -k 10 "$t" "$@" >"$OUT/$name.log" 2>&1
	rc=$?
	note "$name" "$rc" "$t" $((SECONDS - s))
	return $rc
}

# note NAME RC TIMEOUT SECONDS: one summary line for a finished step; a
# failed one is also listed in FAILS.
note() {
	case $2 in
	0) say "  $1: ok ($4 s)" ;;
	124 | 137) say "  $1: TIMED OUT after $3 s (log: $1.log)" ;;
	*) say "  $1: FAILED, exit $2 ($4 s; log: $1.log)" ;;
	esac
	[ "$2" = 0 ] || echo "$1" >>"$FAILS"
}

# bg NAME TIMEOUT CMD...: step in the background; wait_bg NAME collects it.
declare -A BG_PID BG_T
bg() {
	local name=$1 t
	t=$(budget "$2")
	shift 2
	BG_T[$name]=$t
	(
		s=$(date +%s)
		timeout -k 10 "$t" "$@" >"$OUT/$name.log" 2>&1
		echo "$? $(($(date +%s) - s))" >"$OUT/.$name.rc"
	) &
	BG_PID[$name]=$!
}
wait_bg() {
	local name=$1
	wait "${BG_PID[$name]}"
	local rc took
	read -r rc took <"$OUT/.$name.rc" || rc=1
	rm -f "$OUT/.$name.rc"
	note "$name" "${rc:-1}" "${BG_T[$name]}" "${took:-?}"
	return "${rc:-1}"
}

# metric LOG BENCH UNIT: the value before UNIT on BENCH's line of a Go
# benchmark log.
metric() {
	awk -v b="^$2(-[0-9]+)?\$" -v u="$3" '$1 ~ b {for (i = 2; i < NF; i++) if ($(i+1) == u) v = $i} END {print v}' "$1" 2>/dev/null
}

# tests LOG: pass/fail/skip counts of a -test.v log and the failed names.
tests() {
	local p f s
	p=$(grep -c -- '--- PASS' "$1" 2>/dev/null)
	f=$(grep -c -- '--- FAIL' "$1" 2>/dev/null)
	s=$(grep -c -- '--- SKIP' "$1" 2>/dev/null)
	say "    tests passed $p, failed $f, skipped $s (subtests included)"
	grep -- '--- FAIL' "$1" 2>/dev/null | sed 's/^ *--- FAIL: /    FAIL: /' | head -20 | tee -a "$SUM"
	local skipped
	skipped=$(grep -- '--- SKIP' "$1" 2>/dev/null | sed 's/^ *--- SKIP: //; s/ (.*//' | head -12 | tr '\n' ' ')
	[ -n "$skipped" ] && say "    skipped: $skipped"
	grep -E '^(panic:|PASS$|FAIL$)' "$1" 2>/dev/null | tail -1 | sed 's/^/    last: /' | tee -a "$SUM"
}

# ratio A B: A/B to two decimals, or n/a.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", a / b; else printf "n/a"}'
}

say "compbench GPU session $(date -u '+%Y-%m-%dT%H:%M:%SZ') on $(hostname 2>/dev/null || cat /etc/hostname 2>/dev/null), ${NPROC} CPUs${QUICK:+, QUICK sizes}"
say "outputs: $OUT"

# ---- the kit ----
for f in compbench kernels.test engine.test; do
	if [ -f "$KIT/$f.gz" ] && [ ! -x "$KIT/$f" ]; then
		gzip -dc "$KIT/$f.gz" >"$KIT/$f" && chmod +x "$KIT/$f"
	fi
	[ -x "$KIT/$f" ] || { say "kit: $KIT/$f is missing; rebuild the kit with make gpu-kit"; echo "kit $f" >>"$FAILS"; }
done
say "kit:"
sed 's/^/  /' "$KIT/MANIFEST" 2>/dev/null | grep -v sha256 | tee -a "$SUM"
say "  this machine: $(ldd --version 2>&1 | head -1)"
EMU=
grep -q 'tags: gpuemu' "$KIT/MANIFEST" 2>/dev/null && EMU=1
[ -n "$EMU" ] && say "  the kit is the CPU emulator's build (gpuemu): correctness only; its timings mean nothing"

# ---- a. device ----
say ""
say "== a. device"
if command -v nvidia-smi >/dev/null 2>&1; then
	step nvidia-smi 30 nvidia-smi
	q=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1)
	say "  GPU: $q"
	say "  $(grep -o 'CUDA Version: [0-9.]*' "$OUT/nvidia-smi.log" | head -1)"
else
	say "  nvidia-smi: not found"
fi
TORCH_CUDA=0
torch_info=$(timeout 120 "$PY" -c 'import torch
c = torch.cuda.is_available()
print("torch", torch.__version__, "built for CUDA", torch.version.cuda, "cuda available", c, torch.cuda.get_device_name(0) if c else "")' 2>&1 | tail -1)
say "  PyTorch: $torch_info"
case "$torch_info" in *"cuda available True"*) TORCH_CUDA=1 ;; esac
RUN_TORCH=1
if [ "$TORCH_DEVICE" != cpu ] && [ "$TORCH_CUDA" = 0 ]; then
	RUN_TORCH=0
	say "  PyTorch cannot use CUDA here (torch.cuda.is_available() is false or torch is missing): the PyTorch comparisons are skipped"
fi
# cuBLAS for the COMPBENCH_GEMM=cublas cases (scripts/cublas_path.sh). The
# variable must be set here, not in a subshell.
if [ "$RUN_TORCH" = 1 ]; then
	. scripts/cublas_path.sh
	cublas_dir=$(cublas_path "$PY")
	if [ -n "$cublas_dir" ]; then
		export LD_LIBRARY_PATH="$cublas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		say "  cuBLAS for COMPBENCH_GEMM=cublas cases: $cublas_dir"
	fi
fi
# HAVE_CUBLAS: the cuBLAS training runs of d run only where a cuBLAS loads.
HAVE_CUBLAS=
if [ -n "${cublas_dir:-}" ] || ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
	[ -z "$EMU" ] && HAVE_CUBLAS=1
fi

# ---- background work on the CPU: the SCAN data, the CPU reference run of
# d, PyTorch's GPT-2 checkpoint. They overlap the tests of b, not the
# benchmarks.
if [ -n "$QUICK" ]; then
	GEN=(--train-size 100 --dev-size 8 --test-size 4 --finetune-size 0)
	LOSS=(--layers 1 --dim 16 --mlp 32 --heads 2 --batch 8 --steps 4 --warmup 2 --eval-every 2 --eval-limit 2)
	GPT2_SIZE=tiny
else
	GEN=(--train-size 2000 --dev-size 200 --test-size 10 --finetune-size 0)
	LOSS=(--layers 2 --dim 64 --mlp 128 --heads 4 --batch 32 --steps 300 --warmup 100 --eval-every 50 --eval-limit 16)
	GPT2_SIZE=small
fi
LOSS+=(--model transformer --lr 1e-3 --seed 3 --train "$OUT/scan/train.jsonl" --dev "$OUT/scan/dev.jsonl")
step gen-scan 60 "$KIT/compbench" gen scan --task length --seed 1 --out "$OUT/scan" "${GEN[@]}"
# The CPU run leaves two cores to the GPU steps' host threads.
bg loss-cpu 400 env GOMAXPROCS=$((NPROC > 4 ? NPROC - 2 : NPROC)) "$KIT/compbench" train "${LOSS[@]}" --out "$OUT/run-cpu" --device cpu
if [ "$QUICK" = 1 ]; then
	LSTM=(--layers 1 --dim 16 --batch 8 --steps 4 --eval-every 2 --eval-limit 2)
else
	LSTM=(--layers 2 --dim 128 --batch 32 --steps 100 --eval-every 50 --eval-limit 16)
fi
LSTM+=(--dropout 0.1 --lr 1e-3 --seed 3 --train "$OUT/scan/train.jsonl" --dev "$OUT/scan/dev.jsonl")
# lstm-copy-tenc is lstm-copy on the Transformer encoder.
lstm_args() {
	case $1 in
	lstm-copy-tenc) echo --model lstm-copy --encoder transformer --encoder-heads 4 ;;
	*) echo --model "$1" ;;
	esac
}
LSTM_MODELS="lstm-attention lstm-copy lstm-copy-tenc"
for model in $LSTM_MODELS; do
	# shellcheck disable=SC2046 # lstm_args's words are flags
	bg "lstm-cpu-$model" 400 env GOMAXPROCS=$((NPROC > 4 ? NPROC - 2 : NPROC)) "$KIT/compbench" train "${LSTM[@]}" $(lstm_args "$model") --out "$OUT/run-cpu-$model" --device cpu
done
GPT2_DIR=$OUT/gpt2-$GPT2_SIZE
[ "$RUN_TORCH" = 1 ] && bg gpt2-checkpoint 200 "$PY" scripts/gpt2_reference.py random-checkpoint "$GPT2_DIR" --size "$GPT2_SIZE"

# ---- b. tests ----
say ""
say "== b. GPU tests (elapsed $(elapsed) s)"
(cd kernels && step kernels-parity 150 env COMPBENCH_REQUIRE_GPU=1 "$KIT/kernels.test" -test.v)
tests "$OUT/kernels-parity.log"
(cd engine && step engine-gpu-tests 180 env COMPBENCH_REQUIRE_GPU=1 "$KIT/engine.test" -test.v -test.run GPU)
tests "$OUT/engine-gpu-tests.log"

# ---- d. loss curves (the GPU runs now; the CPU run is in the background) ----
say ""
say "== d. SCAN training, cuda against cpu, same seed (elapsed $(elapsed) s)"
say "  compbench train ${LOSS[*]}"
step loss-cuda-tf32 120 env COMPBENCH_GEMM=tf32 "$KIT/compbench" train "${LOSS[@]}" --out "$OUT/run-cuda-tf32" --device cuda
step loss-cuda-fp32 120 env COMPBENCH_GEMM=fp32 "$KIT/compbench" train "${LOSS[@]}" --out "$OUT/run-cuda-fp32" --device cuda
# same_bytes MODE: the same seed must give the same bytes on the GPU too:
# a second run with COMPBENCH_GEMM=MODE, its weights and Adam state against
# the first's (run-cuda-MODE).
same_bytes() {
	local m=$1 same=1 f
	step "loss-cuda-$m-again" 120 env COMPBENCH_GEMM="$m" "$KIT/compbench" train "${LOSS[@]}" --out "$OUT/run-cuda-$m-again" --device cuda || return
	for f in model.safetensors optim.safetensors; do
		cmp -s "$OUT/run-cuda-$m/$f" "$OUT/run-cuda-$m-again/$f" || same=0
	done
	if [ "$same" = 1 ]; then
		say "  repeat $m run: weights and Adam state identical, byte for byte"
	else
		say "  repeat $m run: weights or Adam state DIFFER from the first cuda $m run (not reproducible)"
		echo "repeat $m" >>"$FAILS"
	fi
}
same_bytes tf32
# The same with cuBLAS's products, the fast choice (docs/cuda.md), and its
# repeat: the evidence for making it the default.
cmp_runs=("cuda tf32=$OUT/run-cuda-tf32" "cuda fp32=$OUT/run-cuda-fp32")
if [ -z "$HAVE_CUBLAS" ]; then
	say "  no cuBLAS found: the COMPBENCH_GEMM=cublas training runs are skipped"
elif step loss-cuda-cublas 120 env COMPBENCH_GEMM=cublas "$KIT/compbench" train "${LOSS[@]}" --out "$OUT/run-cuda-cublas" --device cuda; then
	cmp_runs+=("cuda cublas=$OUT/run-cuda-cublas")
	same_bytes cublas
fi
wait_bg loss-cpu
"$PY" scripts/loss_compare.py "$OUT/run-cpu" "${cmp_runs[@]}" 2>&1 | tee "$OUT/loss-compare.txt" | tee -a "$SUM"

# ---- e. the LSTM models on cuda against cpu (the CPU run is in the background) ----
say ""
say "== e. SCAN lstm-attention, lstm-copy and lstm-copy --encoder transformer, cuda against cpu, same seed (elapsed $(elapsed) s)"
say "  compbench train ${LSTM[*]}"
for model in $LSTM_MODELS; do
	# shellcheck disable=SC2046
	step "lstm-cuda-$model" 120 env COMPBENCH_GEMM=fp32 "$KIT/compbench" train "${LSTM[@]}" $(lstm_args "$model") --out "$OUT/run-cuda-$model" --device cuda
	wait_bg "lstm-cpu-$model"
	"$PY" scripts/loss_compare.py "$OUT/run-cpu-$model" "$model cuda fp32=$OUT/run-cuda-$model" 2>&1 | tee "$OUT/loss-compare-$model.txt" | tee -a "$SUM"
done

# ---- c. benchmarks ----
say ""
say "== c. benchmarks (elapsed $(elapsed) s)"
[ "$RUN_TORCH" = 1 ] && { wait_bg gpt2-checkpoint || true; }
if [ -f "$GPT2_DIR/model.safetensors" ] && [ "$GPT2_SIZE" = small ]; then
	export GPT2_BENCH_DIR=$GPT2_DIR # the same random GPT-2 small weights on both sides
elif [ -z "$QUICK" ]; then
	say "  BenchmarkGPUGPT2Score uses compbench's own random GPT-2 small weights (same shape)"
fi
declare -A GO_TRAIN GO_GPT2
if [ -n "$QUICK" ]; then
	say "  QUICK: the paper-size engine benchmarks are skipped (minutes per step on the emulator); kernel benchmarks run once"
	(cd kernels && step bench-kernels 120 "$KIT/kernels.test" -test.run '^$' -test.bench 'SoftmaxCE|LayerNorm' -test.benchtime 1x)
else
	for mode in ${ENGINE_GEMM_MODES:-tf32 cublas fp32}; do
		(cd engine && step "bench-engine-$mode" 150 env COMPBENCH_GEMM=$mode "$KIT/engine.test" -test.run '^$' \
			-test.bench 'BenchmarkGPUTrainStep|BenchmarkGPUGPT2Score' -test.benchtime 20x)
		GO_TRAIN[$mode]=$(metric "$OUT/bench-engine-$mode.log" BenchmarkGPUTrainStep tokens/s)
		GO_GPT2[$mode]=$(metric "$OUT/bench-engine-$mode.log" BenchmarkGPUGPT2Score tokens/s)
	done
	(cd kernels && step bench-kernels 90 "$KIT/kernels.test" -test.run '^$' -test.bench . -test.benchtime 0.5s)
fi
grep -E '^Benchmark' "$OUT/bench-kernels.log" 2>/dev/null | sed 's/^/    /' | tee -a "$SUM"

# PyTorch, with TF32 matrix products allowed or not (stated on each line):
# the scripts run unchanged inside a wrapper that sets the flags first.
torch_run() { # NAME TIMEOUT on|off SCRIPT ARGS...
	local name=$1 t=$2 tf=$3
	shift 3
	step "$name" "$t" "$PY" -c 'import runpy, sys, torch
tf = sys.argv[1] == "on"
torch.backends.cuda.matmul.allow_tf32 = tf
torch.backends.cudnn.allow_tf32 = tf
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")' "$tf" "$@"
}
declare -A PY_TRAIN PY_GPT2
if [ -n "$QUICK" ]; then TSTEPS=2 GB=4 GS=8 GN=2; else TSTEPS=50 GB=32 GS=32 GN=20; fi
if [ "$RUN_TORCH" = 1 ]; then
	for tf in on off; do
		torch_run "torch-transformer-tf32-$tf" 90 $tf scripts/bench_torch_transformer.py --device "$TORCH_DEVICE" --steps $TSTEPS --threads "$NPROC"
		PY_TRAIN[$tf]=$(awk '$1 == "pytorch" && $2 == "tokens/s" {print $3}' "$OUT/torch-transformer-tf32-$tf.log")
		if [ -f "$GPT2_DIR/model.safetensors" ]; then
			torch_run "torch-gpt2-tf32-$tf" 90 $tf scripts/gpt2_reference.py bench "$GPT2_DIR" --device "$TORCH_DEVICE" \
				--batch $GB --seq $GS --batches $GN --threads "$NPROC"
			PY_GPT2[$tf]=$(awk '$1 == "pytorch" && $2 == "tokens/s" {print $3}' "$OUT/torch-gpt2-tf32-$tf.log")
		fi
	done
fi

# torch_line LOG on|off: the flag's value and PyTorch's tokens/s line.
torch_line() {
	local v=False l
	[ "$2" = on ] && v=True
	l=$(grep -h '^pytorch tokens/s' "$1" 2>/dev/null | sed 's/^pytorch tokens.s //')
	echo "$v  ${l:-n/a (not run or failed)}"
}
say ""
say "  Transformer training step, paper size (3+3 layers, d 256, batch 64 x 16 -> 48), tokens/s counts the 3072 target tokens of a step:"
for mode in ${ENGINE_GEMM_MODES:-tf32 cublas fp32}; do say "    compbench COMPBENCH_GEMM=$mode          ${GO_TRAIN[$mode]:-n/a}"; done
for tf in on off; do say "    pytorch matmul.allow_tf32 $(torch_line "$OUT/torch-transformer-tf32-$tf.log" $tf)"; done
say "    compbench/pytorch tokens/s: TF32 both $(ratio "${GO_TRAIN[tf32]:-}" "${PY_TRAIN[on]:-}"), cuBLAS TF32 $(ratio "${GO_TRAIN[cublas]:-}" "${PY_TRAIN[on]:-}"), FP32 both $(ratio "${GO_TRAIN[fp32]:-}" "${PY_TRAIN[off]:-}")"
say "  GPT-2 scoring, compbench: small, 32 x 32 tokens; PyTorch: $GPT2_SIZE, $GB x $GS tokens; tokens/s counts every token of a batch:"
for mode in ${ENGINE_GEMM_MODES:-tf32 cublas fp32}; do say "    compbench COMPBENCH_GEMM=$mode          ${GO_GPT2[$mode]:-n/a}"; done
for tf in on off; do say "    pytorch matmul.allow_tf32 $(torch_line "$OUT/torch-gpt2-tf32-$tf.log" $tf)"; done
say "    compbench/pytorch tokens/s: TF32 both $(ratio "${GO_GPT2[tf32]:-}" "${PY_GPT2[on]:-}"), cuBLAS TF32 $(ratio "${GO_GPT2[cublas]:-}" "${PY_GPT2[on]:-}"), FP32 both $(ratio "${GO_GPT2[fp32]:-}" "${PY_GPT2[off]:-}")"

# Pretrained T5 of t5-small's shape with random weights (docs/pretrained.md):
# fine-tuning steps through compbench train --init on the GPU, every batch
# 16 rows of 32 source and 32 target pieces (letters, which the random
# checkpoint's tokenizer spells one piece each), against PyTorch's step of
# the same shape on the same weights. The last metrics line covers the 20
# steps after the first 100 (the first compiles the programs).
T5_DIR=$OUT/t5-small
if [ -z "$QUICK" ] && [ "$RUN_TORCH" = 1 ] && step t5-checkpoint 60 "$PY" scripts/seq2seq_reference.py random-checkpoint "$T5_DIR"; then
	"$PY" -c 'import json, string, sys
for i in range(64):
    s = "".join(string.ascii_lowercase[(i + 7 * j) % 26] for j in range(30))
    print(json.dumps({"id": "t%d" % i, "input": s, "output": s[::-1]}))' >"$OUT/t5.jsonl"
	step t5-cuda-tf32 150 env COMPBENCH_GEMM=tf32 "$KIT/compbench" train --init "hf:$T5_DIR" --train "$OUT/t5.jsonl" \
		--out "$OUT/run-cuda-t5" --device cuda --steps 120 --batch 16 --bucket-width 1 --max-src 32 --max-tgt 32 --eval-every 0
	GO_T5=$(tail -n 1 "$OUT/run-cuda-t5/metrics.jsonl" 2>/dev/null | sed -n 's/.*"tokens_per_s":\([0-9.]*\).*/\1/p')
	torch_run torch-t5-tf32-on 90 on scripts/seq2seq_reference.py bench "$T5_DIR" --device "$TORCH_DEVICE" --steps 10 --threads "$NPROC"
	PY_T5=$(awk '$1 == "pytorch" && $2 == "ms/step" {printf "%.1f", 16 * 32 * 1000 / $3}' "$OUT/torch-t5-tf32-on.log")
	say "  T5, t5-small's shape, random weights, training step 16 x 32 -> 32 (tokens/s counts the 512 target pieces):"
	say "    compbench train --init, COMPBENCH_GEMM=tf32  ${GO_T5:-n/a}"
	say "    pytorch, matmul.allow_tf32 True            ${PY_T5:-n/a}"
	say "    compbench/pytorch tokens/s: $(ratio "${GO_T5:-}" "${PY_T5:-}")"
fi

# The GPT-2 small checkpoint is 500 MB: not worth bringing back.
rm -rf "$OUT/scan" "$GPT2_DIR" "$T5_DIR" "$OUT"/run-*/*.safetensors
say ""
say "done in $(elapsed) s; logs in $OUT"
failed=$(sort -u "$FAILS" | paste -sd, - | sed 's/,/, /g')
rm -f "$FAILS"
if [ -n "$failed" ]; then
	say "result: FAILED: $failed"
	exit 1
fi
say "result: ok, nothing failed"
