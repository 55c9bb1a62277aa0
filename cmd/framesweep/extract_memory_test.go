package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/framesweep/framesweep/bench"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// memGrid is a grid of n configs: budgets 32 and 64 × n/2 distinct square sizes (224² upwards), raw
// pipeline, so every config is its own object of 32 or 64 frames.
func memGrid(t testing.TB, n int) string {
	var sizes []string
	for i := 0; i < n/2; i++ {
		s := 224 + 16*i
		sizes = append(sizes, fmt.Sprintf("%q", fmt.Sprintf("%dx%d", s, s)))
	}
	return exWriteGrid(t, "frames: [32, 64]\npolicies: [uniform]\nresolutions: ["+strings.Join(sizes, ", ")+"]\n")
}

// peakRSS runs the binary with args and returns its peak resident set in MiB (wait4's ru_maxrss).
func peakRSS(t testing.TB, bin string, args ...string) float64 {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return float64(ru.Maxrss) / 1024 // kB on Linux
}

func memClip(t testing.TB, seconds int) string {
	testenv.Need(t, "ffmpeg")
	c := bench.Clip{Seconds: seconds, Width: 1920, Height: 1080, FPS: 30, GOP: 60, Codec: "h264", Bits: 8}
	p, err := bench.EnsureClip(context.Background(), bench.CacheDir(), c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExtractMemoryFlat: peak RSS does not grow with the grid. Every object streams to its spool as
// frames arrive, so 32 configs (32 objects, ~1.2 GB of uint8 tensors) peak within 1.5× of 4 configs.
// The engine once held every config's outputs until the pass ended (870 MB for 32 configs on a 20 s
// clip).
func TestExtractMemoryFlat(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	bin, clip := testenv.Binary(t), memClip(t, 5)
	rss := map[int]float64{}
	for _, n := range []int{4, 32} {
		rss[n] = peakRSS(t, bin, "extract", "--grid", memGrid(t, n), "--out", t.TempDir(), "--videos", clip)
	}
	t.Logf("peak RSS: 4 configs %.0f MiB, 32 configs %.0f MiB (%.2f×)", rss[4], rss[32], rss[32]/rss[4])
	if rss[32] > 1.5*rss[4] {
		t.Errorf("peak RSS grows with the grid: %.0f MiB for 32 configs vs %.0f MiB for 4", rss[32], rss[4])
	}
}

// BenchmarkExtractMemory reports extract's peak RSS (a whole process, the binary under test) against
// the number of configs on a 20 s 1080p30 H.264 clip: go test -run '^$' -bench BenchmarkExtractMemory
// -benchtime 1x ./cmd/framesweep/
func BenchmarkExtractMemory(b *testing.B) {
	bin, clip := testenv.Binary(b), memClip(b, 20)
	base := 0.0
	for _, n := range []int{4, 8, 16, 32} {
		b.Run(fmt.Sprintf("configs=%d", n), func(b *testing.B) {
			grid := memGrid(b, n)
			var rss float64
			for b.Loop() {
				out := filepath.Join(b.TempDir(), "cache")
				rss = peakRSS(b, bin, "extract", "--grid", grid, "--out", out, "--videos", clip)
				os.RemoveAll(out)
			}
			if n == 4 {
				base = rss
			}
			b.ReportMetric(rss, "peak-RSS-MiB")
			if base > 0 {
				b.ReportMetric(rss/base, "x-4-configs")
			}
		})
	}
}
