package native

import (
	"testing"
)

// fastLevels returns the levels above Generic that this build and CPU run: the ones a differential test
// compares with the generic reference. With none such a test would pass having compared nothing, so
// skipNoFastLevels says why instead. A CPU level the machine lacks is not an oracle
// (internal/testenv): -tags noasm and CGO_ENABLED=0, which `make test` runs on purpose, have none, and
// scripts/env.sh builds for CPUs without AVX2 too, so this is a skip, under CI as well.
func fastLevels() []Level { return Supported()[1:] }

// skipNoFastLevels skips tb, naming the reason, when fastLevels is empty. Call it after any checks that
// do not need a fast level (they still count: a test that failed and then skipped has failed).
func skipNoFastLevels(tb testing.TB) {
	tb.Helper()
	if len(fastLevels()) > 0 {
		return
	}
	if !haveAsm {
		tb.Skip("no C kernels in this build (-tags noasm, CGO_ENABLED=0 or not amd64): no level to compare with the generic reference")
	}
	tb.Skipf("this CPU (%q) lacks AVX2+F16C: no C level runs here, nothing to compare with the generic reference", CPUBrand())
}
