package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/worker"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/sampler"
	"github.com/framesweep/framesweep/sweep"
)

const sweepUsage = `usage: framesweep sweep --grid GRID.yaml --items ITEMS.jsonl --runtime SPEC --out RUN [--resume] [--jobs N]
                        [--cache CACHE] [--template NAME] [--limit N] [--shard i/N|env] [--log-format text|json]
                        [--kernel K] [--stream N] [--on-damaged fail|keep] [--no-autorotate] [--worker]
                        [--max-tokens N] [--temperature T] [--seed S] [--chunk-records N] [--chunk-interval D]
                        [--cascade 16,32,64,128 (--threshold T | --threshold-from RUN [--folds K])]
  RUN: a directory, or a blob URL (s3://bucket/prefix?…, gs://…, azblob://…: records as chunk objects)`

// runSweep: every item under every config through one runtime, into RUN (sweep/).
func runSweep(args []string, stdout, stderr io.Writer) int {
	const name = "sweep"
	fs := newFlags(name, stderr)
	gridPath := fs.String("grid", "", "grid YAML (required)")
	itemsPath := fs.String("items", "", "items JSONL (required; README \"Items file\")")
	spec := fs.String("runtime", "", "runtime spec: llamacpp:model=…,mmproj=… | onnx:model=… | openai:url=…,model=… (required)")
	out := fs.String("out", "", "the RUN (required): a directory (records.jsonl, run.json) or a blob URL (records/ chunks, run.json)")
	resume := fs.Bool("resume", false, "continue the sweep RUN holds: recorded pairs are skipped, a torn last line is cut")
	jobs := fs.Int("jobs", 1, "videos in parallel")
	cacheLoc := fs.String("cache", "", "content-addressed input store (a directory or blob URL) read and written; default: the run's scratch store")
	template := fs.String("template", llm.TemplateGeneric, "prompt template and answer parser for items that name none: "+strings.Join(llm.TemplateIDs, " "))
	limit := fs.Int("limit", 0, "the first N items only (0 = all)")
	shardSpec := fs.String("shard", "", shardFlagHelp)
	logFormat := fs.String("log-format", "text", "log lines on stderr: text | json")
	kernel := fs.String("kernel", resize.DefaultKernel, "resize kernel: "+strings.Join(resize.Kernels(), " "))
	stream := addStreamFlag(fs)
	onDamaged := addOnDamagedFlag(fs)
	noRot := fs.Bool("no-autorotate", false, "do not apply the display rotation")
	isolate := fs.Bool("worker", false, "decode each video in a supervised child process (untrusted files)")
	maxTokens := fs.Int("max-tokens", 0, fmt.Sprintf("generation bound (default %d)", llm.DefaultMaxTokens))
	temperature := fs.Float64("temperature", 0, "sampling temperature (0 = greedy)")
	seed := fs.Int64("seed", 0, "sampling seed at temperature > 0")
	cascadeFlag := fs.String("cascade", "", "budgets (e.g. 16,32,64,128): run the grid's configs as an online confidence cascade")
	threshold := fs.Float64("threshold", -1, "cascade: escalate while the confidence (largest option probability) is below T")
	thresholdFrom := fs.String("threshold-from", "", "cascade: choose T on a previous full RUN as framesweep cascade does offline")
	folds := fs.Int("folds", 0, "with --threshold-from: choose T on K−1 folds K times and take the median (K ≥ 2)")
	chunkRecords := fs.Int("chunk-records", sweep.DefaultChunkRecords, "RUN on an object store: publish a records chunk every N records")
	chunkInterval := fs.Duration("chunk-interval", sweep.DefaultChunkInterval, "RUN on an object store: publish a chunk once its oldest record has waited this long")
	fs.Usage = func() { fmt.Fprintln(stderr, sweepUsage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	switch {
	case len(pos) > 0:
		return usageErr(stderr, name, "unexpected argument %q", pos[0])
	case *gridPath == "" || *itemsPath == "" || *spec == "" || *out == "":
		return usageErr(stderr, name, "--grid, --items, --runtime and --out are required")
	case *jobs < 1:
		return usageErr(stderr, name, "--jobs must be ≥ 1")
	case *limit < 0:
		return usageErr(stderr, name, "--limit must be ≥ 0")
	case *maxTokens < 0:
		return usageErr(stderr, name, "--max-tokens must be ≥ 0")
	case *chunkRecords < 1 || *chunkInterval <= 0:
		return usageErr(stderr, name, "--chunk-records must be ≥ 1 and --chunk-interval > 0")
	case *logFormat != "text" && *logFormat != "json":
		return usageErr(stderr, name, "--log-format %q: want text or json", *logFormat)
	}
	if *cascadeFlag == "" && (*threshold >= 0 || *thresholdFrom != "") {
		return usageErr(stderr, name, "--threshold and --threshold-from need --cascade")
	}
	var budgets []int
	if *cascadeFlag != "" {
		for _, p := range strings.Split(*cascadeFlag, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 1 {
				return usageErr(stderr, name, "--cascade %q: want increasing frame budgets such as 16,32,64,128", *cascadeFlag)
			}
			budgets = append(budgets, n)
		}
		if (*threshold >= 0) == (*thresholdFrom != "") {
			return usageErr(stderr, name, "--cascade needs one of --threshold T or --threshold-from RUN")
		}
		if *threshold > 1 {
			return usageErr(stderr, name, "--threshold %v is not a probability in [0, 1]", *threshold)
		}
		if *folds == 1 || *folds < 0 {
			return usageErr(stderr, name, "--folds must be ≥ 2")
		}
	}
	if _, err := llm.TemplateByID(*template); err != nil {
		return usageErr(stderr, name, "--template: %v", err)
	}
	o := sweep.Options{GridPath: *gridPath, Template: *template, Out: *out, Resume: *resume, Jobs: *jobs, Limit: *limit,
		MaxTokens: *maxTokens, Temperature: *temperature, Seed: *seed, Command: append([]string{"framesweep", name}, args...),
		ChunkRecords: *chunkRecords, ChunkInterval: *chunkInterval}
	if o.Shard, err = parseShard(*shardSpec); err != nil {
		return usageErr(stderr, name, "--shard: %v", err)
	}
	o.Input.Kernel, o.Input.NoAutorotate = *kernel, *noRot
	if o.Input.Stream, err = stream.get(); err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	if o.Input.OnDamaged, err = decode.ParseDamagePolicy(*onDamaged); err != nil {
		return usageErr(stderr, name, "--on-damaged: %v", err)
	}
	if *isolate {
		o.Input.Worker = &worker.Limits{Timeout: 30 * time.Minute, Memory: 8 << 30}
	}
	if err := o.Input.Check(); err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	if o.Spec, err = llm.ParseSpec(*spec); err != nil {
		return usageErr(stderr, name, "--runtime: %v", err)
	}
	if _, ok := runtimes[o.Spec.Engine]; !ok {
		return usageErr(stderr, name, "--runtime: unknown runtime engine %q (llamacpp, onnx, openai)", o.Spec.Engine)
	}
	o.Concurrency = 1
	if c := o.Spec.Params["concurrency"]; c != "" { // a server's own parallelism (openai concurrency=N)
		if n, err := strconv.Atoi(c); err == nil && n > 0 {
			o.Concurrency = n
		}
	}

	var h slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})
	if *logFormat == "json" {
		h = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})
	}
	o.Log = slog.New(h)
	// llama.cpp logs through slog's default at INFO; keep it to warnings.
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && *logFormat == "text" {
		o.Progress = sweep.NewBar(stderr)
	} else {
		o.Progress = &sweep.LogProgress{Log: o.Log}
	}

	if o.Grid, err = sampler.LoadGrid(*gridPath); err != nil {
		return failErr(stderr, name, err)
	}
	if o.Input.Stream == nil {
		o.Input.Stream = o.Grid.Spec.Stream // the grid's stream: key, unless --stream names one
	}
	if o.Items, err = sweep.ReadItems(*itemsPath); err != nil {
		return failErr(stderr, name, err)
	}
	if budgets != nil {
		o.Cascade = &sweep.Cascade{Budgets: budgets, Threshold: *threshold}
		if *thresholdFrom != "" {
			t, how, err := thresholdOf(*thresholdFrom, budgets, *folds)
			if err != nil {
				return failErr(stderr, name, err)
			}
			o.Cascade.Threshold, o.Cascade.From = t, *thresholdFrom+": "+how
			o.Log.Info("cascade threshold", "threshold", t, "from", o.Cascade.From)
		}
	}
	// The libraries that decide this run's inputs and answers (the other runtimes' are not involved).
	o.Libraries = libraryVersions()
	for lib, engine := range map[string]string{"llama_cpp": "llamacpp", "onnxruntime": "onnx"} {
		if o.Spec.Engine != engine {
			delete(o.Libraries, lib)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if *cacheLoc != "" {
		if o.Cache, err = cache.Open(ctx, *cacheLoc); err != nil {
			return failErr(stderr, name, err)
		}
		defer o.Cache.Close()
	}
	rt, err := runtimes.Open(*spec)
	if err != nil {
		if errors.Is(err, llm.ErrBadSpec) || errors.Is(err, llm.ErrUnknownEngine) {
			return usageErr(stderr, name, "--runtime: %v", err)
		}
		return failErr(stderr, name, err)
	}
	defer rt.Close()
	o.Runtime = rt

	// The first SIGINT/SIGTERM stops new work and lets the answers in flight finish (a resumable RUN);
	// a second one cancels everything at once.
	stop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			if n++; n == 1 {
				o.Log.Warn("stopping: finishing the answers in flight (a second signal aborts them)")
				close(stop)
			} else {
				cancel()
			}
		}
	}()

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

// thresholdOf chooses a cascade threshold on a previous full run, as `framesweep cascade` does: the
// smallest-cost τ whose accuracy reaches the top budget's; with folds ≥ 2, τ chosen on K−1 folds for
// each held-out fold, and their median.
func thresholdOf(run string, budgets []int, folds int) (float64, string, error) {
	recs, err := record.ReadPaths([]string{run})
	if err != nil {
		return 0, "", err
	}
	opt := audit.DefaultOptions()
	opt.Cascade.Budgets, opt.Cascade.Folds = budgets, folds
	cr, why, err := audit.Cascade(recs, opt)
	switch {
	case err != nil:
		return 0, "", err
	case cr == nil || cr.Items == 0:
		return 0, "", fmt.Errorf("%s: no cascade over %v: %s", run, budgets, why)
	}
	if folds >= 2 {
		var taus []float64
		for _, f := range cr.FoldResults {
			if f.Tau != nil {
				taus = append(taus, *f.Tau)
			}
		}
		if len(taus) == 0 {
			return 0, "", fmt.Errorf("%s: no fold reaches the reference accuracy", run)
		}
		sort.Float64s(taus)
		m := taus[len(taus)/2]
		if len(taus)%2 == 0 {
			m = (taus[len(taus)/2-1] + taus[len(taus)/2]) / 2
		}
		return m, fmt.Sprintf("median of the τ chosen on %d of %d folds (%d items)", len(taus), folds, cr.Items), nil
	}
	if cr.Selected == nil {
		return 0, "", fmt.Errorf("%s: no threshold reaches the accuracy of %s (%.1f points)", run, cr.Reference, cr.ReferenceAccuracy)
	}
	return cr.Selected.Tau, fmt.Sprintf("smallest-cost τ reaching %s's %.1f points on %d items", cr.Reference, cr.ReferenceAccuracy, cr.Items), nil
}
