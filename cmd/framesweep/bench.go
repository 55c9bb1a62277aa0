package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/bench"
	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// benchMode is one `framesweep bench MODE`: setup registers the mode's own flags on fs and returns the
// function that runs it once the flags are parsed.
type benchMode struct {
	summary string
	setup   func(fs *flag.FlagSet, stderr io.Writer) func(ctx context.Context) ([]bench.Row, error)
}

// benchModes is the explicit table of bench modes.
var benchModes = map[string]benchMode{
	"grid":   {"decode-once over a budget grid vs a full ffmpeg decode and per-budget decoding", setupBenchGrid},
	"decode": {"decoding every frame to RGB24 vs ffmpeg -pix_fmt rgb24; optional --hwaccel check vs the CPU", setupBenchDecode},
	"memory": {"peak RSS holding 256 frames resized to 448x448 from the 1080p clip vs output bytes + 150 MiB", setupBenchMemory},
	"resize": {"native Pillow-exact bicubic per dispatch level vs Pillow 9.4 and OpenCV INTER_CUBIC", setupBenchResize},
	"peers":  {"framesweep extract vs PyAV (lmms-eval per config, decode-once, keyframe seeks), OpenCV seeks and a bare ffmpeg decode, one process each", setupBenchPeers},
}

func runBench(args []string, stdout, stderr io.Writer) int {
	mode := "grid"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		mode, args = args[0], args[1:]
	}
	m, ok := benchModes[mode]
	if !ok {
		return usageErr(stderr, "bench", "unknown mode %q (modes: %s)", mode, strings.Join(benchModeNames(), ", "))
	}
	fs := newFlags("bench "+mode, stderr)
	asJSON := fs.Bool("json", false, "print rows as JSON (same as --format json)")
	format := fs.String("format", "benchstat", "output format: "+strings.Join(bench.Formats, ", "))
	run := m.setup(fs, stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: framesweep bench [%s] [flags]\n\n%s: %s\n\nflags:\n", strings.Join(benchModeNames(), "|"), mode, m.summary)
		printFlags(fs)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) > 0 {
		return usageErr(stderr, "bench", "unexpected argument %q", pos[0])
	}
	if *asJSON {
		*format = "json"
	}
	if !validFormat(*format) {
		return usageErr(stderr, "bench", "unknown --format %q (want %s)", *format, strings.Join(bench.Formats, ", "))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rows, err := run(ctx)
	var bu benchUsage
	if errors.As(err, &bu) {
		return usageErr(stderr, "bench "+mode, "%v", bu.error)
	}
	if err != nil {
		// Print what was measured before the failure, then the one-line error.
		_ = bench.Write(stdout, *format, rows)
		return failErr(stderr, "bench "+mode, err)
	}
	if err := bench.Write(stdout, *format, rows); err != nil {
		return failErr(stderr, "bench "+mode, err)
	}
	return exitOK
}

// clipsFlag is --clips DIR, where the benchmarks generate their clips (--cache before: a content
// store in sweep and serve).
func clipsFlag(fs *flag.FlagSet, help string) *string {
	p := fs.String("clips", bench.CacheDir(), help)
	deprecate(fs, "cache", "--clips", "clips")
	return p
}

// benchUsage marks a mode's error as bad usage (exit status 2) rather than a failed run.
type benchUsage struct{ error }

func validFormat(f string) bool {
	for _, x := range bench.Formats {
		if x == f {
			return true
		}
	}
	return false
}

func benchModeNames() []string {
	names := make([]string, 0, len(benchModes))
	for n := range benchModes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func setupBenchGrid(fs *flag.FlagSet, stderr io.Writer) func(context.Context) ([]bench.Row, error) {
	gops := fs.String("gops", "250,60", "keyframe intervals of the generated 60 s 1080p30 H.264 clips")
	budgets := fs.String("budgets", "16,32,64,128,256", "frame budgets whose union is served")
	ladder := fs.String("ladder", bench.LadderLinspace, "budget placement: linspace (round(linspace), not nested) or nested (floor(i*N/n))")
	reps := fs.Int("reps", 1, "measured repetitions per variant (the median is reported)")
	warmup := fs.Int("warmup", 0, "unmeasured repetitions first")
	cache := clipsFlag(fs, "directory for the generated clips")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	return func(ctx context.Context) ([]bench.Row, error) {
		g, err := bench.ParseInts(*gops)
		if err != nil {
			return nil, benchUsage{fmt.Errorf("--gops: %w", err)}
		}
		b, err := sampler.ParseLadder(*budgets)
		if err != nil {
			return nil, benchUsage{fmt.Errorf("--budgets %w", err)}
		}
		if *ladder != bench.LadderLinspace && *ladder != bench.LadderNested {
			return nil, benchUsage{fmt.Errorf("--ladder: want %s or %s, got %q", bench.LadderLinspace, bench.LadderNested, *ladder)}
		}
		if *reps < 1 || *warmup < 0 {
			return nil, benchUsage{fmt.Errorf("--reps must be ≥ 1 and --warmup ≥ 0")}
		}
		cfg := bench.GridConfig{GOPs: g, Budgets: b, Ladder: *ladder, Reps: *reps, Warmup: *warmup, CacheDir: *cache}
		if !*quiet {
			cfg.Log = stderr
		}
		return bench.Grid(ctx, cfg)
	}
}

func setupBenchDecode(fs *flag.FlagSet, stderr io.Writer) func(context.Context) ([]bench.Row, error) {
	video := fs.String("video", "", "video to decode (default: the generated 60 s 1080p30 H.264 GOP 250 clip)")
	threads := fs.String("threads", "1,0", "decoder thread counts to time (0 = FFmpeg's default)")
	hw := fs.String("hwaccel", "", "also decode on this device (cuda, vaapi, auto) and compare with the CPU")
	compare := fs.Int("compare", 32, "frames sampled for the --hwaccel PSNR comparison")
	reps := fs.Int("reps", 1, "measured repetitions per variant (the median is reported)")
	warmup := fs.Int("warmup", 0, "unmeasured repetitions first")
	cache := clipsFlag(fs, "directory for the generated clip")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	return func(ctx context.Context) ([]bench.Row, error) {
		var ts []int
		for _, f := range strings.Split(*threads, ",") {
			t, err := strconv.Atoi(strings.TrimSpace(f)) // Sscanf would take "2k" as 2
			if err != nil || t < 0 {
				return nil, benchUsage{fmt.Errorf("--threads: bad thread count %q", f)}
			}
			ts = append(ts, t)
		}
		if *reps < 1 || *warmup < 0 || *compare < 1 {
			return nil, benchUsage{fmt.Errorf("--reps and --compare must be ≥ 1, --warmup ≥ 0")}
		}
		cfg := bench.DecodeConfig{Video: *video, Threads: ts, HWAccel: *hw, Compare: *compare, Reps: *reps,
			Warmup: *warmup, CacheDir: *cache}
		if !*quiet {
			cfg.Log = stderr
		}
		return bench.Decode(ctx, cfg)
	}
}

func setupBenchMemory(fs *flag.FlagSet, stderr io.Writer) func(context.Context) ([]bench.Row, error) {
	video := fs.String("video", "", "video to serve (default: the generated 60 s 1080p30 H.264 GOP 250 clip)")
	frames := fs.Int("frames", 256, "frames served (nested uniform placement) and held")
	size := fs.String("size", "448x448", "output size WxH")
	kernel := fs.String("kernel", "", "resize kernel (default: the resize package's default)")
	threads := fs.Int("threads", 0, "decoder threads (0 = FFmpeg's default)")
	cache := clipsFlag(fs, "directory for the generated clip")
	inWorker := fs.Bool("worker", false, "decode in a supervised worker process; this process resizes and holds the outputs")
	return func(ctx context.Context) ([]bench.Row, error) {
		if *frames < 1 || *threads < 0 {
			return nil, benchUsage{fmt.Errorf("--frames must be ≥ 1 and --threads ≥ 0")}
		}
		w, h, err := geom.ParseWxH(*size) // the same rule as frames --size ("448x448x" is not a size)
		if err != nil {
			return nil, benchUsage{fmt.Errorf("--size %q: want WxH with each side 1..%d", *size, geom.MaxSide)}
		}
		if err := extract.CheckKernel(*kernel); err != nil {
			return nil, benchUsage{err}
		}
		return bench.Memory(ctx, bench.MemoryConfig{Video: *video, Frames: *frames, Width: w, Height: h, Kernel: *kernel,
			Threads: *threads, CacheDir: *cache, Log: stderr, Worker: *inWorker})
	}
}

// repeatFlag collects a repeatable flag; a comma-separated value adds each part.
type repeatFlag []string

func (r *repeatFlag) String() string { return strings.Join(*r, ",") }

func (r *repeatFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*r = append(*r, p)
		}
	}
	return nil
}

// defaultSharedVideos is ../shared/testdata/videos from the working directory (the repository root, or
// a worktree beside shared/), "" when absent.
func defaultSharedVideos() string {
	for _, d := range []string{"../shared/testdata/videos", "../../shared/testdata/videos"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}

func setupBenchPeers(fs *flag.FlagSet, stderr io.Writer) func(context.Context) ([]bench.Row, error) {
	var videos, peers repeatFlag
	fs.Var(&videos, "video", "video to serve (repeatable; default: the generated 60 s 1080p30 H.264 and HEVC clips, the 600 s 720p30 H.264 clip and the shared real videos)")
	grid := fs.String("grid", "", "grid YAML (default: bench/peers/grid.yaml, lmms-eval 8/16/32/64 frames at 448x448)")
	stream := fs.Int("stream", -1, "video stream every peer decodes, by its index in the file (default: framesweep's choice, FFmpeg's best video stream)")
	reps := fs.Int("reps", 1, "measured repetitions per peer (the median is reported)")
	warmup := fs.Int("warmup", 0, "unmeasured repetitions first (the check runs already read each file once)")
	fs.Var(&peers, "peers", "peers to run (repeatable or comma-separated; default all: "+strings.Join(bench.PeerNames, ",")+")")
	bin := fs.String("framesweep", "", "framesweep binary that runs extract (default: this executable)")
	python := fs.String("python", bench.DefaultPython(), "Python with numpy, Pillow, PyAV and OpenCV")
	shared := fs.String("shared", defaultSharedVideos(), "directory of the shared real videos added by default (\"\" = none)")
	cache := clipsFlag(fs, "directory for the generated clips")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	return func(ctx context.Context) ([]bench.Row, error) {
		if *reps < 1 || *warmup < 0 {
			return nil, benchUsage{fmt.Errorf("--reps must be ≥ 1 and --warmup ≥ 0")}
		}
		if *stream < -1 {
			return nil, benchUsage{fmt.Errorf("--stream %d: want a stream index ≥ 0", *stream)}
		}
		for _, p := range peers {
			if !slices.Contains(bench.PeerNames, p) {
				return nil, benchUsage{fmt.Errorf("--peers: unknown peer %q (peers: %s)", p, strings.Join(bench.PeerNames, ", "))}
			}
		}
		exe := *bin
		if exe == "" {
			var err error
			if exe, err = os.Executable(); err != nil {
				return nil, err
			}
		}
		cfg := bench.PeersConfig{Videos: videos, Shared: *shared, Grid: *grid, Framesweep: exe, Python: *python,
			Peers: peers, Reps: *reps, Warmup: *warmup, CacheDir: *cache}
		if *stream >= 0 {
			cfg.Stream = stream
		}
		if !*quiet {
			cfg.Log = stderr
		}
		return bench.Peers(ctx, cfg)
	}
}
