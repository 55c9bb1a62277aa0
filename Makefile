# framesweep: `make demo` and `make test` set up a fresh Debian 12 machine (as root) and run.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
ENV := source scripts/env.sh &&
BIN := bin/framesweep
GO_TEST_TIMEOUT ?= 60m

.PHONY: all deps deps-build deps-cuda build test test-short check fuzz demo bench clean

all: build

# Idempotent: installs the missing Debian packages, npm files and Go modules, and nothing else. `make build`
# (and `make demo`) install only what building needs; `make test` adds the tests' oracles and tools.
deps:
	$(STEP) deps 'bash scripts/deps.sh'

deps-build:
	$(STEP) deps 'bash scripts/deps.sh build'

# The build set plus llama.cpp's CUDA backend, built for CUDA 13 and for CUDA 12 (third_party/llama/cuda/13
# and /12; llamacpp:…,device=cuda0 loads the one whose runtime the host has; `framesweep doctor`
# says which; docs/runtimes.md "GPU").
deps-cuda:
	$(STEP) deps 'bash scripts/deps.sh cuda'

# STEP NAME 'COMMAND' runs one step with scripts/env.sh sourced and prints its wall and CPU time.
STEP := bash scripts/step.sh

build: deps-build
	$(STEP) build 'go build -o $(BIN) ./cmd/framesweep'

# Static checks: gofmt, vet (default and -tags nocloud), a tidy go.mod (and deploy/k8s's), the binary
# without the cloud drivers, cgo only at the edges, pure-Go packages build without cgo.
check:
	@$(ENV) out=$$(gofmt -l $$(git ls-files '*.go')) && { test -z "$$out" || { echo "$$out"; echo "gofmt: files above need formatting"; exit 1; }; }
	$(ENV) go vet ./...
	$(ENV) go vet -tags nocloud ./...
	$(ENV) go build -tags nocloud -o /dev/null ./cmd/framesweep
	@$(ENV) go mod tidy -diff >/dev/null || { go mod tidy -diff; echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	$(ENV) cd deploy/k8s && go vet ./...
	@$(ENV) cd deploy/k8s && { go mod tidy -diff >/dev/null || { go mod tidy -diff; echo "deploy/k8s/go.mod is not tidy: run go mod tidy there"; exit 1; }; }
	$(ENV) bash scripts/check-cgo.sh

# Every step prints its time (scripts/step.sh; the table is in the README). The cgo C/C++ that the race,
# -tags, cgocheck2 and fuzz builds compile again comes from ccache through scripts/cc-wrap.
test: deps
	$(STEP) build 'go build -o $(BIN) ./cmd/framesweep'
	$(STEP) check '$(MAKE) -s check'
	$(STEP) race 'FRAMESWEEP_BIN=$(CURDIR)/$(BIN) go test -race -count=1 -timeout $(GO_TEST_TIMEOUT) ./...'
	$(STEP) campaign 'FRAMESWEEP_BIN=$(CURDIR)/$(BIN) bash scripts/campaign/run.sh --short'
	# deploy/k8s is its own module (./... above does not enter it); the object-store drivers' -tags nocloud errors.
	$(STEP) k8s 'cd deploy/k8s && go test -count=1 ./...'
	$(STEP) nocloud 'go test -tags nocloud -count=1 -run TestNoCloud ./internal/bucket/'
	# The kernels again without SIMD (-tags noasm) and without cgo (pure-Go references, pure-Go packages),
	# and the resize tests with gocv's Mat leak profile (fails on an unclosed Mat).
	$(STEP) noasm 'FRAMESWEEP_GENERIC_ONLY=1 go test -tags noasm ./native/'
	$(STEP) nocgo 'FRAMESWEEP_GENERIC_ONLY=1 CGO_ENABLED=0 go test ./native/ ./sampler/... ./grid/... ./loader/ ./audit/... ./ingest/... ./resize/geom/ ./decode/internal/h26x/'
	$(STEP) matprofile 'go test -tags matprofile ./resize/'
	# Every package that hands memory to C, under the strict cgo pointer checks (STYLE.md B7); decode/ also
	# counts its live FFmpeg handles (-tags leakcheck: TestMain fails when one is left, STYLE.md B6).
	$(STEP) cgocheck2 'GOEXPERIMENT=cgocheck2 go test -count=1 ./native/ ./native/opencv/ ./resize/ ./llm/llamacpp/ ./llm/onnx/'
	$(STEP) leakcheck 'GOEXPERIMENT=cgocheck2 go test -count=1 -tags leakcheck ./decode/'
	# AddressSanitizer + LeakSanitizer over our own C (STYLE.md C12): native/ (the SIMD kernels),
	# native/ffmpeg, native/opencv (our libjpeg and cv::resize edge) and llm/llamacpp (our shims and mtmd;
	# the prebuilt libllama/ggml and Debian's OpenCV and libjpeg run uninstrumented
	# under the same runtime, so LeakSanitizer sees their allocations too). scripts/lsan.supp is where a
	# third-party leak would be named by function: full stacks, and -o keeps the test binaries' symbols
	# (go test strips them otherwise, and nothing would match).
	$(STEP) asan 'd=$$(mktemp -d) && ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp \
		go test -asan -count=1 -o $$d/ ./native/ ./native/ffmpeg/ ./native/opencv/ ./llm/llamacpp/ && rm -rf $$d'
	# Every Fuzz* target, found by scripts/fuzz.sh, for FUZZTIME each (5 s: about 3 minutes in all).
	$(STEP) fuzz 'bash scripts/fuzz.sh'

# Every fuzz target for longer: make fuzz FUZZTIME=2m
fuzz:
	$(ENV) bash scripts/fuzz.sh

test-short: deps
	$(ENV) go test -short ./...

demo: build
	$(STEP) demo 'bash scripts/demo.sh'

# Every Go benchmark once (ratios against baselines measured in the same run); the CLI twins
# (`framesweep bench grid|decode|memory|resize`) print the same rows with --format benchstat|csv|json.
bench: build
	$(ENV) go test -run '^$$' -bench . -benchtime 1x -timeout 60m ./... | tee bench.out

clean:
	rm -rf bin bench.out
