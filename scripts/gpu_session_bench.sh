# Sourced by scripts/gpu_session.sh (its helpers and settings): section d,
# the side-by-side benchmarks on the session's GPU. compbench's side is the
# engine test binary's GPU benchmarks with the default products (cuBLAS
# where it loads), FP32, and, for the two benchmarks of the first session,
# the WMMA TF32 kernel; PyTorch's side is scripts/bench_torch_*.py, eager, in
# FP32, with TF32 products and with bf16 autocast. Both sides count tokens
# the same way and use the same random weights (GPT2_BENCH_DIR,
# PRETRAINED_BENCH_DIR); docs/gpu-session.md lists the shapes.

say ""
say "== d. benchmarks on this GPU, compbench against PyTorch (elapsed $(elapsed) s)"
if [ "$RUN_TORCH" = 1 ] && [ -z "$QUICK" ]; then
	wait_bg gpt2-checkpoint
	wait_bg t5-checkpoint
fi
# The same random weights on both sides; without them compbench's GPT-2
# benchmark draws its own of the same shape and the T5 rows are skipped.
[ -f "$GPT2_DIR/model.safetensors" ] && export GPT2_BENCH_DIR=$GPT2_DIR
[ -f "$T5_DIR/model.safetensors" ] && export PRETRAINED_BENCH_DIR=$T5_DIR

# The benchmarks: KEY, compbench's benchmark, what it is.
BENCH_KEYS=(transformer lstm t5-step t5-decode gpt2)
declare -A GO_BENCH=([transformer]=BenchmarkGPUTrainStep [lstm]=BenchmarkGPULSTMTrainStep
	[t5-step]=BenchmarkGPUT5TrainStep [t5-decode]=BenchmarkGPUT5Decode [gpt2]=BenchmarkGPUGPT2Score)
declare -A WHAT=(
	[transformer]="Transformer training step, paper size (3+3 layers, d 256, 4 heads, MLP 512), 64 x 16 -> 48 tokens; tokens/s counts the 3,072 target tokens"
	[lstm]="lstm-attention training step, 2 layers, hidden 256, 64 x 16 -> 24 tokens; counts the 1,536 target tokens"
	[t5-step]="T5 of t5-small's shape, forward and backward (no optimizer step), 16 x 32 -> 32 tokens; counts the 512 target tokens"
	[t5-decode]="the same T5, cached decoding of 16 rows x 64 positions after a 31-token source; counts the 1,024 positions"
	[gpt2]="GPT-2 small scoring, 32 x 32 tokens a batch; counts every token")

declare -A GO PT
if [ -n "$QUICK" ]; then
	say "  QUICK: compbench's benchmarks are skipped (minutes per step on the emulator); the kernel benchmarks run once"
	(cd kernels && step bench-kernels 120 "$KIT/kernels.test" -test.run '^$' -test.bench 'SoftmaxCE|LayerNorm' -test.benchtime 1x)
else
	for mode in default fp32 tf32; do
		re='BenchmarkGPU(TrainStep|GPT2Score|LSTMTrainStep|T5TrainStep|T5Decode)$'
		env=()
		[ "$mode" = default ] || env=(COMPBENCH_GEMM=$mode)
		[ "$mode" = tf32 ] && re='BenchmarkGPU(TrainStep|GPT2Score)$'
		(cd engine && step "bench-engine-$mode" 150 env "${env[@]}" "$KIT/engine.test" -test.run '^$' -test.bench "$re" -test.benchtime 20x)
		for k in "${BENCH_KEYS[@]}"; do
			GO[$k,$mode]=$(metric "$OUT/bench-engine-$mode.log" "${GO_BENCH[$k]}" tokens/s)
		done
	done
	(cd kernels && step bench-kernels 90 "$KIT/kernels.test" -test.run '^$' -test.bench . -test.benchtime 0.5s)
fi
grep -E '^Benchmark' "$OUT/bench-kernels.log" 2>/dev/null | sed 's/^/    /' | tee -a "$SUM"

# torch_args KEY: the PyTorch script and its sizes, in ARGS; 1 when its
# weights are missing.
torch_args() {
	local t5=$T5_DIR gpt2=$GPT2_DIR
	if [ -n "$QUICK" ]; then t5=models/pretrained/testdata/t5-tiny gpt2=$GPT2_TINY; fi
	case $1 in
	transformer) ARGS=(scripts/bench_torch_transformer.py --steps 50) ;;
	lstm) ARGS=(scripts/bench_torch_lstm.py --steps 50) ;;
	t5-step) ARGS=(scripts/bench_torch_t5.py step "$t5" --steps 20) ;;
	t5-decode) ARGS=(scripts/bench_torch_t5.py decode "$t5" --reps 5) ;;
	gpt2) ARGS=(scripts/bench_torch_gpt2.py "$gpt2" --batches 20) ;;
	esac
	if [ -n "$QUICK" ]; then
		case $1 in
		transformer) ARGS+=(--batch 4 --steps 2) ;;
		lstm) ARGS+=(--batch 4 --hidden 16 --steps 2) ;;
		t5-step) ARGS+=(--batch 2 --src 8 --tgt 8 --steps 2) ;;
		t5-decode) ARGS+=(--batch 2 --len 8 --reps 2) ;;
		gpt2) ARGS+=(--batch 4 --seq 8 --batches 2) ;;
		esac
	fi
	case $1 in
	t5-*) [ -f "$t5/model.safetensors" ] ;;
	gpt2) [ -f "$gpt2/model.safetensors" ] ;;
	esac
}
if [ "$RUN_TORCH" = 1 ]; then
	for k in "${BENCH_KEYS[@]}"; do
		if ! torch_args "$k"; then
			say "  torch-$k: skipped, no checkpoint (its random-checkpoint step failed)"
			echo "torch-$k (no checkpoint)" >>"$FAILS"
			continue
		fi
		for p in tf32 fp32 bf16; do
			case $p in
			tf32) prec=(--tf32 on) ;;
			fp32) prec=(--tf32 off) ;;
			bf16) prec=(--tf32 on --autocast bf16) ;;
			esac
			step "torch-$k-$p" 90 "$PY" "${ARGS[@]}" --device "$TORCH_DEVICE" --threads "$NPROC" "${prec[@]}"
			PT[$k,$p]=$(awk '$1 == "pytorch" && $2 == "tokens/s" {print $3}' "$OUT/torch-$k-$p.log" 2>/dev/null)
		done
	done
fi

say ""
say "  tokens/s, higher is better. compbench: default products ($(grep -m1 -o 'GEMM .*' "$OUT/cuda-transformer.log" 2>/dev/null || echo 'see cuda-transformer.log')),"
say "  FP32 (COMPBENCH_GEMM=fp32) and its WMMA TF32 kernel (tf32); PyTorch eager: TF32 products, FP32, bf16 autocast."
say "  Ratios compbench/PyTorch: default/TF32 and fp32/FP32 at the same precision, default/bf16 against mixed precision."
row() { printf "  %-11s %10s %10s %10s  %10s %10s %10s  %7s %7s %7s\n" "$@" | tee -a "$SUM"; }
row "" "compbench" "" "" "PyTorch" "" "" "ratio" "" ""
row "" "default" "fp32" "tf32" "tf32" "fp32" "bf16" "dflt/tf" "fp/fp" "dflt/bf"
for k in "${BENCH_KEYS[@]}"; do
	row "$k" "${GO[$k,default]:-n/a}" "${GO[$k,fp32]:-n/a}" "${GO[$k,tf32]:--}" \
		"${PT[$k,tf32]:-n/a}" "${PT[$k,fp32]:-n/a}" "${PT[$k,bf16]:-n/a}" \
		"$(ratio "${GO[$k,default]:-}" "${PT[$k,tf32]:-}")" "$(ratio "${GO[$k,fp32]:-}" "${PT[$k,fp32]:-}")" \
		"$(ratio "${GO[$k,default]:-}" "${PT[$k,bf16]:-}")"
done
[ -n "$QUICK" ] && say "  QUICK: PyTorch ran tiny sizes; the shapes of a full session are"
for k in "${BENCH_KEYS[@]}"; do say "    $k: ${WHAT[$k]}"; done
