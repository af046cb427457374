# compgen: see README.md. Every target installs what it needs.
GO ?= go
BIN := bin/compgen
PKGS := ./...

.PHONY: all build test demo bench deps clean fmt vet

all: build

build:
	$(GO) build -o $(BIN) ./cmd/compgen

test:
	$(GO) vet $(PKGS)
	$(GO) test -timeout 15m $(PKGS)

demo: build
	./scripts/demo.sh

bench: build
	./scripts/bench.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
