# compbench: see README.md. Every target installs what it needs.
GO ?= go
BIN := bin/compbench
PKGS := ./...
# TAGS=purego builds with gonum's pure-Go BLAS: no C compiler, no OpenBLAS.
TAGS ?=
MULTIARCH := $(shell gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build test test-purego test-scripts test-docs test-gpuemu test-gpuemu-asan lint demo bench bench-deps deps sweep-deps clean fmt vet

all: build

# -buildvcs=auto stamps the VCS revision into the binary (compbench version,
# run provenance) even where GOFLAGS turns it off.
build: deps
	$(GO) build -buildvcs=auto -tags '$(TAGS)' -o $(BIN) ./cmd/compbench

test: deps sweep-deps
	$(GO) vet -tags '$(TAGS)' $(PKGS)
	$(GO) test -tags '$(TAGS)' -timeout 15m $(PKGS)
	$(MAKE) --no-print-directory test-scripts
	$(MAKE) --no-print-directory test-docs
ifeq ($(findstring purego,$(TAGS)),)
	$(MAKE) --no-print-directory test-purego
	$(MAKE) test-gpuemu
endif

# test-purego runs the tests that compare two implementations of one
# computation (host loops against the engine, the TapeMachine against the
# engine) a second time on gonum's pure-Go BLAS: their tolerances are
# derived from the arithmetic, so they must hold on any BLAS kernel, not
# only on the OpenBLAS kernel this machine's CPU selects.
test-purego:
	$(GO) test -count=1 -tags purego -timeout 10m ./models/... ./engine
	$(GO) test -count=1 -tags purego -timeout 10m -run 'Device' ./cmd/compbench

# lint fails on anything go vet, go mod tidy or staticcheck (pinned here)
# reports. CI runs it beside make test.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) vet $(PKGS)
	$(GO) vet -tags gpuemu ./kernels ./engine ./cmd/compbench
	$(GO) mod tidy -diff
	$(GO) run $(STATICCHECK) $(PKGS)

# test-scripts runs the experiment scripts end to end at a toy size, so a
# change to a command's flags or output cannot break them unnoticed.
test-scripts: build
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	COMPBENCH=$(BIN) POOL=300 SPLITS=2 TRAIN=60 DEV=10 TEST=20 SWEEP=scripts/testdata/covr-tiny.json \
		./scripts/covr_easiness.sh data/scfg/testdata/tiny.txt "$$d/covr" >"$$d/log" 2>&1 || { cat "$$d/log"; exit 1; }; \
	for want in "rule full, n=4:" "rule random, n=2:" "first-error:" "agreement"; do \
		grep -q "$$want" "$$d/covr/summary.md" || { echo "test-scripts: covr_easiness.sh summary lacks \"$$want\""; cat "$$d/log"; exit 1; }; \
	done; echo "test-scripts: covr_easiness.sh ok"
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	COMPBENCH=$(BIN) DEMO_DIR="$$d/demo" DEMO_EVERY=20 DEMO_STEPS=5 ./scripts/demo.sh >"$$d/log" 2>&1 || { cat "$$d/log"; exit 1; }; \
	for want in "| random |" "| mcd |" "compound div."; do \
		grep -qF "$$want" "$$d/demo/results.md" || { echo "test-scripts: demo.sh results lack \"$$want\""; cat "$$d/log"; exit 1; }; \
	done; echo "test-scripts: demo.sh ok (reduced: every 20th command, 5 steps)"
	@./scripts/gpu_session.sh --self-test

# test-docs runs every sh block of README.md and docs/*.md at toy size, in
# file order, one folder per file (scripts/test_docs.sh says how sizes are
# shrunk and which blocks are skipped), after checking that the script
# catches a broken example.
test-docs: build
	@./scripts/test_docs.sh --self-test
	@COMPBENCH=$(BIN) ./scripts/test_docs.sh

# test-gpuemu runs the GPU path's tests (kernel parity, the engine's CUDA
# backend, train/predict/finetune --device cuda against the CPU, the
# models against their PyTorch references) with the
# kernels compiled as host C++ and run by the CPU
# emulator of build tag gpuemu (docs/cuda.md): no GPU or CUDA toolkit
# needed, only g++. The kernel tests run a second time on the emulator's
# hostile schedule (threads and blocks in reverse order, shared memory
# starting as NaN), which turns a missing barrier into a parity failure,
# and again built with AddressSanitizer (test-gpuemu-asan).
test-gpuemu:
	$(GO) vet -tags gpuemu ./kernels ./engine ./cmd/compbench ./internal/reftest ./models/transformer ./models/lstm
	$(GO) test -tags gpuemu -timeout 10m ./kernels ./engine
	COMPBENCH_EMU_HOSTILE=1 $(GO) test -count=1 -tags gpuemu -timeout 5m ./kernels
	$(GO) test -tags gpuemu -timeout 5m -run 'TestDeviceCUDAEmulated' ./cmd/compbench
	$(GO) test -tags gpuemu -timeout 5m -run 'ReferenceCUDA' ./models/transformer ./models/lstm
	$(MAKE) --no-print-directory test-gpuemu-asan

# test-gpuemu-asan runs the kernel tests on the emulator built with
# AddressSanitizer, so a kernel that reads or writes outside its buffers
# (on a GPU: an illegal-address fault, or silent corruption within an
# allocation's rounding) fails with the kernel's source line. ASAN_PKGS=
# "./kernels ./engine" adds the engine's GPU tests (about 5 minutes).
# (-s=0 -w=0 keep the symbols go test strips, which ASan's report needs.)
ASAN_PKGS ?= ./kernels
ASAN_TEST = CGO_CXXFLAGS="-O1 -g -fsanitize=address" $(GO) test -count=1 -asan -ldflags='-s=0 -w=0' -tags gpuemu -timeout 20m
test-gpuemu-asan:
	$(ASAN_TEST) $(ASAN_PKGS)
	COMPBENCH_EMU_HOSTILE=1 $(ASAN_TEST) $(ASAN_PKGS)

demo: build
	./scripts/demo.sh

# The side-by-side benchmarks run PyTorch from Debian's python3-torch;
# PYTHON picks another interpreter that has torch.
PYTHON ?= /usr/bin/python3

bench: build bench-deps
	PYTHON=$(PYTHON) ./scripts/bench.sh

# bench-deps installs python3-torch when $(PYTHON) cannot import torch.
bench-deps:
	@if ! $(PYTHON) -c 'import torch' >/dev/null 2>&1; then \
		echo "bench-deps: installing python3-torch"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-torch >/dev/null; \
	fi

fmt:
	gofmt -w $$(git ls-files '*.go')

# deps installs what the default (OpenBLAS) build links against, on Debian,
# only when something is missing; it prints nothing when all is there.
deps:
ifeq ($(filter purego,$(TAGS)),)
	@if ! command -v gcc >/dev/null 2>&1 || [ ! -e /usr/include/$(MULTIARCH)/cblas.h ] || [ ! -e /usr/lib/$(MULTIARCH)/libopenblas.so ]; then \
		echo "deps: installing gcc and libopenblas-dev"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev libopenblas-dev >/dev/null; \
	fi
else
	@:
endif

# sweep-deps installs what the sweep and report tests use, only when
# missing: Debian's chromium (the HTML report rendered headless) and
# slurm-wlm and munge (a real single-node Slurm cluster,
# scripts/slurm_test_cluster.sh). Where they cannot be installed those
# tests are skipped, saying so.
sweep-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then \
		echo "sweep-deps: installing chromium, slurm-wlm and munge"; \
		{ $(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium slurm-wlm munge >/dev/null; } || \
		echo "sweep-deps: could not install them; the headless-browser and Slurm tests will be skipped"; \
	fi

clean:
	rm -rf bin

# ---- CUDA (see docs/cuda.md) ----
# NVCC compiles kernels/*.cu to PTX for the compute_80 virtual architecture:
# the driver JIT-compiles that PTX for Ampere (sm_80/86) and Hopper (sm_90),
# and nvcc 11.8 (Debian's toolkit) can emit it. -fmad=false keeps a*b+c
# rounded twice, as in Go, so elementwise kernels match their references
# bit for bit (the GEMMs use explicit fmaf or the tensor cores).
NVCC ?= nvcc
CUDA_ARCH ?= compute_80
NVCCFLAGS ?= -ptx -arch=$(CUDA_ARCH) -O3 -std=c++14 -fmad=false
KERNEL_SRCS := $(wildcard kernels/*.cu)

.PHONY: cuda-toolkit kernels kernels-check cuda-binary-check

# cuda-toolkit installs Debian non-free's nvidia-cuda-toolkit (nvcc, cuda.h)
# when nvcc or cuda.h is missing, first adding contrib non-free
# non-free-firmware to the deb822 Debian apt sources that lack them.
cuda-toolkit:
	@if command -v $(NVCC) >/dev/null 2>&1 && [ -e /usr/include/cuda.h ]; then exit 0; fi; \
	echo "cuda-toolkit: installing nvidia-cuda-toolkit (Debian non-free, about 1.6 GB)"; \
	for f in /etc/apt/sources.list.d/*.sources; do \
		[ -e "$$f" ] || continue; \
		grep -q 'debian' "$$f" || continue; \
		for c in contrib non-free non-free-firmware; do \
			$(SUDO) sed -i -E "/^Components:/{/(^|[[:space:]])$$c([[:space:]]|\$$)/!s/\$$/ $$c/}" "$$f"; \
		done; \
	done; \
	$(SUDO) apt-get update -qq && \
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit >/dev/null

# kernels regenerates the committed PTX from kernels/*.cu.
kernels: cuda-toolkit
	@mkdir -p kernels/ptx
	@for s in $(KERNEL_SRCS); do \
		b=$$(basename $$s .cu); \
		$(NVCC) $(NVCCFLAGS) -o kernels/ptx/$$b.ptx $$s || exit 1; \
	done

# kernels-check fails when the committed PTX differs from what the sources
# compile to, or when ptxas finds a kernel that would fail to launch or spill
# on a target GPU (scripts/ptx_check.sh).
kernels-check: cuda-toolkit
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for s in $(KERNEL_SRCS); do \
		b=$$(basename $$s .cu); \
		$(NVCC) $(NVCCFLAGS) -o $$tmp/$$b.ptx $$s || exit 1; \
	done; \
	if ! diff -r -q kernels/ptx $$tmp >/dev/null; then \
		diff -r kernels/ptx $$tmp | head -40; \
		echo "kernels-check: kernels/ptx is stale; run make kernels and commit"; exit 1; \
	fi
	@PTXAS=$$(dirname $$(command -v $(NVCC)))/ptxas ./scripts/ptx_check.sh

# cuda-binary-check builds the gpu binary and checks it as a lab deploys it:
# the driver-function list (kernels/cudaguard/symbols_cuda.h) is current,
# nothing CUDA is a load-time dependency, and it trains with --device cpu
# where no driver exists (scripts/cuda_binary_check.sh, docs/cuda.md).
cuda-binary-check: cuda-toolkit
	GO=$(GO) ./scripts/cuda_binary_check.sh

# ---- GPU session kit (see docs/gpu-session.md) ----
.PHONY: gpu-kit
# gpu-kit builds the GPU binaries and test binaries, compressed, into
# gpu-kit/ for scripts/gpu_session.sh on a GPU machine without Go.
# GPU_KIT_TAGS=gpuemu builds the emulator's instead (no GPU or CUDA needed).
gpu-kit:
	@if [ "$${GPU_KIT_TAGS:-gpu}" = gpu ]; then $(MAKE) --no-print-directory cuda-toolkit; fi
	GO=$(GO) ./scripts/gpu_kit.sh
