package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/sampler"
)

// Harness loaders (docs/loaders.md) in the engine. A loader's reader opens the video its own way (the
// first video stream, no rotation, PyAV's colours, …): RunLoader opens it through the source layer
// (openLocal, with load.DecodeOptions) and hands the LocalSource to load.Run. A config with a loader
// (grid.Config.Loader, a grid's `loader:` key, serve's "loader") is planned by running the reader
// without converting pixels (load.Options.PlanOnly: its positions, counts and sizes depend on
// decoding) and built by running it again in Run; its frames (for qwen-vl-utils, fetch_video's
// resized frames) then go through the config's geometry, kernel and dtype like decoded frames. Keys
// name the loader and its request; framesweep's own configs keep their keys.

// RunLoader runs the named harness loader on the video ref names, opened through the source layer the
// way that loader's reader opens it: load.Run's results, one per request (nil where errs[i] says why),
// from one decoding pass for all of them. ref.Path is also the string the harness would pass (lmms-eval
// looks for "webm"/"mkv" in it). It decodes in this process (a loader reads packets in file order,
// which the worker protocol does not carry).
func RunLoader(ctx context.Context, ref VideoRef, name string, reqs []loader.Request, lo load.Options) ([]*load.Result, []error, error) {
	_, res, errs, err := runLoader(ctx, ref, name, reqs, lo)
	return res, errs, err
}

// runLoader is RunLoader, with the description of the video as the loader's reader opened it (its
// stream, orientation and time base: what an object built from its frames records).
func runLoader(ctx context.Context, ref VideoRef, name string, reqs []loader.Request, lo load.Options) (decode.Info, []*load.Result, []error, error) {
	dopts, err := load.DecodeOptions(name, lo)
	if err != nil {
		return decode.Info{}, nil, nil, fmt.Errorf("%s: %w", ref.Path, err)
	}
	ref = VideoRef{Path: ref.Path, File: ref.File} // the reader's own open: no digest or description to check
	if err := ref.checkRegular(); err != nil {
		return decode.Info{}, nil, nil, err
	}
	src, err := openLocal(ref, dopts, false)
	if err != nil {
		return decode.Info{}, nil, nil, err
	}
	defer src.Close()
	res, errs, err := load.Run(ctx, src, ref.Path, name, reqs, lo)
	return src.Info(), res, errs, err
}

// LoaderJob is what a harness loader's job carries beside the Job's own fields: the loader, its
// request, the video as its reader opened it, and its reader's plan (positions, pts, counts and
// sizes; no pixels). Job.Selection.Indices are the reader's positions.
type LoaderJob struct {
	Name    string
	Request loader.Request
	Info    decode.Info
	Plan    *load.Result
}

// LoaderRequest is the loader request a loader config makes.
func LoaderRequest(c *grid.Config) loader.Request {
	r, lo := c.Request(), c.LoaderOptions()
	return loader.Request{Frames: r.Frames, SampleFPS: r.SampleFPS, ForceLast: r.ForceLast, MinFrames: r.MinFrames,
		MaxFrames: r.MaxFrames, MinPixels: lo.MinPixels, MaxPixels: lo.MaxPixels, TotalPixels: lo.TotalPixels,
		ImagePatchSize: lo.ImagePatchSize, Torch: r.Torch}
}

// CheckConfigs validates o for configs before any video is opened: what PlanJobs would refuse for every
// video (bad options, hardware decoding, options a harness loader decides itself or cannot honour).
// extract.Run calls it first; the sweep and other callers of PlanJobs may too.
func CheckConfigs(configs []grid.Config, o Options) error {
	ro, err := o.resolve()
	if err == nil {
		err = ro.keyable()
	}
	if err == nil {
		err = ro.checkLoaderOptions(configs)
	}
	return err
}

// checkLoaderOptions refuses options a loader decides itself, or cannot honour (PlanJobs' ErrOptions).
func (o resolved) checkLoaderOptions(configs []grid.Config) error {
	var name string
	for i := range configs {
		if configs[i].Loader != "" {
			name = configs[i].Loader
			break
		}
	}
	switch {
	case name == "":
		return nil
	case o.Worker != nil:
		return fmt.Errorf("%w: loader %s: a harness loader decodes in this process (it reads packets in file order, which worker processes do not serve): drop --worker/--isolate", ErrOptions, name)
	case o.Stream != nil || o.NoAutorotate:
		return fmt.Errorf("%w: loader %s picks its own stream and rotation: drop --stream/--no-autorotate", ErrOptions, name)
	case slices.Contains(o.Pipelines, cache.PipelineCached):
		return fmt.Errorf("%w: loader %s: a loader's frames are its reader's own (JPEG step included): raw pipeline only", ErrOptions, name)
	}
	return nil
}

// loaders plans the loader configs the planner set aside: per loader, one plan-only run of its
// reader for all of them.
func (p *planner) loaders(ctx context.Context) {
	var names []string
	byName := map[string][]*grid.Config{}
	for _, c := range p.loaderConfigs {
		if byName[c.Loader] == nil {
			names = append(names, c.Loader)
		}
		byName[c.Loader] = append(byName[c.Loader], c)
	}
	for _, name := range names {
		cs := byName[name]
		reqs := make([]loader.Request, len(cs))
		for i, c := range cs {
			reqs[i] = LoaderRequest(c)
		}
		info, res, errs, err := runLoader(ctx, VideoRef{Path: p.v.Path, File: p.v.File}, name, reqs, load.Options{PlanOnly: true, Threads: p.o.Threads})
		for i, c := range cs {
			switch {
			case err != nil:
				p.failLoader(c, err)
			case errs[i] != nil:
				p.failLoader(c, errs[i])
			default:
				p.loaderJob(c, &LoaderJob{Name: name, Request: reqs[i], Info: info, Plan: res[i]})
			}
		}
	}
}

// loaderPlan is a loader result as a plan: its reader's positions, their pts in seconds, qwen-vl-utils'
// sample_fps, and the reader's notes (an every-frame fallback's reason among them).
func loaderPlan(res *load.Result) sampler.Selection {
	plan := sampler.Selection{Loader: res.Loader, Indices: res.Positions(), TimestampsS: make([]float64, len(res.Frames)),
		SampleFPS: res.SampleFPS, Notes: append([]string(nil), res.Notes...)}
	if res.Reason != "" {
		plan.Notes = append(plan.Notes, res.Reason)
	}
	for i, f := range res.Frames {
		plan.TimestampsS[i] = float64(f.PTS) * res.TimeBase.Float64()
	}
	return plan
}

// failLoader records a loader config's failure; the loader's errors name the video already.
func (p *planner) failLoader(c *grid.Config, err error) {
	p.addFailure(Failure{Config: c, Err: &configError{path: p.v.Path, config: c.ID, err: err}})
}

// configError is "path: config ID: cause" for a cause that may begin with the path itself.
type configError struct {
	path, config string
	err          error
}

func (e *configError) Error() string {
	return e.path + ": config " + e.config + ": " + strings.TrimPrefix(e.err.Error(), e.path+": ")
}
func (e *configError) Unwrap() error { return e.err }

// loaderJob makes (or joins) the job of one loader config from its reader's plan.
func (p *planner) loaderJob(c *grid.Config, lj *LoaderJob) {
	res := lj.Plan
	if len(res.Frames) == 0 {
		p.fail(c, "", fmt.Errorf("the %s loader returns no frames for this video", lj.Name))
		return
	}
	w, h := res.Width, res.Height
	if res.ResizedW > 0 {
		w, h = res.ResizedW, res.ResizedH // what fetch_video hands the model's processor
	}
	var g geom.Geometry = geom.Native{}
	if c.Geometry() != nil {
		g = c.Geometry()
	}
	plan := loaderPlan(res)
	p.picked(c, plan, nil, w, h)
	lay, err := layoutFor(g, decode.Info{OutWidth: w, OutHeight: h}, len(res.Frames))
	if err != nil {
		p.fail(c, "", err)
		return
	}
	p.picked(c, plan, &lay, w, h)
	spec, err := p.o.loaderKeySpec(p.v, g, lj, plan.Indices)
	if err == nil {
		err = p.validate(spec)
	}
	if err != nil {
		p.fail(c, cache.PipelineRaw, err)
		return
	}
	if j := p.add(c, cache.PipelineRaw, spec, plan, g, lay); j.Loader == nil {
		j.Loader = lj
	}
}

// loaderKeySpec is everything that decides a loader job's bytes: the video, the loader and its
// request (which decide the positions, the reader's stream, rotation and colours, and qwen-vl-utils'
// resize), the positions themselves, and what the engine does after (geometry, kernel, dtype, …).
func (o resolved) loaderKeySpec(v Video, g geom.Geometry, lj *LoaderJob, positions []int) (cache.KeySpec, error) {
	spec := o.keySpec(v, g, positions, cache.PipelineRaw)
	s, err := loader.Lookup(lj.Name)
	if err != nil {
		return spec, err
	}
	req, err := json.Marshal(lj.Request)
	if err != nil {
		return spec, err
	}
	spec.Autorotate, spec.Stream = s.Autorotate, lj.Plan.StreamIndex
	spec.Loader, spec.LoaderRequest = lj.Name, string(req)
	if s.JPEGQuality > 0 { // VLMEvalKit's JPEG frame files: libjpeg-turbo through OpenCV
		spec.Libraries = keyLibraries(o.Kernel, cache.PipelineCached)
	}
	return spec, nil
}

// loaderStats are what the loaders did in one Run.
type loaderStats struct{ frames, passes int }

// runLoaders builds the loader jobs of a pass: per loader, one run of its reader for all of them,
// each frame (or qwen-vl-utils' resized frame) laid out, resized and converted by the job's own path
// and delivered in plan order. A job whose frames cannot be had keeps the reason (loaderErr); an error
// of a writer is returned (the pass stops).
func (p *pass) runLoaders(states []*jobState) (loaderStats, error) {
	var st loaderStats
	var names []string
	byName := map[string][]*jobState{}
	for _, s := range states {
		n := s.j.Loader.Name
		if byName[n] == nil {
			names = append(names, n)
		}
		byName[n] = append(byName[n], s)
	}
	for _, name := range names {
		ss := byName[name]
		reqs := make([]loader.Request, len(ss))
		for i, s := range ss {
			reqs[i] = s.j.Loader.Request
		}
		_, res, errs, err := runLoader(p.ctx, VideoRef{Path: p.v.Path, File: p.v.File}, name, reqs, load.Options{Threads: ss[0].j.norm.Threads})
		passes := 0
		for i, s := range ss {
			switch {
			case err != nil:
				s.loaderErr = err
			case errs[i] != nil:
				s.loaderErr = errs[i]
			case !slices.Equal(res[i].Positions(), s.j.Selection.Indices):
				s.loaderErr = fmt.Errorf("%s: %w: the %s loader now returns positions %v, planned %v", p.v.Path, ErrChanged, name, res[i].Positions(), s.j.Selection.Indices)
			default:
				passes = max(passes, res[i].Passes)
				if err := p.deliverLoaded(s, res[i]); err != nil {
					return st, err
				}
				st.frames += len(res[i].Frames)
			}
		}
		st.passes += passes
	}
	return st, nil
}

// deliverLoaded hands one loader result's frames to its job, through the job's layout and dtype.
func (p *pass) deliverLoaded(s *jobState, res *load.Result) error {
	ws := &scratch{}
	for pos, f := range res.Frames {
		img := f.Image
		if f.Resized != nil {
			img = f.Resized
		}
		data, err := renderImage(s.j, img, s.take(), ws)
		if err != nil {
			s.loaderErr = fmt.Errorf("%s: config %s: position %d: %w", p.v.Path, s.j.Config.ID, f.Position, err)
			return nil
		}
		if err := s.deliver([]int{pos}, data, frameTask{index: f.Position, pts: f.PTS}, nil, p.v); err != nil {
			return err
		}
	}
	return nil
}

// renderImage lays one image out by j's layout with j's kernel and appends its bytes in j's dtype to
// dst: the per-frame path of Run (and ImagesTensor) for an image that is not a decoded frame.
func renderImage(j *Job, img *rgb.Image, dst []byte, ws *scratch) ([]byte, error) {
	if img.W != j.Layout.Src.W || img.H != j.Layout.Src.H {
		return nil, fmt.Errorf("a %dx%d image where the plan has %dx%d", img.W, img.H, j.Layout.Src.W, j.Layout.Src.H)
	}
	outs, err := resize.FanOut(img, resize.LayoutTargets(j.Layout, j.Spec.Kernel))
	if err != nil {
		return nil, err
	}
	var thumb *rgb.Image
	if len(outs) > 1 {
		thumb = outs[1]
	}
	return render(j, outs[0], thumb, dst, ws)
}

// loaderMetadata adds a loader job's provenance to its object's metadata: the loader, its request,
// what its reader reported (counts, rate, fallbacks, notes), and the video as that reader opened it.
func loaderMetadata(meta map[string]string, lj *LoaderJob) {
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	res := lj.Plan
	meta["loader"] = lj.Name
	meta["loader_request"] = js(lj.Request)
	meta["loader_result"] = js(loaderSummary(res))
	if spec, err := loader.Lookup(lj.Name); err == nil {
		meta["loader_upstream"] = strings.Join(spec.Upstream, "; ")
		meta["loader_verified"] = fmt.Sprint(spec.Verified)
	}
}

// LoaderSummary is a loader result without its frames: what objects, `plan` and serve report.
type LoaderSummary struct {
	Loader       string          `json:"loader"`
	StreamIndex  int             `json:"stream_index"`
	TimeBase     decode.Rational `json:"time_base"`
	FramesHeader int64           `json:"frames_header"`
	Count        int             `json:"count"`
	CountFrom    string          `json:"count_from"`
	FPS          float64         `json:"fps"`
	Decoded      int             `json:"decoded"`
	AllFrames    bool            `json:"all_frames,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	SampleFPS    float64         `json:"sample_fps,omitempty"`
	Width        int             `json:"width"`
	Height       int             `json:"height"`
	ResizedW     int             `json:"resized_width,omitempty"`
	ResizedH     int             `json:"resized_height,omitempty"`
	Positions    []int           `json:"positions"`
	PTS          []int64         `json:"pts"`
	Notes        []string        `json:"notes,omitempty"`
}

func loaderSummary(r *load.Result) LoaderSummary {
	s := LoaderSummary{Loader: r.Loader, StreamIndex: r.StreamIndex, TimeBase: r.TimeBase, FramesHeader: r.FramesHeader,
		Count: r.Count, CountFrom: r.CountFrom, FPS: r.FPS, Decoded: r.Decoded, AllFrames: r.AllFrames, Reason: r.Reason,
		SampleFPS: r.SampleFPS, Width: r.Width, Height: r.Height, ResizedW: r.ResizedW, ResizedH: r.ResizedH,
		Positions: r.Positions(), PTS: make([]int64, len(r.Frames)), Notes: r.Notes}
	for i, f := range r.Frames {
		s.PTS[i] = f.PTS
	}
	return s
}

// LoaderSummary is the job's loader result without frames (nil for framesweep's own jobs).
func (j *Job) LoaderSummary() *LoaderSummary {
	if j.Loader == nil {
		return nil
	}
	s := loaderSummary(j.Loader.Plan)
	return &s
}

// LoaderName is the loader that reads the job's frames: a harness loader's name, or "framesweep".
func (j *Job) LoaderName() string {
	if j.Loader == nil {
		return grid.DefaultLoader
	}
	return j.Loader.Name
}
