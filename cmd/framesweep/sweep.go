package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sampler"
	"github.com/framesweep/framesweep/sweep"
)

const sweepUsage = `usage: framesweep sweep --grid GRID.yaml --items ITEMS.jsonl --runtime SPEC --out RUN [--resume [--retry-errors]] [--jobs N] [--video-root DIR]
                        [--cache CACHE] [--template NAME] [--limit N] [--shard i/N|env] [--log-format text|json]
                        [--kernel K] [--stream N] [--on-damaged fail|keep] [--no-autorotate] [--worker [--worker-timeout D] [--worker-memory-mb N]]
                        [--max-tokens N] [--temperature T] [--llm-seed S] [--chunk-records N] [--chunk-interval D]
                        [--stop-grace D] [--cascade 16,32,64,128 (--threshold T | --threshold-from RUN [--folds K])]
                        [--strict-tokens]
  RUN: a directory, or a blob URL (s3://bucket/prefix?…, gs://…, azblob://…: records as chunk objects)`

// sweepFlags are `framesweep sweep`'s flags; options turns them into sweep.Options, whose Check holds
// the rules on their values.
type sweepFlags struct {
	grid, items, spec, out, cacheLoc, template, shard, logFormat string
	videoRoot, kernel                                            *string
	resume, retryErrors, strictTokens, asJSON                    bool
	jobs, limit, maxTokens, chunkRecords, folds                  int
	temperature, threshold                                       float64
	seed                                                         int64
	cascade, thresholdFrom                                       string
	chunkInterval, stopGrace                                     time.Duration
	dec                                                          *decodeFlags
}

func (f *sweepFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.grid, "grid", "", "grid YAML (required)")
	fs.StringVar(&f.items, "items", "", "items JSONL (required; README \"Items file\")")
	f.videoRoot = fs.String("video-root", "", "directory records name videos relative to (default: the items file's directory)")
	fs.StringVar(&f.spec, "runtime", "", "runtime spec: llamacpp:model=…,mmproj=… | onnx:model=… | openai:url=…,model=… (required)")
	fs.StringVar(&f.out, "out", "", "the RUN (required): a directory (records.jsonl, run.json) or a blob URL (records/ chunks, run.json)")
	fs.BoolVar(&f.resume, "resume", false, "continue the sweep RUN holds: recorded pairs are skipped (but those whose error is transient), a torn last line is cut")
	fs.BoolVar(&f.retryErrors, "retry-errors", false, "with --resume: ask every pair recorded as an error again (e.g. once a missing video is there)")
	fs.IntVar(&f.jobs, "jobs", 1, "videos in parallel")
	fs.StringVar(&f.cacheLoc, "cache", "", "content-addressed input store (a directory or blob URL) read and written; default: none (inputs are fed from memory, those over the memory budget through the RUN's scratch store)")
	fs.StringVar(&f.template, "template", llm.TemplateGeneric, "prompt template and answer parser for items that name none: "+strings.Join(llm.TemplateIDs, " "))
	fs.IntVar(&f.limit, "limit", 0, "the first N items only (0 = all)")
	fs.StringVar(&f.shard, "shard", "", shardFlagHelp)
	fs.StringVar(&f.logFormat, "log-format", "text", "log lines on stderr: text | json")
	f.kernel = kernelFlag(fs)
	f.dec = addDecodeFlags(fs, dStream|dDamaged|dRotate|dWorker)
	fs.IntVar(&f.maxTokens, "max-tokens", 0, fmt.Sprintf("generation bound (default %d)", llm.DefaultMaxTokens))
	fs.Float64Var(&f.temperature, "temperature", 0, "sampling temperature (0 = greedy)")
	fs.Int64Var(&f.seed, "llm-seed", 0, llmSeedHelp)
	deprecate(fs, "seed", "--llm-seed", "llm-seed")
	fs.StringVar(&f.cascade, "cascade", "", "a ladder of frame budgets (e.g. 16,32,64,128): run the grid's configs as an online confidence cascade")
	fs.Float64Var(&f.threshold, "threshold", -1, "cascade: escalate while the confidence (largest option probability) is below T")
	fs.StringVar(&f.thresholdFrom, "threshold-from", "", "cascade: choose T on a previous full RUN as framesweep cascade does offline")
	fs.IntVar(&f.folds, "folds", 0, "with --threshold-from: choose T on K−1 folds K times and take the median (K ≥ 2)")
	fs.IntVar(&f.chunkRecords, "chunk-records", runs.DefaultChunkRecords, "RUN on an object store: publish a records chunk every N records")
	fs.DurationVar(&f.chunkInterval, "chunk-interval", runs.DefaultChunkInterval, "RUN on an object store: publish a chunk once its oldest record has waited this long")
	fs.BoolVar(&f.strictTokens, "strict-tokens", false, "a pair whose visual tokens the model counted otherwise than its frames make (seen/expected outside [0.95, 1.05]; in process, unequal) becomes an error record; by default one warning per config")
	fs.DurationVar(&f.stopGrace, "stop-grace", sweep.DefaultStopGrace, "after SIGINT/SIGTERM, how long the answers in flight may take before they are cancelled (left to --resume); 0: cancel them at once")
	fs.BoolVar(&f.asJSON, "json", false, "accepted for uniformity: this command always prints JSON")
}

// options validates the flags into sweep options (no file is read); a usage error is returned as
// its message.
func (f *sweepFlags) options(args []string) (sweep.Options, error) {
	o := sweep.Options{GridPath: f.grid, Template: f.template, Out: f.out, Resume: f.resume, RetryErrors: f.retryErrors, Jobs: f.jobs, Limit: f.limit,
		MaxTokens: f.maxTokens, Temperature: f.temperature, Seed: f.seed, Command: append([]string{"framesweep", "sweep"}, args...),
		ChunkRecords: f.chunkRecords, ChunkInterval: f.chunkInterval, StrictTokens: f.strictTokens}
	var err error
	switch {
	case f.grid == "" || f.items == "" || f.spec == "" || f.out == "":
		return o, errors.New("--grid, --items, --runtime and --out are required")
	case f.logFormat != "text" && f.logFormat != "json":
		return o, fmt.Errorf("--log-format %q: want text or json", f.logFormat)
	case f.stopGrace < 0:
		return o, fmt.Errorf("--stop-grace %v: want a duration ≥ 0", f.stopGrace)
	}
	o.StopGrace = f.stopGrace
	if f.stopGrace == 0 {
		o.StopGrace = -1 // none (sweep.Options' 0 is the default)
	}
	if o.Cascade, err = f.cascadeOptions(); err != nil {
		return o, err
	}
	if o.Shard, err = parseShard(f.shard); err != nil {
		return o, fmt.Errorf("--shard: %v", err)
	}
	if o.Input, err = f.dec.d.Options(); err != nil {
		return o, err
	}
	if err := extract.CheckKernel(*f.kernel); err != nil {
		return o, err
	}
	o.Input.Kernel = *f.kernel
	if o.Spec, err = llm.ParseSpec(f.spec); err != nil {
		return o, fmt.Errorf("--runtime: %v", err)
	}
	if _, ok := runtimes[o.Spec.Engine]; !ok {
		return o, fmt.Errorf("--runtime: unknown runtime engine %q (llamacpp, onnx, openai)", o.Spec.Engine)
	}
	return o, o.Check()
}

// cascadeOptions reads --cascade and its threshold flags (nil: a full sweep). With --threshold-from
// the threshold is chosen later, on that RUN (chooseThreshold).
func (f *sweepFlags) cascadeOptions() (*runs.Cascade, error) {
	if f.cascade == "" {
		if f.threshold >= 0 || f.thresholdFrom != "" {
			return nil, errors.New("--threshold and --threshold-from need --cascade")
		}
		return nil, nil
	}
	budgets, err := sampler.ParseLadder(f.cascade)
	if err != nil {
		return nil, fmt.Errorf("--cascade %v", err)
	}
	switch {
	case (f.threshold >= 0) == (f.thresholdFrom != ""):
		return nil, errors.New("--cascade needs one of --threshold T or --threshold-from RUN")
	case f.folds == 1 || f.folds < 0:
		return nil, errors.New("--folds must be ≥ 2")
	}
	c := &runs.Cascade{Budgets: budgets, Threshold: max(f.threshold, 0)}
	return c, nil
}

// runSweep: every item under every config through one runtime, into RUN (sweep/).
func runSweep(args []string, stdout, stderr io.Writer) int {
	const name = "sweep"
	var f sweepFlags
	fs := newFlags(name, stderr)
	f.register(fs)
	fs.Usage = func() { fmt.Fprintln(stderr, sweepUsage); printFlags(fs) }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) > 0 {
		return usageErr(stderr, name, "unexpected argument %q", pos[0])
	}
	o, err := f.options(args)
	if err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	o.Log, o.Progress = sweepLogging(stderr, f.logFormat)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if !o.Resume { // refuse an existing RUN before reading anything or loading the model
		if err := runs.CheckNew(ctx, o.Out); err != nil {
			return failErr(stderr, name, err)
		}
	}
	if err := f.load(&o); err != nil {
		return failErr(stderr, name, err)
	}
	if f.cacheLoc != "" {
		if o.Cache, err = cache.Open(ctx, f.cacheLoc); err != nil {
			return failErr(stderr, name, err)
		}
		defer o.Cache.Close()
	}
	rt, err := runtimes.Open(f.spec)
	if err != nil {
		if errors.Is(err, llm.ErrBadSpec) || errors.Is(err, llm.ErrUnknownEngine) {
			return usageErr(stderr, name, "--runtime: %v", err)
		}
		return failErr(stderr, name, err)
	}
	defer rt.Close()
	o.Runtime = rt
	stop, release := stopOnSignal(o.Log, cancel, o.StopGrace)
	defer release()
	sum, err := sweep.Run(ctx, stop, o)
	if sum != nil {
		if werr := writeJSON(stdout, sum); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return failErr(stderr, name, err)
	}
	if sum.PairsFailed > 0 {
		fmt.Fprintf(stderr, "framesweep sweep: %d pair(s) failed (status \"error\" in %s)\n", sum.PairsFailed, sum.Records)
		return exitError
	}
	return exitOK
}

// load reads what the options name: the grid, the items, the cascade threshold of --threshold-from,
// and the linked libraries that decide this run's inputs and answers.
func (f *sweepFlags) load(o *sweep.Options) error {
	var err error
	if o.Grid, err = grid.Load(f.grid); err != nil {
		return err
	}
	if o.Items, err = items.Read(f.items); err != nil {
		return err
	}
	if o.VideoRoot = *f.videoRoot; o.VideoRoot != "" {
		if st, err := os.Stat(o.VideoRoot); err != nil || !st.IsDir() {
			return fmt.Errorf("--video-root %s: not a directory", o.VideoRoot)
		}
	}
	if f.thresholdFrom != "" {
		recs, err := runs.ReadAll(context.Background(), []string{f.thresholdFrom})
		if err != nil {
			return err
		}
		t, how, err := cascade.ChooseThreshold(recs, f.thresholdFrom, o.Cascade.Budgets, f.folds)
		if err != nil {
			return err
		}
		o.Cascade.Threshold, o.Cascade.From = t, f.thresholdFrom+": "+how
		o.Log.Info("cascade threshold", "threshold", t, "from", o.Cascade.From)
	}
	o.Libraries = sweep.RunLibraries(libraryVersions(), o.Spec.Engine)
	return nil
}

// sweepLogging is the sweep's log (text or JSON lines on stderr) and its progress: a bar on a
// terminal, log lines otherwise.
func sweepLogging(stderr io.Writer, format string) (*slog.Logger, sweep.Progress) {
	var h slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})
	if format == "json" {
		h = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})
	}
	log := slog.New(h)
	// llama.cpp logs through slog's default at INFO; keep it to warnings.
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && format == "text" {
		return log, sweep.NewBar(stderr)
	}
	return log, &sweep.LogProgress{Log: log}
}

// stopOnSignal returns the sweep's stop channel: the first SIGINT/SIGTERM closes it (nothing more is
// sent; the answers in flight have --stop-grace to finish: a resumable RUN), a second one cancels
// everything at once. release stops listening.
func stopOnSignal(log *slog.Logger, cancel context.CancelFunc, grace time.Duration) (stop <-chan struct{}, release func()) {
	ch := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range sigs {
			if n++; n == 1 {
				log.Warn("stopping: nothing more is sent; the answers in flight may finish (a second signal aborts them)", "grace", max(grace, 0))
				close(ch)
			} else {
				cancel()
			}
		}
	}()
	return ch, func() { signal.Stop(sigs) }
}
