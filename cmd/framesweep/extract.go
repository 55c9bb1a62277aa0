package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/grid"
)

func runExtract(args []string, stdout, stderr io.Writer) int {
	var verbose bool
	o, videos, out, code := parseExtract(args, stderr, &verbose)
	if o == nil {
		return code
	}
	return extractCache(o, videos, out, verbose, stdout, stderr)
}

// parseExtract validates extract's flags into extract's options, the videos and the cache location
// (and -v into verbose); nil and the exit status on bad usage (or an unreadable grid).
func parseExtract(args []string, stderr io.Writer, verbose *bool) (*extract.Options, []string, string, int) {
	fs := newFlags("extract", stderr)
	var videos stringsFlag
	gridPath := fs.String("grid", "", "grid YAML file (required)")
	fs.Var(&videos, "videos", "video files (repeatable; further positional arguments are videos too)")
	out := fs.String("out", "", "cache: a local directory or a blob URL (file:///dir?no_tmp_dir=1&metadata=skip)")
	jobs := fs.Int("jobs", 1, "videos processed in parallel")
	tf := addTensorFlags(fs)
	dec := addDecodeFlags(fs, dStream|dDamaged|dRotate|dWorker)
	shardSpec := fs.String("shard", "", shardFlagHelp)
	rehash := fs.Bool("rehash", false, "re-read and re-hash objects already in the cache before skipping them (default: ref, size and header only)")
	fs.BoolVar(verbose, "v", false, "list every failed (video, config) pair on stderr (default: their count and the first; the JSON's failed_pairs lists them all)")
	addJSON(fs, true)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, nil, "", flagParseStatus(err)
	}
	videos = append(videos, pos...)
	bad := func(format string, a ...any) (*extract.Options, []string, string, int) {
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
	}
	o := &extract.Options{Jobs: *jobs, Rehash: *rehash}
	if o.Shard, err = parseShard(*shardSpec); err != nil {
		return bad("--shard: %v", err)
	}
	if o.Options, err = dec.d.Options(); err != nil {
		return bad("%v", err)
	}
	if err := tf.t.Apply(&o.Options); err != nil {
		return bad("%v", err)
	}
	if err := extract.Check(*o); err != nil {
		return bad("%v", err)
	}
	if o.Grid, err = grid.Load(*gridPath); err != nil {
		return nil, nil, "", failErr(stderr, "extract", err)
	}
	if o.Stream == nil {
		o.Stream = o.Grid.Spec.Stream // the grid's stream: key, unless --stream names one
	}
	if err := extract.Check(*o); err != nil { // a loader grid with --worker, --stream, …
		return bad("%s: %v", *gridPath, strings.TrimPrefix(err.Error(), "bad pipeline options: "))
	}
	return o, videos, *out, exitOK
}

// extractCache runs extract over the videos into the cache at out and reports it: on stderr each
// failed video, and the failed (video, config) pairs as a count and the first (each with verbose).
func extractCache(o *extract.Options, videos []string, out string, verbose bool, stdout, stderr io.Writer) int {
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
		fmt.Fprintf(stderr, "framesweep extract: warning: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
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
	sum, err := extract.Run(ctx, *o, videos)
	if err != nil && (sum == nil || extract.StoreFailed(err)) {
		return failErr(stderr, "extract", err)
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
