package native

import (
	"fmt"
	"sync/atomic"

	"github.com/klauspost/cpuid/v2"
)

// Level is a dispatch level: which implementation of each kernel runs.
type Level int32

const (
	Generic Level = iota // pure Go, always available; the reference
	AVX2                 // C, 256-bit vectors (x86-64-v3)
	AVX512               // C, 512-bit vectors (AVX-512 F+BW)
)

func (l Level) String() string {
	switch l {
	case Generic:
		return "generic"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return fmt.Sprintf("level(%d)", int32(l))
}

// ParseLevel maps "generic", "avx2" or "avx512" to a Level.
func ParseLevel(s string) (Level, error) {
	for _, l := range []Level{Generic, AVX2, AVX512} {
		if l.String() == s {
			return l, nil
		}
	}
	return Generic, fmt.Errorf("native: unknown level %q (generic, avx2, avx512): %w", s, ErrUnsupportedLevel)
}

var (
	best    = detect()
	current atomic.Int32
	// hasVNNI selects the vpdpwssd variant of the horizontal resample pass within the avx512 level.
	hasVNNI = best == AVX512 && cpuid.CPU.Supports(cpuid.AVX512VNNI)
	// hasFMA: the torch-bicubic C kernels fuse some multiply-adds, as torch's build does (else Generic).
	hasFMA = best >= AVX2 && cpuid.CPU.Supports(cpuid.FMA3)
)

func init() { current.Store(int32(best)) }

// detect picks the best level this build and CPU support; done once at start-up.
func detect() Level {
	if !haveAsm {
		return Generic
	}
	if cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX2, cpuid.F16C) {
		return AVX512
	}
	if cpuid.CPU.Supports(cpuid.AVX2, cpuid.F16C) {
		return AVX2
	}
	return Generic
}

// Best is the fastest level the build and the CPU support.
func Best() Level { return best }

// CurrentLevel is the level kernels use now.
func CurrentLevel() Level { return Level(current.Load()) }

// Supported lists the levels this build and CPU can run, Generic first.
func Supported() []Level {
	out := []Level{Generic}
	for l := AVX2; l <= best; l++ {
		out = append(out, l)
	}
	return out
}

// CPUBrand is the CPU's brand string, recorded in bench rows.
func CPUBrand() string { return cpuid.CPU.BrandName }

// SetLevel forces the dispatch level (for tests and benchmarks) and returns a func that restores the
// previous one: `defer native.SetLevel(native.Generic)()`. A level above Best is a programmer error
// and panics, so a test can never silently run a different kernel than it names.
func SetLevel(l Level) (restore func()) {
	if l < Generic || l > best {
		panic(fmt.Sprintf("native: SetLevel(%v): this build/CPU supports up to %v", l, best))
	}
	prev := current.Swap(int32(l))
	return func() { current.Store(prev) }
}
