#!/usr/bin/env bash
# gpu_session.sh OUTDIR: every GPU check and measurement of compbench in one
# go, about nine minutes on a GPU machine, from the repository root, with
# the kit of scripts/gpu_kit.sh (make gpu-kit) in gpu-kit/. Needs no Go;
# needs python3 with a CUDA build of PyTorch for the side-by-side numbers.
# Writes one log per step and OUTDIR/summary.txt (also printed); see
# docs/gpu-session.md.
#
#   a. the GPU and driver (nvidia-smi), PyTorch's view of them
#   b. kernel parity tests and the engine's GPU tests (pass/fail per test)
#   c. every model family trained (and decoded, scored) on cuda and on the
#      CPU from the same seed, each pair judged by its loss curve or outputs:
#      the Transformer with every mask and relative positions (the default
#      products, TF32 and FP32; repeats must give the same bytes), the
#      Universal Transformer with and without ACT, lstm-attention, lstm-copy
#      and lstm-copy on the Transformer encoder, T5 and BART fine-tuning and
#      cached beam decoding, finetune, GPT-2 scoring and fold fine-tuning
#   d. side-by-side benchmarks on this GPU: the paper-size Transformer step,
#      the lstm-attention step, a t5-small-shaped T5 step and cached
#      decoding, GPT-2 small scoring; compbench (default products, FP32)
#      against PyTorch eager in FP32, TF32 and bf16 autocast
#
# A failing or hanging step never stops the script: each runs under its own
# timeout, cut further so that the whole stays within BUDGET_S seconds. The
# exit status agrees with the summary: 0 when nothing failed, 1 when any
# step FAILED or TIMED OUT (a comparison out of tolerance, repeated runs
# that DIFFER, a kit without a binary), after every step has run and the
# summary's last line lists them.
#
#   scripts/gpu_session.sh --self-test   runs the script on stand-in kits
#                      (failing, passing, diverging, hanging) and checks its
#                      exit status and summary against each; seconds, no GPU
#
#   KIT=gpu-kit        the kit folder
#   BUDGET_S=540       wall-clock budget of the whole session
#   QUICK=1            tiny sizes, for the emulator kit (GPU_KIT_TAGS=gpuemu)
#   PYTHON=python3     interpreter with torch
#   TORCH_DEVICE=cuda  PyTorch's device (cpu only to try the script's plumbing)
#   FORCE=1            write into a non-empty OUTDIR
#   MAX_REL=0.02       largest relative gap of a GPU loss curve from the CPU's
set -uo pipefail
# The tests choose their product kernels themselves; the runs below say.
unset COMPBENCH_GEMM
cd "$(dirname "$0")/.."
ROOT=$PWD

if [ "${1:-}" = --self-test ]; then
	exec scripts/gpu_session_selftest.sh
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
MAX_REL=${MAX_REL:-0.02}
# STEP_TIMEOUT_MAX caps every step's timeout (the self-test's hanging kit).
STEP_TIMEOUT_MAX=${STEP_TIMEOUT_MAX:-}
NPROC=$(nproc 2>/dev/null || echo 4)
CB=$KIT/compbench
SUM=$OUT/summary.txt
# FAILS lists what failed, one name a line; a file, because steps also run
# in subshells.
FAILS=$OUT/.failed
T0=$SECONDS
: >"$SUM"
: >"$FAILS"

say() { echo "$*" | tee -a "$SUM"; }
elapsed() { echo $((SECONDS - T0)); }

# budget T: T cut to STEP_TIMEOUT_MAX and to what is left of BUDGET_S,
# keeping 10 s for the summary; 0 when less than 5 s are left.
budget() {
	local t=$1 left=$((BUDGET_S - (SECONDS - T0) - 10))
	[ -n "$STEP_TIMEOUT_MAX" ] && [ "$STEP_TIMEOUT_MAX" -lt "$t" ] && t=$STEP_TIMEOUT_MAX
	if [ "$left" -lt 5 ]; then echo 0; elif [ "$t" -lt "$left" ]; then echo "$t"; else echo "$left"; fi
}

# step NAME TIMEOUT CMD...: runs CMD with its output in OUT/NAME.log and
# records the outcome in the summary. Returns CMD's status.
step() {
	local name=$1 t
	t=$(budget "$2")
	shift 2
	if [ "$t" = 0 ]; then
		say "  $name: skipped, the session budget is spent"
		echo "$name (skipped)" >>"$FAILS"
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

# bg NAME TIMEOUT CMD...: step in the background, at low priority so that
# the GPU steps' host threads keep their cores; wait_bg NAME collects it.
declare -A BG_PID BG_T
bg() {
	local name=$1 t
	t=$(budget "$2")
	shift 2
	[ "$t" = 0 ] && t=1
	BG_T[$name]=$t
	(
		s=$SECONDS
		timeout -k 10 "$t" nice -n 10 "$@" >"$OUT/$name.log" 2>&1
		echo "$? $((SECONDS - s))" >"$OUT/.$name.rc"
	) &
	BG_PID[$name]=$!
}
wait_bg() {
	local name=$1 rc took
	[ -n "${BG_PID[$name]:-}" ] || return 1
	wait "${BG_PID[$name]}"
	unset "BG_PID[$name]"
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
	local p f s skipped
	p=$(grep -c -- '--- PASS' "$1" 2>/dev/null)
	f=$(grep -c -- '--- FAIL' "$1" 2>/dev/null)
	s=$(grep -c -- '--- SKIP' "$1" 2>/dev/null)
	say "    tests passed ${p:-0}, failed ${f:-0}, skipped ${s:-0} (subtests included)"
	grep -- '--- FAIL' "$1" 2>/dev/null | sed 's/^ *--- FAIL: /    FAIL: /' | head -20 | tee -a "$SUM"
	skipped=$(grep -- '--- SKIP' "$1" 2>/dev/null | sed 's/^ *--- SKIP: //; s/ (.*//' | head -12 | tr '\n' ' ')
	[ -n "$skipped" ] && say "    skipped: $skipped"
	grep -E '^(panic:|PASS$|FAIL$)' "$1" 2>/dev/null | tail -1 | sed 's/^/    last: /' | tee -a "$SUM"
}

# ratio A B: A/B to two decimals, or n/a.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", a / b; else printf "n/a"}'
}

# judge NAME CMD...: a comparison step whose report also goes into the summary.
judge() {
	local name=$1
	shift
	step "$name" 60 "$@"
	sed 's/^/  /' "$OUT/$name.log" | tee -a "$SUM"
}

say "compbench GPU session $(date -u '+%Y-%m-%dT%H:%M:%SZ') on $(hostname 2>/dev/null || cat /etc/hostname 2>/dev/null), ${NPROC} CPUs${QUICK:+, QUICK sizes}, budget $BUDGET_S s"
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
	say "  GPU: $(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,compute_cap --format=csv,noheader 2>&1)"
	say "  $(grep -o 'CUDA Version: [0-9.]*' "$OUT/nvidia-smi.log" | head -1)"
else
	say "  nvidia-smi: not found"
fi
torch_info=$(timeout 120 "$PY" -c 'import torch
c = torch.cuda.is_available()
print("torch", torch.__version__, "built for CUDA", torch.version.cuda, "cuda available", c, torch.cuda.get_device_name(0) if c else "")' 2>&1 | tail -1)
say "  PyTorch: $torch_info"
RUN_TORCH=1
case "$torch_info" in
"torch "*) ;;
*) RUN_TORCH=0 ;;
esac
if [ "$TORCH_DEVICE" != cpu ] && [[ $torch_info != *"cuda available True"* ]]; then RUN_TORCH=0; fi
[ "$RUN_TORCH" = 0 ] && say "  PyTorch cannot run on $TORCH_DEVICE here (torch missing, or torch.cuda.is_available() false): the PyTorch side is skipped"
# compbench's default products are cuBLAS's where it loads (docs/cuda.md):
# with no system cuBLAS, the one inside pip's PyTorch goes on the loader path.
if [ "$RUN_TORCH" = 1 ]; then
	. scripts/cublas_path.sh
	cublas_dir=$(cublas_path "$PY")
	if [ -n "$cublas_dir" ]; then
		export LD_LIBRARY_PATH="$cublas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		say "  cuBLAS for compbench: $cublas_dir"
	fi
fi

# ---- sizes ----
if [ -n "$QUICK" ]; then
	GEN=(--train-size 100 --dev-size 8 --test-size 8 --finetune-size 4)
	TF=(--layers 1 --dim 16 --mlp 32 --heads 2 --batch 8 --warmup 2 --eval-every 2 --eval-limit 2)
	TF_STEPS=4 VAR_STEPS=4 UT=(--ut-steps 2)
	LSTM=(--layers 1 --dim 16 --batch 8 --steps 4 --eval-every 2 --eval-limit 2)
	HF=(--steps 4 --batch 4 --eval-every 2 --eval-limit 2 --max-src 16 --max-tgt 16)
	FT_STEPS=2 SCORE_STEPS=2
else
	GEN=(--train-size 2000 --dev-size 200 --test-size 64 --finetune-size 20)
	TF=(--layers 2 --dim 64 --mlp 128 --heads 4 --batch 32 --warmup 100 --eval-every 50 --eval-limit 16)
	TF_STEPS=300 VAR_STEPS=100 UT=(--ut-steps 4)
	LSTM=(--layers 2 --dim 128 --batch 32 --steps 100 --eval-every 50 --eval-limit 16)
	HF=(--steps 60 --batch 16 --eval-every 30 --eval-limit 16 --max-src 32 --max-tgt 48)
	FT_STEPS=20 SCORE_STEPS=20
fi
SCAN=$OUT/scan
DATA=(--train "$SCAN/train.jsonl" --dev "$SCAN/dev.jsonl" --seed 3)
TF+=(--lr 1e-3 "${DATA[@]}")
LSTM+=(--dropout 0.1 --lr 1e-3 "${DATA[@]}")
HF+=(--lr 1e-3 "${DATA[@]}")
GPT2_TINY=lm/testdata/gpt2-tiny
# The training runs of c: NAME and its flags. The Transformer's masks
# (causal, sep-full, sep-to-last, sep-to-sep-and-last) and relative
# positions, the Universal Transformer, the LSTM models, T5 and BART.
RUNS=(transformer relative relative-sep transformer-sep sep-full sep-to-last sep-to-sep-and-last
	universal universal-act lstm-attention lstm-copy lstm-copy-tenc t5 bart)
# run_args NAME: the flags of RUNS entry NAME, in ARGS.
run_args() {
	case $1 in
	transformer) ARGS=(--model transformer --steps "$TF_STEPS" "${TF[@]}") ;;
	universal) ARGS=(--model universal --steps "$VAR_STEPS" "${UT[@]}" "${TF[@]}") ;;
	universal-act) ARGS=(--model universal --act --steps "$VAR_STEPS" "${UT[@]}" "${TF[@]}") ;;
	lstm-copy-tenc) ARGS=(--model lstm-copy --encoder transformer --encoder-heads 4 "${LSTM[@]}") ;;
	lstm-*) ARGS=(--model "$1" "${LSTM[@]}") ;;
	t5) ARGS=(--init hf:models/pretrained/testdata/t5-tiny "${HF[@]}") ;;
	bart) ARGS=(--init hf:models/pretrained/testdata/bart-tiny "${HF[@]}") ;;
	*) ARGS=(--model "$1" --steps "$VAR_STEPS" "${TF[@]}") ;;
	esac
}

# ---- background work on the CPU: the reference runs of c, one core each
# (nice'd), and PyTorch's random checkpoints for d ----
step gen-scan 60 "$CB" gen scan --task length --seed 1 --out "$SCAN" "${GEN[@]}"
CPU_PROCS=$(((NPROC - 2) / ${#RUNS[@]}))
[ "$CPU_PROCS" -lt 1 ] && CPU_PROCS=1
for r in "${RUNS[@]}"; do
	run_args "$r"
	bg "cpu-$r" 420 env GOMAXPROCS=$CPU_PROCS "$CB" train "${ARGS[@]}" --out "$OUT/run-cpu-$r" --device cpu
done
# The tiny GPT-2's context is 32 tokens: longer records keep their last 32.
SCORE=(--lm "$GPT2_TINY" --in "$SCAN/test.jsonl" --batch 16 --truncate)
FOLDS=(--folds 2 --steps "$SCORE_STEPS" --train-batch 16 --lr 1e-3)
bg cpu-score 300 env GOMAXPROCS=$CPU_PROCS "$CB" score "${SCORE[@]}" --out "$OUT/score-cpu.jsonl" --device cpu
bg cpu-score-folds 300 env GOMAXPROCS=$CPU_PROCS "$CB" score "${SCORE[@]}" "${FOLDS[@]}" --out "$OUT/score-folds-cpu.jsonl" --device cpu
GPT2_DIR=$OUT/gpt2-small T5_DIR=$OUT/t5-small
if [ "$RUN_TORCH" = 1 ] && [ -z "$QUICK" ]; then
	bg gpt2-checkpoint 200 "$PY" scripts/gpt2_reference.py random-checkpoint "$GPT2_DIR" --size small
	bg t5-checkpoint 200 "$PY" scripts/seq2seq_reference.py random-checkpoint "$T5_DIR"
fi

# ---- b. tests ----
say ""
say "== b. GPU tests (elapsed $(elapsed) s)"
(cd kernels && step kernels-parity 150 env COMPBENCH_REQUIRE_GPU=1 "$KIT/kernels.test" -test.v)
tests "$OUT/kernels-parity.log"
(cd engine && step engine-gpu-tests 200 env COMPBENCH_REQUIRE_GPU=1 "$KIT/engine.test" -test.v -test.run GPU)
tests "$OUT/engine-gpu-tests.log"

# ---- c. every model family, cuda against cpu ----
say ""
say "== c. cuda against cpu, same seed, SCAN length split (elapsed $(elapsed) s)"
say "  products: the default (COMPBENCH_GEMM unset) unless a name says tf32 or fp32; curves judged on loss and dev_loss within $MAX_REL"
# cuda_run NAME [ENV...]: the cuda run of RUNS entry NAME (suffix -tf32,
# -fp32 or -again picks the products or a repeat).
cuda_run() {
	local name=$1 base=${1%-again}
	shift
	base=${base%-tf32}
	base=${base%-fp32}
	run_args "$base"
	step "cuda-$name" 90 env "$@" "$CB" train "${ARGS[@]}" --out "$OUT/run-cuda-$name" --device cuda
}
cuda_run transformer
say "  compbench's choice: $(grep -m1 -o 'GEMM .*' "$OUT/cuda-transformer.log" 2>/dev/null || echo 'n/a (the run failed)')"
cuda_run transformer-again
cuda_run transformer-tf32 COMPBENCH_GEMM=tf32
cuda_run transformer-tf32-again COMPBENCH_GEMM=tf32
cuda_run transformer-fp32 COMPBENCH_GEMM=fp32
for r in "${RUNS[@]:1}"; do cuda_run "$r"; done
# Decoding, fine-tuning and scoring start from the cuda runs' weights; the
# CPU's side runs in the background meanwhile.
PREDICT=(--in "$SCAN/test.jsonl" --beam 4 --batch 16)
for r in t5 bart; do
	bg "cpu-predict-$r" 300 env GOMAXPROCS=$CPU_PROCS "$CB" predict --run "$OUT/run-cuda-$r" "${PREDICT[@]}" --out "$OUT/predict-$r-cpu.jsonl" --device cpu
done
FT=(--run "$OUT/run-cuda-transformer" --data "$SCAN/finetune.jsonl" --steps "$FT_STEPS" --lr 1e-4)
bg cpu-finetune 300 env GOMAXPROCS=$CPU_PROCS "$CB" finetune "${FT[@]}" --out "$OUT/run-cpu-finetune" --device cpu
for r in t5 bart; do
	step "cuda-predict-$r" 90 "$CB" predict --run "$OUT/run-cuda-$r" "${PREDICT[@]}" --out "$OUT/predict-$r-cuda.jsonl" --device cuda
done
step cuda-finetune 90 "$CB" finetune "${FT[@]}" --out "$OUT/run-cuda-finetune" --device cuda
step cuda-score 90 "$CB" score "${SCORE[@]}" --out "$OUT/score-cuda.jsonl" --device cuda
step cuda-score-folds 120 "$CB" score "${SCORE[@]}" "${FOLDS[@]}" --out "$OUT/score-folds-cuda.jsonl" --device cuda

# same_bytes NAME: a repeat run's weights and Adam state must be its first
# run's byte for byte (no kernel adds in a varying order).
same_bytes() {
	local a=$OUT/run-cuda-$1 b=$OUT/run-cuda-$1-again f
	[ -f "$a/model.safetensors" ] && [ -f "$b/model.safetensors" ] || return 0
	for f in model.safetensors optim.safetensors; do
		if ! cmp -s "$a/$f" "$b/$f"; then
			say "  repeat of cuda-$1: weights or Adam state DIFFER from the first run (not reproducible)"
			echo "repeat $1" >>"$FAILS"
			return
		fi
	done
	say "  repeat of cuda-$1: weights and Adam state identical, byte for byte"
}
say ""
say "  -- the comparisons (elapsed $(elapsed) s)"
same_bytes transformer
same_bytes transformer-tf32
wait_bg cpu-transformer
judge cmp-transformer python3 scripts/loss_compare.py --max-rel "$MAX_REL" "$OUT/run-cpu-transformer" \
	"cuda=$OUT/run-cuda-transformer" "cuda tf32=$OUT/run-cuda-transformer-tf32" "cuda fp32=$OUT/run-cuda-transformer-fp32"
for r in "${RUNS[@]:1}"; do
	wait_bg "cpu-$r"
	judge "cmp-$r" python3 scripts/loss_compare.py --max-rel "$MAX_REL" "$OUT/run-cpu-$r" "cuda=$OUT/run-cuda-$r"
done
for r in t5 bart; do
	wait_bg "cpu-predict-$r"
	judge "cmp-predict-$r" python3 scripts/jsonl_compare.py --max-rel 1e-2 "$OUT/predict-$r-cpu.jsonl" "$OUT/predict-$r-cuda.jsonl"
done
wait_bg cpu-finetune
judge cmp-finetune python3 scripts/loss_compare.py --max-rel "$MAX_REL" "$OUT/run-cpu-finetune" "cuda=$OUT/run-cuda-finetune"
wait_bg cpu-score
judge cmp-score python3 scripts/jsonl_compare.py --max-rel 1e-2 "$OUT/score-cpu.jsonl" "$OUT/score-cuda.jsonl"
wait_bg cpu-score-folds
judge cmp-score-folds python3 scripts/jsonl_compare.py --max-rel 2e-2 "$OUT/score-folds-cpu.jsonl" "$OUT/score-folds-cuda.jsonl"

# ---- d. benchmarks ----
. scripts/gpu_session_bench.sh

# ---- the end ----
# Background steps not collected above (a section cut short) are noted too.
for name in "${!BG_PID[@]}"; do wait_bg "$name"; done
# The GPT-2 small checkpoint is 500 MB: not worth bringing back.
rm -rf "$SCAN" "$GPT2_DIR" "$T5_DIR" "$OUT"/run-*/*.safetensors
say ""
say "done in $(elapsed) s; logs in $OUT"
failed=$(sort -u "$FAILS" | paste -sd, - | sed 's/,/, /g')
rm -f "$FAILS"
if [ -n "$failed" ]; then
	say "result: FAILED: $failed"
	exit 1
fi
say "result: ok, nothing failed"
