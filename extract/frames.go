package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/npy"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
)

// Out is where `framesweep frames` writes: a directory, and whether files this run does not write
// may stay in it (--force).
type Out struct {
	Dir   string
	Force bool
}

// FramesResult is what `framesweep frames VIDEO --indices …` prints.
type FramesResult struct {
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

// Frames writes the frames of video at indices as PNGs through the engine: the source layer opens
// the video, one PlanFrames job per distinct index (so a frame that fails fails only itself) lays
// each out by g (nil: the source size), one pass decodes them all, and each job's images are written
// as they come (000005.png, or for a tiled layout 000005_00.png … with the thumbnail last). The
// result lists what was written in index order; on a failure it is returned too (nil before anything
// could be written), with the decoder's own error. out is claimed (outDir.claim) once the jobs say
// what is written.
func Frames(ctx context.Context, video string, indices []int, g geom.Geometry, o pipeline.Options, out Out) (*FramesResult, error) {
	o, endWorkers := o.WithWorkerPool(1) // --worker: the probe and the read in one process
	defer endWorkers()
	v, src, err := pipeline.OpenSource(ctx, pipeline.VideoRef{Path: video}, o)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var jobs []*pipeline.Job
	for _, x := range distinctSorted(indices) {
		j, err := pipeline.PlanFrames(v, pipeline.FrameRequest{Indices: []int{x}, Geometry: g, LayoutFrames: len(indices)}, o)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	d, err := openOut(out.Dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var names []string
	for _, j := range jobs {
		for k := range j.Images {
			names = append(names, pngName(j, k))
		}
	}
	if err := d.claim(names, out.Force); err != nil {
		return nil, err
	}
	rec := &recordingSource{Source: src, seconds: map[int]float64{}}
	sink := &pngSink{out: d, written: map[int][]string{}}
	_, jerrs, err := pipeline.Run(ctx, v, rec, jobs, sink)
	res := &FramesResult{Path: video, StreamIndex: v.Info.StreamIndex, Out: out.Dir, Stats: rec.st, Others: d.otherPaths()}
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
	return res, err
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

// LoaderFramesResult is what `frames VIDEO --loader NAME` prints: the loader's Result (its frames'
// positions, pts and sizes, counts, rate, fallbacks, notes) and the files written.
type LoaderFramesResult struct {
	*load.Result
	Out string `json:"out"`
	// Written are the frames as the loader returns them, in its order: OUT/<position>.png.
	Written []string `json:"written"`
	// ResizedWritten (qwen-vl-utils loaders): fetch_video's resized frames, OUT/resized/<position>.png.
	ResizedWritten []string `json:"resized_written,omitempty"`
	// Others are the files --out held that this run did not write, kept under --force.
	Others []string `json:"others,omitempty"`
}

// LoaderFrames writes exactly the frames the named harness loader's reader returns for req (before the
// model's processor), read through the engine's source layer, as PNGs. On a write failure the result
// lists what was written before it.
func LoaderFrames(ctx context.Context, video, name string, req loader.Request, out Out) (*LoaderFramesResult, error) {
	res, errs, err := pipeline.RunLoader(ctx, pipeline.VideoRef{Path: video}, name, []loader.Request{req}, load.Options{})
	if err == nil {
		err = errs[0]
	}
	if err != nil {
		return nil, err
	}
	r := res[0]
	lr := &LoaderFramesResult{Result: r, Out: out.Dir, Written: []string{}}
	d, err := openOut(out.Dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var names []string
	for _, f := range r.Frames {
		names = append(names, fmt.Sprintf("%06d.png", f.Position))
		if f.Resized != nil {
			names = append(names, fmt.Sprintf("resized/%06d.png", f.Position))
		}
	}
	if err := d.claim(names, out.Force); err != nil {
		return nil, err
	}
	lr.Others = d.otherPaths()
	if r.ResizedW > 0 {
		if err := d.mkdir("resized"); err != nil {
			return nil, err
		}
	}
	for _, f := range r.Frames {
		file, err := d.writePNG(fmt.Sprintf("%06d.png", f.Position), f.Image)
		if err != nil {
			return lr, err
		}
		lr.Written = append(lr.Written, file)
		if f.Resized != nil {
			if file, err = d.writePNG(fmt.Sprintf("resized/%06d.png", f.Position), f.Resized); err != nil {
				return lr, err
			}
			lr.ResizedWritten = append(lr.ResizedWritten, file)
		}
	}
	return lr, nil
}

// InputFiles are the files WriteInput wrote.
type InputFiles struct {
	Tensor  string   // the input as one .npy array, the shape it was fed in
	Written []string // one PNG per image, in feeding order
	// Others are the files the directory held that this run did not write, kept under Force.
	Others []string
}

// WriteInput writes a built input (uint8 frames) into out: the tensor as input.npy and each image as
// NNN-FFFFFF.png (feeding position, frame index; tiles add _KK, the thumbnail last), into a directory
// claimed first. On a failure the files written before it are listed.
func WriteInput(out Out, o *pipeline.Object) (*InputFiles, error) {
	l, err := layoutInput(o)
	if err != nil {
		return nil, err
	}
	d, err := openOut(out.Dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return writeInput(d, out.Force, o, l)
}

// inputLayout is what writeInput writes of an input: every file's name, and the PNG of each image.
type inputLayout struct {
	names []string
	png   func(p, k int) string
}

// layoutInput names the files of o's input; an input that is not uint8 frames is an error.
func layoutInput(o *pipeline.Object) (inputLayout, error) {
	j := o.Result.Job
	if j.DType != cache.U8 || 3*j.Width*j.Height*j.Images*j.Frames() != len(o.Data) {
		return inputLayout{}, errors.New("the input is not uint8 frames")
	}
	l := inputLayout{names: []string{"input.npy"}, png: func(p, k int) string {
		if j.Images > 1 {
			return fmt.Sprintf("%03d-%06d_%02d.png", p, j.Selection.Indices[p], k)
		}
		return fmt.Sprintf("%03d-%06d.png", p, j.Selection.Indices[p])
	}}
	for p := range j.Selection.Indices {
		for k := range j.Images {
			l.names = append(l.names, l.png(p, k))
		}
	}
	return l, nil
}

// writeInput writes o's input as l says into the open directory d, claimed first.
func writeInput(d *outDir, force bool, o *pipeline.Object, l inputLayout) (*InputFiles, error) {
	j := o.Result.Job
	per := 3 * j.Width * j.Height
	if err := d.claim(l.names, force); err != nil {
		return nil, err
	}
	res := &InputFiles{Written: []string{}, Others: d.otherPaths()}
	var err error
	if res.Tensor, err = d.create("input.npy", func(w io.Writer) error {
		_, err := npy.Write(w, string(j.DType), j.Shape(), o.Data)
		return err
	}); err != nil {
		return res, err
	}
	for p := range j.Selection.Indices {
		for k := range j.Images {
			off := (p*j.Images + k) * per
			file, err := d.writePNG(l.png(p, k), &rgb.Image{W: j.Width, H: j.Height, Stride: 3 * j.Width, Pix: o.Data[off : off+per]})
			if err != nil {
				return res, err
			}
			res.Written = append(res.Written, file)
		}
	}
	return res, nil
}
