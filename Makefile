# compgen: see README.md. Every target installs what it needs.
GO ?= go
BIN := bin/compgen
PKGS := ./...
# TAGS=purego builds with gonum's pure-Go BLAS: no C compiler, no OpenBLAS.
TAGS ?=
MULTIARCH := $(shell gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build test demo bench deps clean fmt vet

all: build

build: deps
	$(GO) build -tags '$(TAGS)' -o $(BIN) ./cmd/compgen

test: deps
	$(GO) vet -tags '$(TAGS)' $(PKGS)
	$(GO) test -tags '$(TAGS)' -timeout 15m $(PKGS)

demo: build
	./scripts/demo.sh

bench: build
	./scripts/bench.sh

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

clean:
	rm -rf bin
