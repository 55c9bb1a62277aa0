package native

import (
	"os"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// fastLevels returns the levels above Generic that this build and CPU run: the ones a differential test
// compares with the generic reference. With none such a test would pass having compared nothing, so
// skipNoFastLevels says why instead.
func fastLevels() []Level { return Supported()[1:] }

// genericOnly is set (FRAMESWEEP_GENERIC_ONLY=1) by the runs that leave the C kernels out on purpose:
// make test's noasm (-tags noasm) and nocgo (CGO_ENABLED=0) steps.
const genericOnly = "FRAMESWEEP_GENERIC_ONLY"

// cpuHasFastLevel reports whether this CPU runs a C level (AVX2+F16C, detect's test), whatever the
// build: a machine that has one but ran none compared nothing. It asks x/sys/cpu, not cpuid, which
// -tags noasm blinds too.
func cpuHasFastLevel() bool { return cpu.X86.HasAVX2 && cpu.X86.HasF16C }

// skipNoFastLevels ends tb, naming the reason, when fastLevels is empty. Call it after any checks that
// do not need a fast level (they still count: a test that failed and then skipped has failed). A CPU
// level the machine lacks is not an oracle (internal/testsupport/testenv): that is a skip, under CI as well. But
// under CI a machine whose CPU has a C level fails when none ran (a build that lost its C kernels by
// accident: CGO_ENABLED=0 when no C compiler is found, a stray noasm tag), unless the run says it
// leaves them out on purpose (genericOnly).
func skipNoFastLevels(tb testing.TB) {
	tb.Helper()
	if len(fastLevels()) > 0 {
		return
	}
	why := "this CPU (" + CPUBrand() + ") lacks AVX2+F16C: no C level runs here, nothing to compare with the generic reference"
	if !haveAsm {
		why = "no C kernels in this build (-tags noasm, CGO_ENABLED=0 or not amd64): no level to compare with the generic reference"
	}
	if testenv.CI() && cpuHasFastLevel() && os.Getenv(genericOnly) != "1" {
		tb.Fatalf("CI=true: this CPU runs AVX2+F16C but %s; a run without C kernels on purpose sets %s=1", why, genericOnly)
	}
	tb.Skip(why)
}

// torchLevels returns the levels whose torch-bicubic C kernels run (they need FMA3 besides, else a
// level falls back to Generic and a comparison would compare Generic with itself), or ends tb as
// skipNoFastLevels does.
func torchLevels(tb testing.TB) []Level {
	tb.Helper()
	skipNoFastLevels(tb)
	if !hasFMA {
		tb.Skipf("this CPU (%q) lacks FMA3: the torch-bicubic C kernels do not run here, nothing to compare with the generic reference", CPUBrand())
	}
	return fastLevels()
}
