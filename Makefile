# Cairn — build, run, test, check, bench.
#   make run    build and start the server on its embedded defaults (127.0.0.1:8098, ./data)
#   make cluster  build and start a local 3-node cluster on loopback ports in
#                 ./data/cluster/n1..n3 (scripts/cluster.sh; Ctrl-C stops it)
#   make test   every test (with -race when a C compiler is available for cgo; the
#               end-to-end package without it, see below)
#   make test-race-e2e  the end-to-end package under the race detector (~5 GB of RAM)
#   make check  formatting, vet, golangci-lint, tests, brief fuzzing, go mod tidy diff
#   make bench  load benchmarks (Cairn vs bare net/http, a 3-node cluster vs one node)
#               and Go micro-benchmarks
#   make proto  regenerate sdk/goplugin/hookspb from hooks.proto (needs protoc; the Go
#               generators are installed in bin/tools)
#   make wasm-examples  rebuild the example WebAssembly modules from source (needs their
#                       toolchains: see wasm-examples/*/*/TOOLCHAIN)

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS   := -X main.buildVersion=$(VERSION)
TOOLS     := $(CURDIR)/bin/tools
GOLANGCI  := $(TOOLS)/golangci-lint
GOLANGCI_VERSION := v2.15.0
# -race needs cgo and a C compiler; a fresh machine with only Go runs without it.
RACE      := $(shell command -v gcc >/dev/null 2>&1 && echo -race)
FUZZTIME  ?= 5s
TEST_TIMEOUT ?= 15m
# The end-to-end package runs its servers in the test's process (core/coretest). Under
# the race detector they need ~5 GB and run slower than the uninstrumented binary these
# tests started before (docs/testing.md), so `make test` runs this package without
# -race, beside the others, and `make test-race-e2e` runs it with -race.
E2E       := ./cmd/cairn
# The storage tests that make goleveldb's compactions fail skip under -race (goleveldb's
# own race on that path, syndtr/goleveldb#356); `make test` runs them without it.
NORACE_STORAGE := ^(TestDiskFullTmpfs|TestWriteFailureHeals)$$

.PHONY: all build run cluster test test-race-e2e check fmt-check vet lint fuzz tidy-check bench wasm-examples proto clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/cairn ./cmd/cairn

run: build
	./bin/cairn serve

cluster: build
	CAIRN=./bin/cairn ./scripts/cluster.sh

test:
	@s=0; \
	$(GO) test $(RACE) -timeout $(TEST_TIMEOUT) $$($(GO) list ./... | grep -v '/cmd/cairn$$') & unit=$$!; \
	{ $(GO) test -timeout $(TEST_TIMEOUT) $(E2E) && \
	  $(GO) test -timeout $(TEST_TIMEOUT) -run '$(NORACE_STORAGE)' ./core/storage; } & e2e=$$!; \
	wait $$unit || s=1; wait $$e2e || s=1; exit $$s

test-race-e2e:
	$(GO) test $(RACE) -timeout $(TEST_TIMEOUT) $(E2E)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

$(GOLANGCI):
	GOBIN=$(TOOLS) GOFLAGS= $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)

lint: $(GOLANGCI)
	$(GOLANGCI) run ./...

# Every fuzz target runs briefly (FUZZTIME each) on top of its seed corpus. A failure with
# a failing input fails at once; one of the engine itself (a worker that died or hung under
# load, no input to show) is printed and the target is run once more.
FUZZLOG := $(or $(TMPDIR),/tmp)/cairn-fuzz.log
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "fuzz $$pkg $$f"; \
	    if ! $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >$(FUZZLOG) 2>&1; then \
	      cat $(FUZZLOG); \
	      if grep -q 'Failing input written' $(FUZZLOG); then exit 1; fi; \
	      echo "fuzz $$f failed without a failing input (the fuzzing engine itself); once more:"; \
	      $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	    fi; \
	  done; \
	done

tidy-check:
	@cp go.mod /tmp/cairn-go.mod.bak; cp go.sum /tmp/cairn-go.sum.bak; \
	$(GO) mod tidy; \
	if ! cmp -s go.mod /tmp/cairn-go.mod.bak || ! cmp -s go.sum /tmp/cairn-go.sum.bak; then \
	  echo "go.mod/go.sum not tidy: run 'go mod tidy'"; \
	  cp /tmp/cairn-go.mod.bak go.mod; cp /tmp/cairn-go.sum.bak go.sum; exit 1; fi

check: fmt-check vet tidy-check lint test fuzz

bench: build
	$(GO) run ./cmd/cairn-bench --phases get,put,sync,burst,hook,query,plugin,s3,cluster --cairn-bin bin/cairn
	$(GO) test -run '^$$' -bench . -benchtime 2s ./core/... ./plugins/...

wasm-examples:
	./wasm-examples/build.sh

# The process-plugin contract's generated code is committed; regenerate it after editing
# hooks.proto (protoc from Debian's protobuf-compiler).
proto:
	GOBIN=$(TOOLS) GOFLAGS= $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	GOBIN=$(TOOLS) GOFLAGS= $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
	cd sdk/goplugin/hookspb && PATH=$(TOOLS):$$PATH protoc --go_out=. --go_opt=paths=source_relative \
	  --go-grpc_out=. --go-grpc_opt=paths=source_relative hooks.proto

clean:
	rm -rf bin
