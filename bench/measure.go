package bench

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/pipeline"
)

// variant is one timed thing; run performs it once.
type variant struct {
	name string // the row name's tail, e.g. "variant=once/threads=1"
	run  func(ctx context.Context) error
	secs []float64 // wall time per measured repetition
	cpu  []float64 // CPU time (user+sys, this process and its children) per measured repetition
}

// cpuSeconds is the user+sys time used so far by this process and its reaped children. CPU time is far
// less disturbed than wall time by other work on a shared machine, so rows report both.
func cpuSeconds() float64 {
	var t float64
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			t += float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
		}
	}
	return t
}

// measure runs every variant warmup times unmeasured, then reps times measured, interleaving the
// variants within each repetition so a change in machine load affects all of them alike.
func measure(ctx context.Context, log io.Writer, label string, vs []*variant, warmup, reps int) error {
	for i := 0; i < warmup+reps; i++ {
		for _, v := range vs {
			c0, start := cpuSeconds(), time.Now()
			if err := v.run(ctx); err != nil {
				return fmt.Errorf("%s %s: %w", label, v.name, err)
			}
			el, cpu := time.Since(start).Seconds(), cpuSeconds()-c0
			if i >= warmup {
				v.secs = append(v.secs, el)
				v.cpu = append(v.cpu, cpu)
			}
			if log != nil {
				fmt.Fprintf(log, "bench: %s %s: %.2fs wall, %.2fs CPU%s\n", label, v.name, el, cpu, map[bool]string{true: " (warm-up)"}[i < warmup])
			}
		}
	}
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ffmpegNull runs `ffmpeg [-threads T] -i path [extra…] -f null -`: a full decode by the CLI. threads < 0
// leaves FFmpeg's default.
func ffmpegNull(ctx context.Context, path string, threads int, extra ...string) error {
	var args []string
	if threads >= 0 {
		args = append(args, "-threads", strconv.Itoa(threads))
	}
	args = append(args, "-i", path)
	return ffmpegNullArgs(ctx, append(args, extra...))
}

// ffmpegNullArgs runs `ffmpeg … ARGS -f null -`.
func ffmpegNullArgs(ctx context.Context, args []string) error {
	full := append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"}, args...)
	full = append(full, "-f", "null", "-")
	out, err := exec.CommandContext(ctx, "ffmpeg", full...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ffmpeg %s: %w: %v: %s", strings.Join(args, " "), ErrFFmpeg, err, oneLine(string(out)))
	}
	return nil
}

// decodeOnce opens path through the engine's source layer and reads indices in one decode-once pass,
// discarding the frames (each is still decoded and converted to RGB24). It returns the pass's
// statistics.
func decodeOnce(path string, o pipeline.Options, indices []int) (decode.Stats, error) {
	return readFrames(path, o, indices, func(*decode.Frame) error { return nil })
}

// readFrames opens path through the engine's source layer (no hashing: nothing here is keyed), reads
// indices and closes it.
func readFrames(path string, o pipeline.Options, idx []int, fn func(*decode.Frame) error) (decode.Stats, error) {
	_, src, err := pipeline.OpenSource(context.Background(), pipeline.VideoRef{Path: path}, o)
	if err != nil {
		return decode.Stats{}, err
	}
	defer src.Close()
	st, err := src.Read(idx, fn)
	if err != nil {
		return st, err
	}
	return st, src.Close()
}

// describe is path's description (the index scan; nothing decoded).
func describe(path string) (decode.Info, error) {
	v, src, err := pipeline.OpenSource(context.Background(), pipeline.VideoRef{Path: path}, pipeline.Options{})
	if err != nil {
		return decode.Info{}, err
	}
	return v.Info, src.Close()
}

func threadsName(t int) string {
	if t <= 0 {
		return "default"
	}
	return strconv.Itoa(t)
}
