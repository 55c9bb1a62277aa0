#!/usr/bin/env bash
# Runs every Fuzz* target of the module for a short, bounded time: FUZZTIME per target (default 5s), each
# after its checked-in seed corpus (testdata/fuzz/<target>/) and the f.Add seeds. Targets are found, not
# listed: a grep for `func Fuzz` in the test files names the packages, `go test -list '^Fuzz'` the exact
# targets (build tags included), so a package that adds a fuzz target is fuzzed with no change here.
# A failure leaves the failing input in that package's testdata/fuzz/<target>/ and fails the run.
# Targets build with -tags nocloud (FUZZTAGS): a fuzz build instruments every package it links, and the
# cloud SDKs that cache/ (and what imports it) would link are most of the build and none of the targets.
# A package whose own build links no cgo outside the standard library (go list -deps finds CgoFiles only
# in std's net and os/user, which have pure-Go twins: the pure parsers, such as decode/internal/h26x,
# record, runs, cache's safetensors, the importers) is fuzzed with CGO_ENABLED=0: no cgo package is
# compiled or instrumented for it, and the target runs as the pure-Go code it is. Its test files that
# need cgo (runs' sweeps through llama.cpp) say `//go:build cgo` and drop out of that build; one that
# needs cgo and does not say so fails the build here, loudly.
# Usage: [FUZZTIME=10s] [FUZZ_PKGS="./audit/ ./sampler/"] [FUZZTAGS=…] bash scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-5s}
# Minimizing each new interesting input may take 60 s by default: keep the step bounded.
minimize=${FUZZMINIMIZETIME:-1s}
tags=${FUZZTAGS-nocloud}
if [[ -n "${FUZZ_PKGS:-}" ]]; then
	read -r -a pkgs <<<"$FUZZ_PKGS"
else
	mapfile -t pkgs < <(git ls-files --cached --others --exclude-standard -- '*_test.go' |
		xargs grep -l '^func Fuzz' | xargs -r -n1 dirname | sort -u | sed 's|^|./|')
fi
n=0
start=$SECONDS
for pkg in "${pkgs[@]}"; do
	cgo=1 how=""
	if [[ -z "$(go list -tags "$tags" -deps -f '{{if and .CgoFiles (not .Standard)}}{{.ImportPath}}{{end}}' "$pkg")" ]]; then
		cgo=0 how=", no cgo"
	fi
	mapfile -t targets < <(CGO_ENABLED=$cgo go test -tags "$tags" -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
	for target in "${targets[@]}"; do
		t0=$SECONDS
		corpus="$pkg/testdata/fuzz/$target"
		before=$(ls "$corpus" 2>/dev/null | sort || true)
		if CGO_ENABLED=$cgo go test -tags "$tags" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" >/tmp/fuzz.$$.log 2>&1; then
			echo "fuzz: $pkg $target ok ($((SECONDS - t0)) s$how)"
		elif [[ "$(ls "$corpus" 2>/dev/null | sort || true)" == "$before" ]] && grep -q '^    context deadline exceeded$' /tmp/fuzz.$$.log &&
			! grep -q 'Failing input written' /tmp/fuzz.$$.log; then
			# Go 1.26's fuzz coordinator can report its own -fuzztime deadline as a failure when a worker
			# is mid-call as it expires (golang/go#75804, fixed in Go 1.27): no input failed, none was
			# written. A real failure, a panic or a hang writes its input to testdata/fuzz/<target>/.
			echo "fuzz: $pkg $target ok ($((SECONDS - t0)) s$how; the run ended on golang/go#75804's deadline race, no failing input)"
		else
			cat /tmp/fuzz.$$.log
			rm -f /tmp/fuzz.$$.log
			echo "fuzz: $pkg $target FAILED (the failing input, if any, is in $corpus/)"
			exit 1
		fi
		n=$((n + 1))
	done
done
rm -f /tmp/fuzz.$$.log
echo "fuzz: $n targets, ${fuzztime} each, $((SECONDS - start)) s"
