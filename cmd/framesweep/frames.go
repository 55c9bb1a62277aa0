package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/sweep"
)

// runFrames: framesweep frames VIDEO --indices 0,5,99 --out DIR [--stream N] [--on-damaged fail|keep]
// [--no-autorotate] [--hwaccel X], or framesweep frames VIDEO --loader NAME --frames N [--sample-fps F]
// --out DIR (frames_loader.go).
func runFrames(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("frames", stderr)
	idxFlag := fs.String("indices", "", "comma-separated frame indices (required)")
	out := fs.String("out", "", "output directory (required)")
	noRot := fs.Bool("no-autorotate", false, "do not apply the display rotation/reflection")
	hw := fs.String("hwaccel", "", "hardware decoding: none, cuda, vaapi, auto")
	stream := addStreamFlag(fs)
	onDamaged := addOnDamagedFlag(fs)
	rf := addResizeFlags(fs) // --size, --kernel, --preset (frames_resize.go)
	lf := addLoaderFlags(fs) // --loader and its request (frames_loader.go)
	recordRun := fs.String("record", "", "RUN: rebuild the input of the RUN's record of ITEM CONFIG (positional) and check its input_sha256")
	videoRoot := fs.String("video-root", "", "with --record: the directory the record's relative video names are under (default: run.json's video_root)")
	maxMem := fs.Int64("max-memory-mb", sweep.DefaultRebuildBytes>>20, "with --record: refuse, before decoding, a record whose input takes more memory than this (MiB)")
	force := fs.Bool("force", false, "write into an --out that holds files this run does not write (they stay; the JSON lists them as others)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep frames VIDEO --indices 0,5,99 --out DIR [--force] [--size WxH | --preset NAME] [--kernel K] [--stream N] [--on-damaged fail|keep] [--no-autorotate] [--hwaccel none|cuda|vaapi|auto]")
		fmt.Fprintln(stderr, "       framesweep frames VIDEO --loader NAME [--frames N | --sample-fps F] --out DIR [--force] [--force-last] [--min-frames N] [--max-frames N] [--torch T] [--image-patch-size 14|16] [--min-pixels P] [--max-pixels P] [--total-pixels P]")
		fmt.Fprintln(stderr, "       framesweep frames --record RUN ITEM CONFIG --out DIR [--force] [--video-root DIR] [--max-memory-mb N]")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *recordRun != "" || set["video-root"] {
		return framesRecordArgs(recordArgs{run: *recordRun, pos: pos, dir: *out, videoRoot: *videoRoot, maxBytes: *maxMem << 20, force: *force}, set, stdout, stderr)
	}
	if set["max-memory-mb"] {
		return usageErr(stderr, "frames", "--max-memory-mb applies with --record (the record decides the frames)")
	}
	if len(pos) != 1 {
		return usageErr(stderr, "frames", "want exactly one VIDEO, got %d arguments", len(pos))
	}
	if *out == "" {
		return usageErr(stderr, "frames", "--out DIR is required")
	}
	if *lf.name != "" {
		for _, f := range []string{"indices", "size", "preset", "kernel", "stream", "no-autorotate", "hwaccel", "on-damaged"} {
			if set[f] {
				return usageErr(stderr, "frames", "--%s does not apply with --loader (the loader's reader picks, decodes and converts the frames)", f)
			}
		}
		return runFramesLoader(pos[0], *out, *force, lf, stdout, stderr)
	}
	for _, f := range []string{"frames", "sample-fps", "force-last", "min-frames", "max-frames", "torch", "image-patch-size", "min-pixels", "max-pixels", "total-pixels"} {
		if set[f] {
			return usageErr(stderr, "frames", "--%s needs --loader NAME (without it, give --indices)", f)
		}
	}
	indices, err := parseIndices(*idxFlag)
	if err != nil {
		return usageErr(stderr, "frames", "--indices: %v", err)
	}
	if _, err := decode.ParseHWAccel(*hw); err != nil {
		return usageErr(stderr, "frames", "%v", err)
	}
	policy, err := decode.ParseDamagePolicy(*onDamaged)
	if err != nil {
		return usageErr(stderr, "frames", "--on-damaged: %v", err)
	}
	streamSel, err := stream.get()
	if err != nil {
		return usageErr(stderr, "frames", "%v", err)
	}
	g, kernel, err := rf.geometry()
	if err != nil {
		return usageErr(stderr, "frames", "%v", err)
	}
	o := pipeline.Options{Kernel: kernel, NoAutorotate: *noRot, HWAccel: *hw, Stream: streamSel, OnDamaged: policy}
	return extractFrames(pos[0], indices, framesOut{*out, *force}, o, g, stdout, stderr)
}

// framesOut is --out and --force.
type framesOut struct {
	dir   string
	force bool
}

// streamFlag is --stream N (probe, frames): the video stream by its index in the file; absent =
// FFmpeg's best video stream.
type streamFlag struct{ n *int }

// addOnDamagedFlag is --on-damaged, the same in every command that decodes (default fail).
func addOnDamagedFlag(fs *flag.FlagSet) *string {
	return fs.String("on-damaged", string(decode.DamagedFail), "a frame the decoder concealed: fail (refuse it; what needs it fails, exit 1) or keep (use it; listed as damaged)")
}

func addStreamFlag(fs *flag.FlagSet) streamFlag {
	return streamFlag{fs.Int("stream", -1, "video stream index in the file (ffprobe's numbering); default: FFmpeg's best video stream")}
}

// get is the flag as decode.Options.Stream (nil when absent); a negative index is bad usage.
func (s streamFlag) get() (*int, error) {
	switch {
	case *s.n == -1:
		return nil, nil
	case *s.n < 0:
		return nil, fmt.Errorf("--stream %d: want a stream index ≥ 0", *s.n)
	}
	return decode.StreamAt(*s.n), nil
}

func parseIndices(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("required (e.g. --indices 0,5,99)")
	}
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", p)
		}
		if n < 0 {
			return nil, fmt.Errorf("negative index %d", n)
		}
		out = append(out, n)
	}
	return out, nil
}

type framesResult struct {
	Path        string       `json:"path"`
	StreamIndex int          `json:"stream_index"` // the video stream the frames come from
	Out         string       `json:"out"`
	Written     []string     `json:"written"`
	Indices     []int        `json:"indices"`
	PTSS        []float64    `json:"pts_s"`
	Stats       decode.Stats `json:"stats"`
	// Others are the files --out held that this run did not write, kept under --force.
	Others []string `json:"others,omitempty"`
}

// extractFrames writes the frames at indices through the engine: the source layer opens the video,
// one PlanFrames job per distinct index (so a frame that fails fails only itself) lays each out by g,
// one pass decodes them all, and pngSink writes each job's images as they come. The JSON lists what
// was written in index order; on a failure it is printed for what was written, and the decoder's own
// error is the one-line message. --out is claimed (outDir.claim) once the jobs say what is written.
func extractFrames(video string, indices []int, out framesOut, o pipeline.Options, g geom.Geometry, stdout, stderr io.Writer) int {
	ctx := context.Background()
	v, src, err := pipeline.OpenSource(ctx, pipeline.VideoRef{Path: video}, o)
	if err != nil {
		return failErr(stderr, "frames", err)
	}
	defer src.Close()
	var jobs []*pipeline.Job
	for _, x := range distinctSorted(indices) {
		j, err := pipeline.PlanFrames(v, pipeline.FrameRequest{Indices: []int{x}, Geometry: g, LayoutFrames: len(indices)}, o)
		if err != nil {
			return failErr(stderr, "frames", err)
		}
		jobs = append(jobs, j)
	}
	d, err := openOut(out.dir)
	if err != nil {
		return failErr(stderr, "frames", err)
	}
	defer d.Close()
	var names []string
	for _, j := range jobs {
		for k := range j.Images {
			names = append(names, pngName(j, k))
		}
	}
	if err := d.claim(names, out.force); err != nil {
		return failErr(stderr, "frames", err)
	}
	rec := &recordingSource{Source: src, seconds: map[int]float64{}}
	sink := &pngSink{out: d, written: map[int][]string{}}
	_, jerrs, err := pipeline.Run(ctx, v, rec, jobs, sink)
	res := framesResult{Path: video, StreamIndex: v.Info.StreamIndex, Out: out.dir, Stats: rec.st, Others: d.otherPaths()}
	for _, j := range jobs {
		x := j.Selection.Indices[0]
		if names, ok := sink.written[x]; ok {
			res.Written = append(res.Written, names...)
			res.Indices = append(res.Indices, x)
			res.PTSS = append(res.PTSS, rec.seconds[x])
		}
	}
	switch {
	case err != nil:
	case rec.err != nil:
		err = rec.err // the decoder's own account: which frames failed or were refused, and why
	case len(jerrs) > 0:
		err = jerrs[0].Err
	}
	if err != nil {
		if len(res.Written) > 0 {
			_ = writeJSON(stdout, res)
		}
		return failErr(stderr, "frames", err)
	}
	if err := writeJSON(stdout, res); err != nil {
		return failErr(stderr, "frames", err)
	}
	return exitOK
}

func distinctSorted(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// recordingSource keeps what the decoder reported of the pass (its statistics and error, each frame's
// time), which `frames` prints as its own.
type recordingSource struct {
	pipeline.Source
	st      decode.Stats
	err     error
	seconds map[int]float64
}

func (r *recordingSource) Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error) {
	r.st, r.err = r.Source.Read(indices, func(f *decode.Frame) error {
		r.seconds[f.Index] = f.Seconds
		return fn(f)
	})
	return r.st, r.err
}

// pngSink writes each one-frame job's images as PNGs: 000005.png, or for a tiled layout 000005_00.png,
// 000005_01.png, … with the thumbnail last, in the order the model receives them.
type pngSink struct {
	out     *outDir
	mu      sync.Mutex
	written map[int][]string // the files written, by frame index (a failure may leave some of a frame's tiles)
}

func (s *pngSink) Begin(j *pipeline.Job) (pipeline.JobWriter, error) {
	return &pngWriter{s: s, j: j}, nil
}

type pngWriter struct {
	s *pngSink
	j *pipeline.Job
}

// pngName is the file of image k of a one-frame job.
func pngName(j *pipeline.Job, k int) string {
	x := j.Selection.Indices[0]
	if j.Images > 1 {
		return fmt.Sprintf("%06d_%02d.png", x, k)
	}
	return fmt.Sprintf("%06d.png", x)
}

func (w *pngWriter) Frame(_ int, data []byte) error {
	j, x := w.j, w.j.Selection.Indices[0]
	per := 3 * j.Width * j.Height
	for k := 0; k < j.Images; k++ {
		img := &rgb.Image{W: j.Width, H: j.Height, Stride: 3 * j.Width, Pix: data[k*per : (k+1)*per]}
		name, err := w.s.out.writePNG(pngName(j, k), img)
		if err != nil {
			return err
		}
		w.s.mu.Lock()
		w.s.written[x] = append(w.s.written[x], name)
		w.s.mu.Unlock()
	}
	return nil
}

func (w *pngWriter) Done(*pipeline.Result) error { return nil }

func (w *pngWriter) Abort(error) {}
