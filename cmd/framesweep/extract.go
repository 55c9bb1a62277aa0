package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/internal/worker"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/sampler"
)

// extractOptions is everything `framesweep extract` needs besides the videos.
type extractOptions struct {
	grid       *sampler.Grid
	gridPath   string
	store      *cache.Store
	pipelines  []string // from --pipeline; nil: each config's own pipeline (raw when unset)
	kernel     string
	dtype      cache.DType
	norm       cache.Norm
	normName   string
	autorotate bool
	jobs       int
	isolate    bool          // decode in supervised `framesweep worker` processes
	limits     worker.Limits // per worker job
}

// extractSummary is the closing summary (JSON on stdout).
type extractSummary struct {
	Videos          int            `json:"videos"`
	VideosFailed    int            `json:"videos_failed"`
	Configs         int            `json:"configs"`
	Objects         int            `json:"objects"`         // objects this run needed (written + skipped)
	ObjectsWritten  int            `json:"objects_written"` // new objects
	ObjectsSkipped  int            `json:"objects_skipped"` // already in the store, verified
	FramesRequested int            `json:"frames_requested"`
	FramesUnion     int            `json:"frames_union"`   // distinct frames the written objects need
	FramesDecoded   int            `json:"frames_decoded"` // frames decoded and converted to RGB (= union when decoding once)
	CodecFrames     int            `json:"codec_frames"`   // pictures the codec output, needed or not (GOP warm-up included)
	Bytes           int64          `json:"bytes"`          // bytes of objects written
	Seconds         float64        `json:"seconds"`
	Store           string         `json:"store"`
	Manifest        string         `json:"manifest,omitempty"`
	Failed          []failedVideo  `json:"failed"`
	PerVideo        []videoSummary `json:"per_video,omitempty"`
}

type failedVideo struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

type videoSummary struct {
	Path            string  `json:"path"`
	SHA256          string  `json:"sha256"`
	Written         int     `json:"objects_written"`
	Skipped         int     `json:"objects_skipped"`
	FramesRequested int     `json:"frames_requested"`
	FramesUnion     int     `json:"frames_union"`
	FramesDecoded   int     `json:"frames_decoded"`
	CodecFrames     int     `json:"codec_frames"`
	Seeks           int     `json:"seeks"`
	Bytes           int64   `json:"bytes"`
	Seconds         float64 `json:"seconds"`
	DecodeSeconds   float64 `json:"decode_resize_s"` // the decode-once pass with the fan-out
	WriteSeconds    float64 `json:"write_s"`         // encoding, hashing and publishing the objects
}

// manifestLine is one line of manifests/<run>.jsonl: one object of this run.
type manifestLine struct {
	Key         string     `json:"key"`
	SHA256      string     `json:"sha256"`
	Size        int64      `json:"size"`
	Object      string     `json:"object"`
	Status      string     `json:"status"` // written | skipped
	Video       string     `json:"video"`
	VideoSHA256 string     `json:"video_sha256"`
	Config      string     `json:"config"`
	Pipeline    string     `json:"pipeline"`
	Geometry    string     `json:"geometry"`
	Kernel      string     `json:"kernel"`
	DType       string     `json:"dtype"`
	Norm        string     `json:"norm"`
	Shape       []int      `json:"shape"`
	Indices     []int      `json:"indices"`
	PSNR        []*float64 `json:"psnr_db,omitempty"` // cached pipeline: per frame, cached vs raw (null = identical)
}

// stringsFlag collects a repeatable flag; `--videos a b c` also works (the rest are positionals).
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func runExtract(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("extract", stderr)
	var videos stringsFlag
	gridPath := fs.String("grid", "", "grid YAML file (required)")
	fs.Var(&videos, "videos", "video files (repeatable; further positional arguments are videos too)")
	out := fs.String("out", "", "cache: a local directory or a blob URL (file:///dir?no_tmp_dir=1&metadata=skip)")
	pipeline := fs.String("pipeline", "", "raw | cached | both (default: each config's pipeline, raw if unset)")
	jobs := fs.Int("jobs", 1, "videos processed in parallel")
	kernel := fs.String("kernel", resize.DefaultKernel, "resize kernel: "+strings.Join(resize.Kernels(), "|"))
	dtype := fs.String("dtype", "u8", "tensor type: u8 | f32 | f16")
	norm := fs.String("norm", "clip", "normalisation for float dtypes: "+strings.Join(cache.NormNames(), "|"))
	noAutorotate := fs.Bool("no-autorotate", false, "do not apply the container's display rotation")
	isolate := fs.Bool("worker", false, "decode each video in a supervised child process (untrusted files: a crash or hang fails that video only)")
	wTimeout := fs.Duration("worker-timeout", 30*time.Minute, "with --worker: deadline of each decoding process")
	wMemMB := fs.Int64("worker-memory-mb", 8192, "with --worker: resident memory limit of each decoding process (MiB, 0 = none)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	videos = append(videos, pos...)
	switch {
	case *gridPath == "":
		return usageErr(stderr, "extract", "--grid is required")
	case *out == "":
		return usageErr(stderr, "extract", "--out is required")
	case len(videos) == 0:
		return usageErr(stderr, "extract", "--videos needs at least one video")
	case *jobs < 1:
		return usageErr(stderr, "extract", "--jobs must be ≥ 1")
	}
	o := extractOptions{gridPath: *gridPath, kernel: *kernel, autorotate: !*noAutorotate, jobs: *jobs, normName: "none",
		isolate: *isolate, limits: worker.Limits{Timeout: *wTimeout, Memory: *wMemMB << 20}}
	if *wTimeout < 0 || *wMemMB < 0 {
		return usageErr(stderr, "extract", "--worker-timeout and --worker-memory-mb must be ≥ 0")
	}
	switch *pipeline {
	case "":
	case "raw", "cached":
		o.pipelines = []string{*pipeline}
	case "both":
		o.pipelines = []string{cache.PipelineRaw, cache.PipelineCached}
	default:
		return usageErr(stderr, "extract", "--pipeline %q: want raw, cached or both", *pipeline)
	}
	switch *dtype {
	case "u8":
		o.dtype = cache.U8
	case "f32":
		o.dtype = cache.F32
	case "f16":
		o.dtype = cache.F16
	default:
		return usageErr(stderr, "extract", "--dtype %q: want u8, f32 or f16", *dtype)
	}
	if o.dtype != cache.U8 {
		if o.norm, err = cache.LookupNorm(*norm); err != nil {
			return usageErr(stderr, "extract", "--norm: %v", err)
		}
		o.normName = *norm
	}
	if _, err := resize.New(o.kernel, 2, 2, 1, 1); errors.Is(err, resize.ErrUnknownKernel) {
		return usageErr(stderr, "extract", "--kernel %q: want one of %s", o.kernel, strings.Join(resize.Kernels(), ", "))
	}
	if o.grid, err = sampler.LoadGrid(*gridPath); err != nil {
		return failErr(stderr, "extract", err)
	}
	ctx := context.Background()
	if o.store, err = cache.Open(ctx, *out); err != nil {
		return failErr(stderr, "extract", err)
	}
	defer o.store.Close()

	var prog *progress
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		prog = &progress{w: stderr, total: len(videos)}
	}
	sum, err := extract(ctx, o, videos, prog)
	if err != nil {
		return failErr(stderr, "extract", err)
	}
	for _, f := range sum.Failed {
		fmt.Fprintf(stderr, "framesweep extract: %s\n", f.Error)
	}
	if err := writeJSON(stdout, sum); err != nil {
		return failErr(stderr, "extract", err)
	}
	if sum.VideosFailed > 0 {
		return exitError
	}
	return exitOK
}

// progress is a one-line bar on a terminal; nil (the default off a terminal) draws nothing.
type progress struct {
	mu          sync.Mutex
	w           io.Writer
	total, done int
}

func (p *progress) step(path string) {
	if p == nil {
		return
	}
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

// extract processes every video (in parallel up to o.jobs) and writes the run's manifest.
// It returns an error only for failures of the store itself; bad videos go into the summary.
func extract(ctx context.Context, o extractOptions, videos []string, prog *progress) (*extractSummary, error) {
	start := time.Now()
	sum := &extractSummary{Videos: len(videos), Configs: len(o.grid.Configs), Store: o.store.Location(), Failed: []failedVideo{}}
	results := make([]*videoResult, len(videos))
	g, gctx := errgroup.WithContext(ctx)
	sem := make(chan struct{}, o.jobs)
	for i, path := range videos {
		g.Go(func() error {
			select {
			case sem <- struct{}{}:
			case <-gctx.Done():
				return gctx.Err()
			}
			defer func() { <-sem }()
			r, err := extractVideo(gctx, o, path)
			var se *storeError
			if errors.As(err, &se) {
				return se.err // the store is broken: stop everything
			}
			if r == nil {
				r = &videoResult{}
			}
			r.path, r.err = path, err
			results[i] = r
			prog.step(path)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var lines []any
	for _, r := range results {
		if r.err != nil {
			sum.VideosFailed++
			sum.Failed = append(sum.Failed, failedVideo{Path: r.path, Error: oneLine(r.err)})
		}
		sum.Objects += r.sum.Written + r.sum.Skipped
		sum.ObjectsWritten += r.sum.Written
		sum.ObjectsSkipped += r.sum.Skipped
		sum.FramesRequested += r.sum.FramesRequested
		sum.FramesUnion += r.sum.FramesUnion
		sum.FramesDecoded += r.sum.FramesDecoded
		sum.CodecFrames += r.sum.CodecFrames
		sum.Bytes += r.sum.Bytes
		if r.sum.Path != "" {
			sum.PerVideo = append(sum.PerVideo, r.sum)
		}
		for _, l := range r.lines {
			lines = append(lines, l)
		}
	}
	run := time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + strconv.Itoa(os.Getpid())
	m, err := o.store.PutManifest(ctx, run, lines)
	if err != nil {
		return nil, err
	}
	sum.Manifest = m
	sum.Seconds = math.Round(time.Since(start).Seconds()*1000) / 1000
	return sum, nil
}

// storeError marks a failure of the store (not of a video): the run stops.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// videoResult is what one video contributed.
type videoResult struct {
	path  string
	err   error
	sum   videoSummary
	lines []manifestLine
}

// job is one object to produce: a config's plan through one pipeline.
type job struct {
	cfg      *sampler.Config
	pipeline string
	spec     cache.KeySpec
	key      string
	plan     sampler.Plan
	layout   geom.Layout
	geomStr  string
	outW     int // size of each stored image
	outH     int
	images   int      // images per frame (tiles + thumbnail, or 1)
	slots    [][]byte // per plan position: the packed output images of that frame
	buf      []byte   // U8: the frames tensor itself; slots are views into it (no copy at encode)
	pts      []int64
	psnr     []*float64
	filled   atomic.Int32 // plan positions served (frames arrive on several fan-out workers)
}

// extractVideo decodes one video once for every object it still lacks.
func extractVideo(ctx context.Context, o extractOptions, path string) (*videoResult, error) {
	t0 := time.Now()
	res := &videoResult{}
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	digest, err := cache.FileSHA256(path)
	if err != nil {
		return nil, err
	}
	res.sum = videoSummary{Path: path, SHA256: digest}
	v, err := openSource(ctx, o, path)
	if err != nil {
		return res, err
	}
	defer v.Close()
	info := v.Info()
	sv := sampler.Video{Frames: info.Frames, FPS: info.FPS, DurationS: info.DurationS}

	pipelines := func(c *sampler.Config) []string {
		if o.pipelines != nil {
			return o.pipelines
		}
		if c.Pipeline == "" {
			return []string{cache.PipelineRaw}
		}
		return []string{c.Pipeline}
	}
	var jobs []*job
	var planErrs []error
	seen := map[string]bool{}
	for i := range o.grid.Configs {
		c := &o.grid.Configs[i]
		if c.TextOnly {
			continue
		}
		plan, err := c.Plan(sv)
		if err != nil {
			planErrs = append(planErrs, err)
			continue
		}
		if len(plan.Indices) == 0 {
			continue
		}
		var g geom.Geometry = geom.Native{}
		if c.Geometry() != nil {
			g = c.Geometry()
		}
		lay, err := g.Layout(info.OutWidth, info.OutHeight, len(plan.Indices))
		if err != nil {
			planErrs = append(planErrs, fmt.Errorf("config %s: %w", c.ID, err))
			continue
		}
		outW, outH, images, err := layoutImages(lay)
		if err != nil {
			planErrs = append(planErrs, fmt.Errorf("config %s: %w", c.ID, err))
			continue
		}
		for _, p := range pipelines(c) {
			spec := cache.KeySpec{
				Autorotate: o.autorotate, DType: o.dtype, Engine: version.Engine, Geometry: g.String(),
				Indices: plan.Indices, Kernel: o.kernel, Layout: "NHWC", Norm: o.normName,
				Pipeline: p, VideoSHA256: digest,
			}
			if p == cache.PipelineCached {
				spec.JPEGQuality, spec.JPEGSubsample = resize.PillowJPEGQuality, "4:2:0"
			}
			if err := spec.Validate(); err != nil {
				planErrs = append(planErrs, fmt.Errorf("config %s: %w", c.ID, err))
				continue
			}
			j := &job{cfg: c, pipeline: p, spec: spec, key: spec.Key(), plan: plan, layout: lay,
				geomStr: g.String(), outW: outW, outH: outH, images: images}
			if seen[j.key] { // two configs that differ only in what does not change the bytes
				continue
			}
			seen[j.key] = true
			f, ref, err := o.store.Load(ctx, j.key)
			if err == nil {
				res.sum.Skipped++
				res.lines = append(res.lines, j.manifest(path, ref, o.store, "skipped", f))
				continue
			}
			if !errors.Is(err, cache.ErrNotFound) && !errors.Is(err, cache.ErrCorrupt) && !errors.Is(err, cache.ErrTooLarge) {
				return res, &storeError{err} // the store cannot be read: stop the run
			}
			// Missing, corrupt or oversized: (re)build it.
			jobs = append(jobs, j)
		}
	}

	need := map[int][]*job{}
	var plans []sampler.Plan
	for _, j := range jobs {
		j.slots = make([][]byte, len(j.plan.Indices))
		if o.dtype == cache.U8 {
			per := j.images * j.outW * j.outH * 3
			j.buf = make([]byte, len(j.slots)*per)
			for pos := range j.slots {
				j.slots[pos] = j.buf[pos*per : pos*per : (pos+1)*per]
			}
		}
		j.pts = make([]int64, len(j.plan.Indices))
		if j.pipeline == cache.PipelineCached {
			j.psnr = make([]*float64, len(j.plan.Indices))
		}
		plans = append(plans, j.plan)
		res.sum.FramesRequested += len(j.plan.Indices)
		for idx, x := range j.plan.Indices {
			if idx == 0 || !slicesContains(j.plan.Indices[:idx], x) {
				need[x] = append(need[x], j)
			}
		}
	}
	union := sampler.Union(plans...)
	res.sum.FramesUnion = union.Size

	var frameErr error
	tRead := time.Now()
	if union.Size > 0 {
		st, err := readFanOut(ctx, v, path, union.Indices, need)
		res.sum.FramesDecoded, res.sum.CodecFrames, res.sum.Seeks = st.Converted, st.Decoded, st.Seeks
		if err != nil && !errors.Is(err, decode.ErrFrameFailed) {
			return res, err
		}
		frameErr = err
	}

	tWrite := time.Now()
	res.sum.DecodeSeconds = roundMS(tWrite.Sub(tRead))
	// Encode and publish the objects in parallel (hashing and fsync overlap); manifest order is the
	// job order whatever finishes first.
	lines := make([]*manifestLine, len(jobs))
	wg, _ := errgroup.WithContext(ctx)
	wg.SetLimit(fanOutWorkers())
	for i, j := range jobs {
		if int(j.filled.Load()) < len(j.slots) {
			continue // a frame it needs failed to decode: reported through frameErr
		}
		wg.Go(func() error {
			obj, shape, err := j.encode(o, path, info)
			if err != nil {
				return fmt.Errorf("%s: config %s: %w", path, j.cfg.ID, err)
			}
			ref, err := o.store.PutParts(ctx, j.key, obj)
			if err != nil {
				return &storeError{err}
			}
			l := j.manifest(path, ref, o.store, "written", nil)
			l.Shape = shape
			lines[i] = &l
			return nil
		})
	}
	werr := wg.Wait()
	res.sum.WriteSeconds = roundMS(time.Since(tWrite))
	// Objects published before a failure still count and get their manifest lines.
	for _, l := range lines {
		if l != nil {
			res.sum.Written++
			res.sum.Bytes += l.Size
			res.lines = append(res.lines, *l)
		}
	}
	res.sum.Seconds = roundMS(time.Since(t0))
	if werr != nil {
		return res, werr
	}
	if len(planErrs) > 0 {
		// One line naming the file: how many configs could not be planned, and the first cause.
		perr := fmt.Errorf("%s: %d config(s) cannot be planned (first: %w)", path, len(planErrs), planErrs[0])
		return res, errors.Join(perr, frameErr)
	}
	return res, frameErr
}

func roundMS(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

func slicesContains(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// layoutImages returns the size of every stored image of a layout and how many there are per frame.
// Tiled layouts store [N, images, H, W, 3]; they need tiles and thumbnail of one size.
func layoutImages(l geom.Layout) (w, h, images int, err error) {
	if len(l.Tiles) == 0 {
		s := l.Output()
		return s.W, s.H, 1, nil
	}
	w, h = l.Tiles[0].W, l.Tiles[0].H
	for _, t := range l.Tiles {
		if t.W != w || t.H != h {
			return 0, 0, 0, fmt.Errorf("tiles of different sizes (%dx%d, %dx%d) cannot share a tensor", w, h, t.W, t.H)
		}
	}
	if l.Thumb != nil && (l.Thumb.W != w || l.Thumb.H != h) {
		return 0, 0, 0, fmt.Errorf("thumbnail %dx%d differs from tiles %dx%d", l.Thumb.W, l.Thumb.H, w, h)
	}
	return w, h, l.Images(), nil
}

// videoSource is a video opened in process (*decode.Video) or through supervised worker processes.
type videoSource interface {
	Info() decode.Info
	Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error)
	Close() error
}

func openSource(ctx context.Context, o extractOptions, path string) (videoSource, error) {
	opts := decode.Options{NoAutorotate: !o.autorotate}
	if !o.isolate {
		return decode.Open(path, opts)
	}
	r := &worker.Runner{Limits: o.limits}
	info, err := r.Probe(ctx, path, opts, false)
	if err != nil {
		return nil, err
	}
	return &workerSource{ctx: ctx, r: r, path: path, opts: opts, info: info}, nil
}

// workerSource decodes in a child process per call: one to probe (index scan), one for the read.
type workerSource struct {
	ctx  context.Context
	r    *worker.Runner
	path string
	opts decode.Options
	info decode.Info
}

func (w *workerSource) Info() decode.Info { return w.info }
func (w *workerSource) Close() error      { return nil }
func (w *workerSource) Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error) {
	return w.r.Read(w.ctx, w.path, indices, w.opts, fn)
}

// fanOutWorkers is how many goroutines resize frames while the decoder goes on (FFmpeg's own
// threads decode meanwhile).
func fanOutWorkers() int { return min(max(runtime.GOMAXPROCS(0), 1), 4) }

// frameTask is one decoded frame, owned by the fan-out (the decoder's frame is only borrowed).
type frameTask struct {
	img   *rgb.Image
	index int
	pts   int64
}

// readFanOut decodes the union once; each frame is copied out of the decoder and handed to a small
// pool of workers that serve every job needing it. The channel is short, so memory holds the
// outputs plus a few source frames.
func readFanOut(ctx context.Context, v videoSource, path string, union []int, need map[int][]*job) (decode.Stats, error) {
	workers := fanOutWorkers()
	ch := make(chan frameTask, workers)
	// Source buffers are recycled: a fresh 6 MB allocation per 1080p frame costs more than the copy.
	free := make(chan *rgb.Image, 2*workers+1)
	take := func(w, h int) *rgb.Image {
		select {
		case m := <-free:
			if m.W == w && m.H == h {
				return m
			}
		default:
		}
		return rgb.New(w, h)
	}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	failed := func() error {
		mu.Lock()
		defer mu.Unlock()
		return firstErr
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range ch {
				if failed() != nil {
					continue // drain
				}
				if err := fanOut(t, need[t.index]); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", path, err) // one line naming the file
					}
					mu.Unlock()
				}
				select { // outputs never alias the source, so it can be reused
				case free <- t.img:
				default:
				}
			}
		}()
	}
	st, err := v.Read(union, func(f *decode.Frame) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := failed(); err != nil {
			return err
		}
		img := take(f.W, f.H)
		for y := 0; y < f.H; y++ {
			copy(img.Row(y), f.Row(y))
		}
		ch <- frameTask{img: img, index: f.Index, pts: f.PTS}
		return nil
	})
	close(ch)
	wg.Wait()
	if ferr := failed(); ferr != nil && (err == nil || errors.Is(err, ferr)) {
		return st, ferr
	}
	return st, err
}

// fanOut serves one decoded frame to every job that needs it. The JPEG round trip (cached pipeline)
// is done once per frame, and each distinct output size is resized once per source through
// resize.FanOut (which also prepares the source once per kernel family), however many configs share it.
func fanOut(t frameTask, jobs []*job) error {
	var cached *rgb.Image
	var psnr *float64
	type source struct {
		img     *rgb.Image
		targets []resize.Target
		at      map[geom.Size]int
		out     []*rgb.Image
	}
	var srcs [2]source // 0: raw, 1: cached
	which := func(j *job) int {
		if j.pipeline == cache.PipelineCached {
			return 1
		}
		return 0
	}
	for _, j := range jobs {
		w := which(j)
		if w == 1 && cached == nil {
			var err error
			if cached, err = resize.JPEGRoundTrip(t.img, resize.PillowJPEGQuality); err != nil {
				return fmt.Errorf("frame %d: %w", t.index, err)
			}
			psnr = psnrDB(t.img, cached)
		}
		sc := &srcs[w]
		if sc.at == nil {
			sc.img, sc.at = t.img, map[geom.Size]int{}
			if w == 1 {
				sc.img = cached
			}
		}
		for _, sz := range j.sizes() {
			if _, ok := sc.at[sz]; !ok {
				sc.at[sz] = len(sc.targets)
				sc.targets = append(sc.targets, resize.Target{W: sz.W, H: sz.H, Kernel: j.spec.Kernel})
			}
		}
	}
	for w := range srcs {
		if sc := &srcs[w]; len(sc.targets) > 0 {
			out, err := resize.FanOut(sc.img, sc.targets)
			if err != nil {
				return fmt.Errorf("frame %d: %w", t.index, err)
			}
			sc.out = out
		}
	}
	for _, j := range jobs {
		sc := &srcs[which(j)]
		var thumb *rgb.Image
		if j.layout.Thumb != nil {
			thumb = sc.out[sc.at[*j.layout.Thumb]]
		}
		resized := sc.out[sc.at[j.layout.Resize]]
		// Each frame index is served by exactly one worker, so its plan positions are written by
		// that worker alone.
		for pos, x := range j.plan.Indices {
			if x != t.index {
				continue
			}
			j.slots[pos] = j.render(j.slots[pos][:0], resized, thumb)
			j.pts[pos] = t.pts
			if j.psnr != nil {
				j.psnr[pos] = psnr
			}
			j.filled.Add(1)
		}
	}
	return nil
}

// sizes lists the resizes a job needs from each source frame.
func (j *job) sizes() []geom.Size {
	if j.layout.Thumb != nil {
		return []geom.Size{j.layout.Resize, *j.layout.Thumb}
	}
	return []geom.Size{j.layout.Resize}
}

// render appends to dst the images one frame contributes to a job: the resized frame, its centre
// crop, or its tiles followed by the thumbnail. resized may be shared with other jobs and is only
// read. For U8 jobs dst is the frame's slot in the tensor, so nothing is copied again.
func (j *job) render(dst []byte, resized, thumb *rgb.Image) []byte {
	l := j.layout
	switch {
	case len(l.Tiles) > 0:
		for _, t := range l.Tiles {
			dst = appendRect(dst, resized, t)
		}
		if thumb != nil {
			dst = appendRect(dst, thumb, geom.Rect{W: thumb.W, H: thumb.H})
		}
		return dst
	case l.Crop != nil:
		return appendRect(dst, resized, *l.Crop)
	}
	return appendRect(dst, resized, geom.Rect{W: resized.W, H: resized.H})
}

func appendRect(out []byte, m *rgb.Image, r geom.Rect) []byte {
	for y := r.Y; y < r.Y+r.H; y++ {
		out = append(out, m.Pix[y*m.Stride+3*r.X:y*m.Stride+3*(r.X+r.W)]...)
	}
	return out
}

// psnrDB is the PSNR of b against a in dB; nil when they are identical (infinite PSNR).
func psnrDB(a, b *rgb.Image) *float64 {
	var se float64
	for y := 0; y < a.H; y++ {
		ra, rb := a.Row(y), b.Row(y)
		for i := range ra {
			d := float64(int(ra[i]) - int(rb[i]))
			se += d * d
		}
	}
	if se == 0 {
		return nil
	}
	mse := se / float64(3*a.W*a.H)
	v := math.Round(10*math.Log10(255*255/mse)*1e4) / 1e4
	return &v
}

// encode builds the job's safetensors object (as parts: header, then tensor data aliasing the job's
// buffers): the frames tensor, the indices, and the provenance.
func (j *job) encode(o extractOptions, path string, info decode.Info) ([][]byte, []int, error) {
	n := len(j.plan.Indices)
	frames := cache.Tensor{Name: "frames", DType: cache.U8, Shape: []int{n * j.images, j.outH, j.outW, 3}, Data: j.buf}
	if o.dtype != cache.U8 {
		enc, err := cache.NewFrameEncoder(o.dtype, o.norm, j.outW, j.outH, n*j.images)
		if err != nil {
			return nil, nil, err
		}
		per := j.outW * j.outH * 3
		for _, s := range j.slots {
			for k := 0; k < j.images; k++ {
				img := &rgb.Image{W: j.outW, H: j.outH, Stride: 3 * j.outW, Pix: s[k*per : (k+1)*per]}
				if err := enc.Add(img); err != nil {
					return nil, nil, err
				}
			}
		}
		frames = enc.Tensor("frames")
	}
	if j.images > 1 {
		frames.Shape = []int{n, j.images, j.outH, j.outW, 3}
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	pts := make([]float64, n)
	for i, p := range j.pts {
		pts[i] = float64(p) * info.TimeBase.Float64()
	}
	fh := "null"
	if info.FramesHeader != nil {
		fh = strconv.FormatInt(*info.FramesHeader, 10)
	}
	meta := map[string]string{
		"format":           "framesweep.frames/1",
		"key":              j.key,
		"key_spec":         string(j.spec.Canonical()),
		"engine":           version.Engine,
		"source_path":      path,
		"source_sha256":    j.spec.VideoSHA256,
		"config":           j.cfg.ID,
		"sampler":          j.plan.Name(),
		"indices":          js(j.plan.Indices),
		"pts":              js(j.pts),
		"pts_s":            js(pts),
		"time_base":        fmt.Sprintf("%d/%d", info.TimeBase.Num, info.TimeBase.Den),
		"frames":           strconv.Itoa(info.Frames),
		"frames_header":    fh,
		"rotation":         strconv.Itoa(info.Rotation),
		"rotation_applied": strconv.FormatBool(o.autorotate && !info.Orientation.IsIdentity()),
		"orientation":      info.Orientation.Filter(),
		"codec":            info.Codec,
		"decoder":          "ffmpeg " + version.FFmpeg + " via go-astiav " + version.GoAstiav,
		"opencv":           version.OpenCV + " via gocv " + version.Gocv,
		"geometry":         j.geomStr,
		"layout":           js(j.layout),
		"kernel":           j.spec.Kernel,
		"dispatch_level":   native.CurrentLevel().String(),
		"pipeline":         j.pipeline,
		"dtype":            string(o.dtype),
		"norm":             o.normName,
		"tensor_layout":    "NHWC",
	}
	if j.images > 1 {
		meta["images_per_frame"] = strconv.Itoa(j.images)
	}
	if j.pipeline == cache.PipelineCached {
		meta["jpeg_quality"] = strconv.Itoa(resize.PillowJPEGQuality)
		meta["jpeg_subsampling"] = "4:2:0"
		meta["jpeg_codec"] = "libjpeg-turbo via OpenCV " + version.OpenCV + " (byte-identical to Pillow's default save)"
		meta["psnr_db"] = js(j.psnr)
	}
	parts, err := cache.SafetensorsParts([]cache.Tensor{frames, cache.Int64Tensor("indices", j.plan.Indices)}, meta)
	return parts, frames.Shape, err
}

func (j *job) manifest(path string, ref cache.Ref, s *cache.Store, status string, f *cache.File) manifestLine {
	l := manifestLine{
		Key: j.key, SHA256: ref.Digest, Size: ref.Size, Object: s.ObjectPath(ref.Digest), Status: status,
		Video: path, VideoSHA256: j.spec.VideoSHA256, Config: j.cfg.ID, Pipeline: j.pipeline,
		Geometry: j.geomStr, Kernel: j.spec.Kernel, DType: string(j.spec.DType), Norm: j.spec.Norm,
		Indices: j.plan.Indices, PSNR: j.psnr,
	}
	if f != nil { // a skipped object: shape and PSNR come from the stored object
		l.Shape = f.Tensors["frames"].Shape
		if p := f.Metadata["psnr_db"]; p != "" {
			_ = json.Unmarshal([]byte(p), &l.PSNR)
		}
	}
	return l
}
