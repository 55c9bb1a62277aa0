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

# Static checks: gofmt, vet, a tidy go.mod (and deploy/k8s's), the binary without the cloud drivers,
# cgo only at the edges, pure-Go packages build without cgo. Vet reads every package with the default
# tags, then, for each tag some file is built with (VET_TAGS), the packages whose own files that tag
# changes (the race step's -tags leakcheck among them, which runs its tests with -vet=off): a package
# whose files a tag does not change is the same code, already vetted (and the nocloud build just after
# type-checks every importer of internal/bucket under that tag).
VET_TAGS := nocloud leakcheck matprofile noasm noparquet
check:
	@$(ENV) out=$$(gofmt -l $$(git ls-files '*.go')) && { test -z "$$out" || { echo "$$out"; echo "gofmt: files above need formatting"; exit 1; }; }
	$(ENV) go vet ./...
	$(ENV) for tag in $(VET_TAGS); do go vet -tags $$tag $$(git grep -l "^//go:build.*\b$$tag\b" -- '*.go' | xargs -n1 dirname | sort -u | sed 's|^|./|') || exit 1; done
	$(ENV) go build -tags nocloud -o /dev/null ./cmd/framesweep
	@$(ENV) go mod tidy -diff >/dev/null || { go mod tidy -diff; echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	$(ENV) cd deploy/k8s && go vet ./...
	@$(ENV) cd deploy/k8s && { go mod tidy -diff >/dev/null || { go mod tidy -diff; echo "deploy/k8s/go.mod is not tidy: run go mod tidy there"; exit 1; }; }
	$(ENV) bash scripts/check-cgo.sh

# The test tiers (docs/testing.md). The race step builds and tests every package with the race
# detector, the strict cgo pointer checks (GOEXPERIMENT=cgocheck2, STYLE.md B7) and decode's count of
# live FFmpeg handles (-tags leakcheck: its TestMain fails when one is left, STYLE.md B6) at once, and
# its subprocess tests run a binary built the same way (RACE_BIN), so the detector sees their work too.
# Its go test does not vet (-vet=off): `make check` vets the same files with every analyzer go test's
# subset has.
# The integration tier, the subprocess tests that measure or kill the process (INTEGRATION: their
# names), runs on the plain binary in a step of its own, beside the race step; the malformed-input
# replay runs a -tags leakcheck build (LEAK_BIN). TestTiersNameRealTests keeps INTEGRATION true.
RACE_BIN := bin/framesweep-race
LEAK_BIN := bin/framesweep-leakcheck
RACE_BUILD = GOEXPERIMENT=cgocheck2 go $(1) -race -tags leakcheck
INTEGRATION := TestGPUScript|TestMalformedVideosReplay|TestExtractSIGKILL|TestSweepKill9|TestSweepKill9ObjectStore|TestExtractMemoryFlat|TestServeLoad|TestBenchPeers|TestBenchPeersStream|TestSlurmJobArray

# Every step prints its time (scripts/step.sh; the table is in the README). After the build the steps
# run two at a time (make -j2, each step's output printed whole when it ends): the race step, the
# longest, on one side; the others in turn beside it, longest first (fuzz first: last, it ran alone
# for six minutes after the race step in a fresh root). The cgo C/C++ that the race, -tags, asan and fuzz
# builds compile again comes from ccache through scripts/cc-wrap.
TEST_STEPS := test-race test-fuzz test-check test-integration test-asan test-nocgo test-campaign \
	test-matprofile test-k8s test-nocloud test-noasm
.PHONY: $(TEST_STEPS)

test: deps
	$(STEP) build 'go build -o $(BIN) ./cmd/framesweep'
	$(MAKE) -s -k -j2 --output-sync=target $(TEST_STEPS)

test-race:
	$(STEP) race '$(call RACE_BUILD,build) -o $(RACE_BIN) ./cmd/framesweep && \
		FRAMESWEEP_BIN=$(CURDIR)/$(RACE_BIN) FRAMESWEEP_PLAIN_BIN=$(CURDIR)/$(BIN) $(call RACE_BUILD,test) -vet=off -count=1 -timeout $(GO_TEST_TIMEOUT) -skip "^($(INTEGRATION))$$" ./...'
test-integration:
	$(STEP) integration 'go build -tags leakcheck -o $(LEAK_BIN) ./cmd/framesweep && \
		FRAMESWEEP_BIN=$(CURDIR)/$(BIN) FRAMESWEEP_PLAIN_BIN=$(CURDIR)/$(BIN) FRAMESWEEP_LEAKCHECK_BIN=$(CURDIR)/$(LEAK_BIN) \
		go test -count=1 -timeout $(GO_TEST_TIMEOUT) -run "^($(INTEGRATION))$$" ./cmd/framesweep/ ./deploy/slurm/'
test-check:
	$(STEP) check '$(MAKE) -s check'
test-campaign:
	$(STEP) campaign 'FRAMESWEEP_BIN=$(CURDIR)/$(BIN) bash scripts/campaign/run.sh --short'
# deploy/k8s is its own module (./... above does not enter it); the object-store drivers' -tags nocloud errors.
test-k8s:
	$(STEP) k8s 'cd deploy/k8s && go test -count=1 ./...'
test-nocloud:
	$(STEP) nocloud 'go test -tags nocloud -count=1 -run TestNoCloud ./internal/bucket/'
# The kernels again without SIMD (-tags noasm) and without cgo (pure-Go references, pure-Go packages),
# and the resize tests with gocv's Mat leak profile (fails on an unclosed Mat).
test-noasm:
	$(STEP) noasm 'FRAMESWEEP_GENERIC_ONLY=1 go test -tags noasm ./native/'
test-nocgo:
	$(STEP) nocgo 'FRAMESWEEP_GENERIC_ONLY=1 CGO_ENABLED=0 go test ./native/ ./sampler/... ./grid/... ./loader/ ./audit/... ./ingest/... ./resize/geom/ ./decode/internal/h26x/'
test-matprofile:
	$(STEP) matprofile 'go test -tags matprofile ./resize/'
# AddressSanitizer + LeakSanitizer over our own C (STYLE.md C12): native/ (the SIMD kernels),
# native/ffmpeg, native/opencv (our libjpeg and cv::resize edge) and llm/llamacpp (our shims and mtmd;
# the prebuilt libllama/ggml and Debian's OpenCV and libjpeg run uninstrumented under the same runtime, so LeakSanitizer sees their allocations too). scripts/lsan.supp is where a
# third-party leak would be named by function: full stacks, and -o keeps the test binaries' symbols
# (go test strips them otherwise, and nothing would match).
test-asan:
	$(STEP) asan 'd=$$(mktemp -d) && ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp \
		go test -asan -count=1 -o $$d/ ./native/ ./native/ffmpeg/ ./native/opencv/ ./llm/llamacpp/ && rm -rf $$d'
# Every Fuzz* target, found by scripts/fuzz.sh, for FUZZTIME each (5 s), the pure parsers without cgo.
test-fuzz:
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
