package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/engine/worker"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize"
)

// The summary and manifest are the pipeline package's.
type (
	extractSummary = pipeline.Summary
	manifestLine   = pipeline.ManifestLine
)

// stringsFlag collects a repeatable flag; `--videos a b c` also works (the rest are positionals).
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func runExtract(args []string, stdout, stderr io.Writer) int {
	var verbose bool
	o, videos, out, code := parseExtract(args, stderr, &verbose)
	if o == nil {
		return code
	}
	return extract(o, videos, out, verbose, stdout, stderr)
}

// parseExtract validates extract's flags into the engine's options, the videos and the cache
// location (and -v into verbose); nil and the exit status on bad usage (or an unreadable grid).
func parseExtract(args []string, stderr io.Writer, verbose *bool) (*pipeline.ExtractOptions, []string, string, int) {
	fs := newFlags("extract", stderr)
	var videos stringsFlag
	gridPath := fs.String("grid", "", "grid YAML file (required)")
	fs.Var(&videos, "videos", "video files (repeatable; further positional arguments are videos too)")
	out := fs.String("out", "", "cache: a local directory or a blob URL (file:///dir?no_tmp_dir=1&metadata=skip)")
	jobs := fs.Int("jobs", 1, "videos processed in parallel")
	tf := addTensorFlags(fs)
	noAutorotate := fs.Bool("no-autorotate", false, "do not apply the container's display rotation")
	stream := addStreamFlag(fs)
	onDamaged := addOnDamagedFlag(fs)
	shardSpec := fs.String("shard", "", shardFlagHelp)
	rehash := fs.Bool("rehash", false, "re-read and re-hash objects already in the cache before skipping them (default: ref, size and header only)")
	isolate := fs.Bool("worker", false, "decode each video in a supervised child process (untrusted files: a crash or hang fails that video only)")
	wTimeout := fs.Duration("worker-timeout", 30*time.Minute, "with --worker: deadline of each decoding process")
	wMemMB := fs.Int64("worker-memory-mb", 8192, "with --worker: resident memory limit of each decoding process (MiB, 0 = none)")
	fs.BoolVar(verbose, "v", false, "list every failed (video, config) pair on stderr (default: their count and the first; the JSON's failed_pairs lists them all)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, nil, "", flagParseStatus(err)
	}
	videos = append(videos, pos...)
	bad := func(format string, a ...any) (*pipeline.ExtractOptions, []string, string, int) {
		return nil, nil, "", usageErr(stderr, "extract", format, a...)
	}
	switch {
	case *gridPath == "":
		return bad("--grid is required")
	case *out == "":
		return bad("--out is required")
	case len(videos) == 0:
		return bad("--videos needs at least one video")
	case *jobs < 1:
		return bad("--jobs must be ≥ 1")
	case *wTimeout < 0 || *wMemMB < 0:
		return bad("--worker-timeout and --worker-memory-mb must be ≥ 0")
	}
	o := &pipeline.ExtractOptions{Jobs: *jobs, Rehash: *rehash}
	if o.Shard, err = parseShard(*shardSpec); err != nil {
		return bad("--shard: %v", err)
	}
	if o.Options, err = tf.options(); err != nil {
		return bad("%v", err)
	}
	o.NoAutorotate = *noAutorotate
	if o.Stream, err = stream.get(); err != nil {
		return bad("%v", err)
	}
	if o.OnDamaged, err = decode.ParseDamagePolicy(*onDamaged); err != nil {
		return bad("--on-damaged: %v", err)
	}
	if *isolate {
		o.Worker = &worker.Limits{Timeout: *wTimeout, Memory: *wMemMB << 20}
	}
	if err := o.Options.Check(); err != nil {
		return bad("%v", err)
	}
	if o.Grid, err = grid.Load(*gridPath); err != nil {
		return nil, nil, "", failErr(stderr, "extract", err)
	}
	if o.Stream == nil {
		o.Stream = o.Grid.Spec.Stream // the grid's stream: key, unless --stream names one
	}
	if err := pipeline.CheckConfigs(o.Grid.Configs, o.Options); err != nil { // a loader grid with --worker, --stream, …
		return bad("%s: %v", *gridPath, strings.TrimPrefix(err.Error(), pipeline.ErrOptions.Error()+": "))
	}
	return o, videos, *out, exitOK
}

// tensorFlags are extract's flags that decide the bytes of each object besides the grid.
type tensorFlags struct{ pipe, kernel, dtype, norm, layout *string }

func addTensorFlags(fs *flag.FlagSet) tensorFlags {
	return tensorFlags{
		pipe:   fs.String("pipeline", "", "raw | cached | both (default: each config's pipeline, raw if unset)"),
		kernel: fs.String("kernel", resize.DefaultKernel, "resize kernel: "+strings.Join(resize.Kernels(), "|")),
		dtype:  fs.String("dtype", "u8", "tensor type: u8 | f32 | f16"),
		norm:   fs.String("norm", "clip", "normalisation for float dtypes: "+strings.Join(native.NormNames(), "|")+" or mean=M|M|M,std=S|S|S"),
		layout: fs.String("layout", "nhwc", "tensor layout: nhwc | nchw (float dtypes only)"),
	}
}

// options are the engine options the flags name; an error is bad usage.
func (f tensorFlags) options() (pipeline.Options, error) {
	o := pipeline.Options{Kernel: *f.kernel, Layout: strings.ToUpper(*f.layout)}
	switch *f.pipe {
	case "":
	case "raw", "cached":
		o.Pipelines = []string{*f.pipe}
	case "both":
		o.Pipelines = []string{cache.PipelineRaw, cache.PipelineCached}
	default:
		return o, fmt.Errorf("--pipeline %q: want raw, cached or both", *f.pipe)
	}
	switch *f.dtype {
	case "u8":
		o.DType = cache.U8
	case "f32":
		o.DType, o.Norm = cache.F32, *f.norm
	case "f16":
		o.DType, o.Norm = cache.F16, *f.norm
	default:
		return o, fmt.Errorf("--dtype %q: want u8, f32 or f16", *f.dtype)
	}
	if err := resize.CheckKernel(o.Kernel); err != nil {
		return o, fmt.Errorf("--kernel %q: want one of %s", o.Kernel, strings.Join(resize.Kernels(), ", "))
	}
	return o, nil
}

// extract runs the engine over the videos into the cache at out and reports it: on stderr each
// failed video, and the failed (video, config) pairs as a count and the first (each with verbose).
func extract(o *pipeline.ExtractOptions, videos []string, out string, verbose bool, stdout, stderr io.Writer) int {
	ctx := context.Background()
	var err error
	if o.Store, err = cache.Open(ctx, out); err != nil {
		return failErr(stderr, "extract", err)
	}
	defer o.Store.Close()
	// A run killed before this one (kill -9, a crash) left temp files; those no live process holds are
	// removed now (several extracts may share the cache: a running one's temps are kept).
	removed, err := o.Store.RemoveDeadTemps(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "framesweep extract: warning: %v\n", pipeline.OneLine(err))
	}
	if len(removed) > 0 {
		var n int64
		for _, t := range removed {
			n += t.Size
		}
		fmt.Fprintf(stderr, "framesweep extract: removed %d temp files (%d bytes) that interrupted runs left in %s\n", len(removed), n, out)
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		o.Progress = (&progress{w: stderr, total: len(videos)}).step
	}
	sum, err := pipeline.Extract(ctx, *o, videos)
	if err != nil {
		var se *pipeline.SinkError
		if errors.As(err, &se) || sum == nil {
			return failErr(stderr, "extract", err)
		}
	}
	for _, f := range sum.Failed {
		fmt.Fprintf(stderr, "framesweep extract: %s\n", f.Error)
	}
	switch n := len(sum.FailedPairs); {
	case n > 0 && verbose:
		for _, f := range sum.FailedPairs {
			fmt.Fprintf(stderr, "framesweep extract: %s\n", f.Error)
		}
	case n > 0:
		fmt.Fprintf(stderr, "framesweep extract: %d of %d (video, config) pairs failed, the first: %s (-v lists each; the JSON's failed_pairs has them all)\n",
			n, sum.Pairs, sum.FailedPairs[0].Error)
	}
	if err := writeJSON(stdout, sum); err != nil {
		return failErr(stderr, "extract", err)
	}
	if sum.VideosFailed > 0 || sum.PairsFailed > 0 {
		return exitError
	}
	return exitOK
}

// progress is a one-line bar on a terminal.
type progress struct {
	mu          sync.Mutex
	w           io.Writer
	total, done int
}

func (p *progress) step(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	const width = 30
	n := p.done * width / max(p.total, 1)
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d videos  %-40.40s", strings.Repeat("#", n), strings.Repeat(".", width-n), p.done, p.total, filepath.Base(path))
	if p.done == p.total {
		fmt.Fprintln(p.w)
	}
}
