package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// malformedBound is how long one command may take on one damaged file (the clips are ≤ 0.7 MB and
// 13 s; a healthy run takes well under a second): past it the file hangs something.
const malformedBound = 2 * time.Minute

// malformedVideos writes damaged copies of the repository's sample videos (testdata/videos): cut at
// 1, 10, 50 % and one byte short of the end, bytes flipped in the header and in the middle, ranges
// zeroed at the start, at a quarter and in the middle, and the first part swapped with another
// video's. The damage is drawn from a fixed seed, so a failure names a file that can be rebuilt.
func malformedVideos(t *testing.T, dir string) (originals, damaged []string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "videos")
	names := []string{"nasa_13013.mp4", "h265_video.mp4", "bear-vp9-odd-dimensions.webm", "video_90.mov"}
	data := make([][]byte, len(names))
	for i, n := range names {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		data[i] = b
		originals = append(originals, filepath.Join(src, n))
	}
	r := rand.New(rand.NewPCG(17, 17))
	flip := func(b []byte, lo, hi, n int) []byte {
		b = bytes.Clone(b)
		for k := 0; k < n; k++ {
			b[lo+r.IntN(max(hi-lo, 1))] ^= byte(1 + r.IntN(255))
		}
		return b
	}
	zero := func(b []byte, at, n int) []byte {
		b = bytes.Clone(b)
		clear(b[at:min(at+n, len(b))])
		return b
	}
	for i, n := range names {
		b, size := data[i], len(data[i])
		head := min(4096, size/8)
		next := data[(i+1)%len(data)]
		swapped := append(bytes.Clone(next[:min(head, len(next))]), b[min(head, size):]...)
		for _, m := range []struct {
			kind string
			b    []byte
		}{
			{"cut-1pct", b[:size/100]},
			{"cut-10pct", b[:size/10]},
			{"cut-50pct", b[:size/2]},
			{"cut-last-byte", b[:size-1]},
			{"flip-header", flip(b, 0, head, 16)},
			{"flip-middle", flip(b, size/2-head/2, size/2+head/2, 16)},
			{"zero-start", zero(b, 0, 1024)},
			{"zero-quarter", zero(b, size/4, head)},
			{"zero-middle", zero(b, size/2-size/8, size/4)},
			{"swap-header", swapped},
		} {
			p := filepath.Join(dir, m.kind+"-"+n)
			if err := os.WriteFile(p, m.b, 0o644); err != nil {
				t.Fatal(err)
			}
			damaged = append(damaged, p)
		}
	}
	return originals, damaged
}

// runBounded runs the binary and fails the test on a hang (past malformedBound) or a crash (a signal).
func runBounded(t *testing.T, bin string, args ...string) testenv.Result {
	t.Helper()
	return testenv.Run(t, malformedBound, []string{"FRAMESWEEP_FFMPEG_LOG="}, bin, args...)
}

// checkOutcome: exit 0, or exit 1 with exactly one stderr line from the command (no FFmpeg log line, no
// leakcheck line, no panic).
func checkOutcome(t *testing.T, cmd string, args []string, res testenv.Result) {
	t.Helper()
	switch res.Code {
	case exitOK:
	case exitError:
		if strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 || !strings.HasPrefix(res.Stderr, "framesweep "+cmd+": ") {
			t.Errorf("%v: exit 1 without a one-line error:\n%s", args, res.Stderr)
		}
	default:
		t.Errorf("%v: exit %d:\n%s", args, res.Code, res.Stderr)
	}
}

// TestMalformedVideosReplay replays 40 damaged copies of the sample videos through probe, frames and
// extract --worker of a -tags leakcheck binary: every run ends within malformedBound with exit 0 or a
// one-line error, nothing crashes, and every process (workers included) ends with no FFmpeg object of
// decode live (leakExit). The undamaged originals still extract.
func TestMalformedVideosReplay(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a binary and runs about 80 processes")
	}
	bin := testenv.LeakcheckBinary(t)
	dir := t.TempDir()
	originals, damaged := malformedVideos(t, dir)
	var (
		mu       sync.Mutex
		slowest  time.Duration
		outcomes = map[string]int{}
	)
	t.Run("probe-frames", func(t *testing.T) {
		for _, v := range damaged {
			t.Run(filepath.Base(v), func(t *testing.T) {
				t.Parallel()
				probe := runBounded(t, bin, "probe", v, "--json")
				checkOutcome(t, "probe", []string{"probe", v}, probe)
				indices := "0,1,2"
				if probe.Code == exitOK {
					var info struct{ Frames int }
					if err := json.Unmarshal([]byte(probe.Stdout), &info); err != nil {
						t.Fatalf("probe %s: exit 0 with bad JSON: %v", v, err)
					}
					if n := info.Frames; n > 0 {
						indices = fmt.Sprintf("0,%d,%d", n/2, n-1)
					}
				}
				args := []string{"frames", v, "--indices", indices, "--out", filepath.Join(dir, "frames-"+filepath.Base(v)), "--on-damaged", "keep"}
				frames := runBounded(t, bin, args...)
				checkOutcome(t, "frames", args, frames)
				mu.Lock()
				outcomes[fmt.Sprintf("probe %d, frames %d", probe.Code, frames.Code)]++
				slowest = max(slowest, probe.Took, frames.Took)
				mu.Unlock()
			})
		}
	})
	t.Logf("%d damaged files: %v; slowest command %v", len(damaged), outcomes, slowest.Round(time.Millisecond))
	if outcomes["probe 0, frames 0"] == len(damaged) || outcomes["probe 1, frames 1"] == len(damaged) {
		t.Errorf("every damaged file had the same outcome (%v): the damage did not damage", outcomes)
	}

	grid := exWriteGrid(t, "frames: [4]\npolicies: [uniform]\nresolutions: [\"32x24\"]\npipelines: [raw]\n")
	args := append([]string{"extract", "--grid", grid, "--out", filepath.Join(dir, "cache"), "--worker", "--worker-timeout", "2m", "--jobs", "2", "--videos"}, append(originals, damaged...)...)
	res := runBounded(t, bin, args...)
	if res.Code != exitOK && res.Code != exitError {
		t.Fatalf("extract --worker: exit %d:\n%s", res.Code, res.Stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(res.Stderr), "\n") {
		if l != "" && !strings.HasPrefix(l, "framesweep extract: ") || strings.Contains(l, "leakcheck") {
			t.Errorf("extract --worker: stray stderr line %q", l)
		}
	}
	var sum extract.Summary
	if err := json.Unmarshal([]byte(res.Stdout), &sum); err != nil {
		t.Fatalf("extract --worker: bad summary: %v\n%s", err, res.Stdout)
	}
	if sum.Videos != len(originals)+len(damaged) || sum.VideosFailed == 0 || sum.ObjectsWritten < len(originals) {
		t.Errorf("extract --worker: %d videos, %d failed, %d objects written", sum.Videos, sum.VideosFailed, sum.ObjectsWritten)
	}
	for _, f := range sum.Failed {
		for _, o := range originals {
			if f.Path == o {
				t.Errorf("an undamaged video failed: %s", f.Error)
			}
		}
		if strings.Contains(f.Error, "leakcheck") || strings.Contains(f.Error, "signal") {
			t.Errorf("%s: %s", f.Path, f.Error)
		}
	}
	t.Logf("extract --worker: %d videos, %d failed, %d pairs failed, %d objects, %v", sum.Videos, sum.VideosFailed, sum.PairsFailed, sum.ObjectsWritten, res.Took.Round(time.Millisecond))
}
