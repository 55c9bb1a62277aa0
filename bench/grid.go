package bench

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/pipeline"
)

// GridConfig configures the grid benchmark. Zero values take the defaults noted.
type GridConfig struct {
	GOPs     []int     // keyframe intervals of the generated clips (default 250, 60)
	Budgets  []int     // frame budgets (default 16, 32, 64, 128, 256)
	Ladder   string    // LadderLinspace (default) or LadderNested
	Reps     int       // measured repetitions per variant; the row holds the median (default 1)
	Warmup   int       // unmeasured repetitions first (default 0: the clip was just read from disk once)
	CacheDir string    // where clips are generated (default CacheDir())
	Log      io.Writer // progress lines; nil = quiet
	// Clip gives the clip for a GOP (default BenchClip: 60 s of 1080p30 H.264); tests use small ones.
	Clip func(gop int) Clip
}

func (c GridConfig) withDefaults() GridConfig {
	if len(c.GOPs) == 0 {
		c.GOPs = []int{250, 60}
	}
	if len(c.Budgets) == 0 {
		c.Budgets = DefaultBudgets
	}
	if c.Ladder == "" {
		c.Ladder = LadderLinspace
	}
	if c.Reps <= 0 {
		c.Reps = 1
	}
	if c.CacheDir == "" {
		c.CacheDir = CacheDir()
	}
	if c.Clip == nil {
		c.Clip = BenchClip
	}
	return c
}

// Grid times, for each GOP, serving the union of the budgets from one decode-once pass against
//
//	(a) a full decode by the CLI, `ffmpeg -threads 1 -i V -f null -` (and with FFmpeg's default threads),
//	(b) decoding each budget separately: a fresh Open and Read per budget, seeking as decode does.
//
// decode-once runs with 1 thread (like for like with (a)) and with FFmpeg's default threads; (b) runs with
// 1 thread. Every variant includes opening the file (the index scan). It returns one row per variant
// and a summary row per GOP ("Grid/gop=G/ladder=L") whose metrics are the ratios:
//
//	x-once-t1/ffmpeg-t1        decode-once (1 thread) ÷ ffmpeg full decode (1 thread)   target ≤ 1.2
//	x-once-def/ffmpeg-def      decode-once ÷ ffmpeg, both with default threads
//	x-per-budget/once          per-budget decoding ÷ decode-once, both 1 thread           target ≥ 3
func Grid(ctx context.Context, cfg GridConfig) ([]Row, error) {
	cfg = cfg.withDefaults()
	env := CurrentEnv()
	var rows []Row
	for _, gop := range cfg.GOPs {
		r, err := gridGOP(ctx, cfg, env, gop)
		rows = append(rows, r...)
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// gridGOP measures the variants on the clip of one GOP and returns their rows and the summary row.
func gridGOP(ctx context.Context, cfg GridConfig, env Env, gop int) ([]Row, error) {
	clip := cfg.Clip(gop)
	if cfg.Log != nil {
		fmt.Fprintf(cfg.Log, "bench: clip %s (generated once into %s)\n", clip.name(), cfg.CacheDir)
	}
	path, err := EnsureClip(ctx, cfg.CacheDir, clip)
	if err != nil {
		return nil, err
	}
	info, err := describe(path)
	if err != nil {
		return nil, err
	}
	n, keys := info.Frames, info.Keyframes
	per, union, err := Union(cfg.Ladder, n, cfg.Budgets)
	if err != nil {
		return nil, err
	}
	base := fmt.Sprintf("Grid/gop=%d/ladder=%s", gop, cfg.Ladder)

	var onceT1, onceDef decode.Stats
	perStats := make([]decode.Stats, len(per))
	vs := []*variant{
		{name: "variant=ffmpeg/threads=1", run: func(ctx context.Context) error { return ffmpegNull(ctx, path, 1) }},
		{name: "variant=ffmpeg/threads=default", run: func(ctx context.Context) error { return ffmpegNull(ctx, path, -1) }},
		{name: "variant=once/threads=1", run: func(context.Context) (err error) {
			onceT1, err = decodeOnce(path, pipeline.Options{Threads: 1}, union)
			return err
		}},
		{name: "variant=once/threads=default", run: func(context.Context) (err error) {
			onceDef, err = decodeOnce(path, pipeline.Options{}, union)
			return err
		}},
		{name: "variant=per-budget/threads=1", run: func(context.Context) error {
			for i, idx := range per {
				st, err := decodeOnce(path, pipeline.Options{Threads: 1}, idx)
				if err != nil {
					return err
				}
				perStats[i] = st
			}
			return nil
		}},
	}
	if err := measure(ctx, cfg.Log, base, vs, cfg.Warmup, cfg.Reps); err != nil {
		return nil, err
	}
	ffT1, ffDef := median(vs[0].secs), median(vs[1].secs)
	oT1, oDef, pb := median(vs[2].secs), median(vs[3].secs), median(vs[4].secs)
	cpu := func(i int) float64 { return median(vs[i].cpu) }
	row := func(i int, ms ...Metric) Row {
		ms = append(ms, Metric{"cpu-s", cpu(i)})
		return Row{Name: base + "/" + vs[i].name, Mode: "grid", Iterations: cfg.Reps, Warmup: cfg.Warmup,
			Seconds: median(vs[i].secs), Metrics: ms, Env: env}
	}
	perDecoded, perSeeks := 0, 0
	for _, st := range perStats {
		perDecoded += st.Decoded
		perSeeks += st.Seeks
	}
	return []Row{
		row(0, Metric{"frames/s", float64(n) / ffT1}),
		row(1, Metric{"frames/s", float64(n) / ffDef}),
		row(2, Metric{"x-ffmpeg-t1", oT1 / ffT1}, Metric{"decoded-frames", float64(onceT1.Decoded)},
			Metric{"served-frames", float64(onceT1.Converted)}, Metric{"seeks", float64(onceT1.Seeks)}),
		row(3, Metric{"x-ffmpeg-def", oDef / ffDef}, Metric{"decoded-frames", float64(onceDef.Decoded)},
			Metric{"seeks", float64(onceDef.Seeks)}),
		row(4, Metric{"x-once-t1", pb / oT1}, Metric{"decoded-frames", float64(perDecoded)},
			Metric{"seeks", float64(perSeeks)}),
		Row{Name: base, Mode: "grid", Iterations: cfg.Reps, Warmup: cfg.Warmup, Seconds: oT1, Env: env, Metrics: []Metric{
			{"x-once-t1/ffmpeg-t1", oT1 / ffT1},
			{"x-once-def/ffmpeg-def", oDef / ffDef},
			{"x-once-def/ffmpeg-t1", oDef / ffT1},
			{"x-per-budget/once", pb / oT1},
			{"x-cpu-once-t1/ffmpeg-t1", cpu(2) / cpu(0)},
			{"x-cpu-per-budget/once", cpu(4) / cpu(2)},
			{"frames", float64(n)},
			{"keyframes", float64(keys)},
			{"union", float64(len(union))},
			{"budgets-sum", float64(sum(cfg.Budgets))},
		}},
	}, nil
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// ParseInts parses a list of positive integers, "250,60" (bench grid's --gops; budgets are ladders,
// sampler.ParseLadder): an empty field is an error, as in every list the CLI takes.
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad positive integer %q in %q", f, s)
		}
		out = append(out, n)
	}
	return out, nil
}
