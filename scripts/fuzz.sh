#!/usr/bin/env bash
# Runs every Fuzz* target of the module for a short, bounded time: FUZZTIME per target (default 5s), each
# after its checked-in seed corpus (testdata/fuzz/<target>/) and the f.Add seeds. Targets are found, not
# listed: a grep for `func Fuzz` in the test files names the packages, `go test -list '^Fuzz'` the exact
# targets (build tags included), so a package that adds a fuzz target is fuzzed with no change here.
# A failure leaves the failing input in that package's testdata/fuzz/<target>/ and fails the run.
# Usage: [FUZZTIME=10s] [FUZZ_PKGS="./audit/ ./sampler/"] bash scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-5s}
# Minimizing each new interesting input may take 60 s by default: keep the step bounded.
minimize=${FUZZMINIMIZETIME:-1s}
if [[ -n "${FUZZ_PKGS:-}" ]]; then
	read -r -a pkgs <<<"$FUZZ_PKGS"
else
	mapfile -t pkgs < <(git ls-files --cached --others --exclude-standard -- '*_test.go' |
		xargs grep -l '^func Fuzz' | xargs -r -n1 dirname | sort -u | sed 's|^|./|')
fi
n=0
start=$SECONDS
for pkg in "${pkgs[@]}"; do
	mapfile -t targets < <(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
	for target in "${targets[@]}"; do
		t0=$SECONDS
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" >/tmp/fuzz.$$.log 2>&1 || {
			cat /tmp/fuzz.$$.log
			rm -f /tmp/fuzz.$$.log
			echo "fuzz: $pkg $target FAILED (the failing input is in $pkg/testdata/fuzz/$target/)"
			exit 1
		}
		echo "fuzz: $pkg $target ok ($((SECONDS - t0)) s)"
		n=$((n + 1))
	done
done
rm -f /tmp/fuzz.$$.log
echo "fuzz: $n targets, ${fuzztime} each, $((SECONDS - start)) s"
