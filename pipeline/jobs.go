package pipeline

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// Video is what planning needs of one video: where it is, its content digest (the cache key's
// video_sha256) and what the decoder found in it.
type Video struct {
	Path   string
	SHA256 string
	Info   decode.Info
	// File, when set, is the video as its caller opened it (VideoRef.File): a harness loader's reader,
	// which opens the video again for its own pass, opens it through this descriptor, never by Path.
	// The caller keeps it open while the Video is planned or run (serve: its request's or batch's).
	File *os.File
}

// Job is one input to build for one video: a config's plan through one pipeline. Configs that
// differ only in what does not change the bytes share a Job (and its object); Configs lists them all.
type Job struct {
	Config    *grid.Config      // the first config of Configs
	Configs   []*grid.Config    // every config served by this job's bytes
	Pipeline  string            // raw | cached
	Spec      cache.KeySpec     // everything that determines the bytes
	Key       string            // Spec.Key(): the content key the object is stored under
	Selection sampler.Selection // indices in plan order (duplicates possible), timestamps
	Layout    geom.Layout       // what the model sees for one frame
	Geometry  string            // canonical geometry spec
	Width     int               // each stored image (a tile, the crop, or the resize)
	Height    int
	Images    int // images per frame: tiles + thumbnail, or 1
	DType     cache.DType
	Norm      string
	// Loader is set when a harness loader reads the job's frames (loaders.go): Selection.Indices are then
	// its reader's positions, not frame indices of the Video. nil: framesweep's own reading.
	Loader *LoaderJob

	norm *resolved
}

// Frames is the number of plan positions (sampled frames, duplicates included).
func (j *Job) Frames() int { return len(j.Selection.Indices) }

// Shape is the frames tensor's shape: [N, H, W, 3], or [N, images, H, W, 3] for tiled layouts; with
// the NCHW tensor layout [N, 3, H, W] or [N, images, 3, H, W].
func (j *Job) Shape() []int {
	img := []int{j.Height, j.Width, 3}
	if j.Spec.Layout == "NCHW" {
		img = []int{3, j.Height, j.Width}
	}
	if j.Images > 1 {
		return append([]int{j.Frames(), j.Images}, img...)
	}
	return append([]int{j.Frames()}, img...)
}

// FrameBytes is how many bytes one plan position adds to the frames tensor.
func (j *Job) FrameBytes() int { return j.Images * j.Width * j.Height * 3 * j.DType.Size() }

// TensorBytes is the size of the frames tensor.
func (j *Job) TensorBytes() int64 { return int64(j.FrameBytes()) * int64(j.Frames()) }

// Failure is a (config, pipeline) pair that cannot be planned for one video, with the reason: the
// pair fails, the video's other configs go on.
type Failure struct {
	Config   *grid.Config
	Pipeline string // "" when the config failed before a pipeline was chosen
	Err      error
}

func (f Failure) Error() string { return f.Err.Error() }

// pipelinesOf is the pipelines a config is built through.
func (o resolved) pipelinesOf(c *grid.Config) []string {
	switch {
	case o.Pipelines != nil:
		return o.Pipelines
	case c.Pipeline == "":
		return []string{cache.PipelineRaw}
	}
	return []string{c.Pipeline}
}

// PlanJobs turns every visual config into jobs for v (text-only configs need no frames and get none).
// A config whose plan or geometry fails for this video becomes a Failure naming the video and the
// config; configs with identical bytes share one job. It errors only on bad options.
//
// A config with a harness loader (grid.Config.Loader) is planned by its loader's reader, which
// decodes the video at v.Path without converting pixels (loaders.go); PlanJobs refuses options such a
// config cannot take (ErrOptions: a worker, a stream, no rotation, the cached pipeline).
func PlanJobs(v Video, configs []grid.Config, o Options) ([]*Job, []Failure, error) {
	return PlanJobsContext(context.Background(), v, configs, o)
}

// PlanJobsContext is PlanJobs, with a context that bounds the decoding a loader config's plan needs.
func PlanJobsContext(ctx context.Context, v Video, configs []grid.Config, o Options) ([]*Job, []Failure, error) {
	ro, err := o.resolve()
	if err == nil {
		err = ro.keyable()
	}
	if err == nil {
		err = ro.checkLoaderOptions(configs)
	}
	if err != nil {
		return nil, nil, err
	}
	p := &planner{v: v, o: ro, byKey: map[string]*Job{}}
	for i := range configs {
		p.config(&configs[i])
	}
	p.loaders(ctx)
	return p.jobs, p.fails, nil
}

// ConfigPlan is what PlanJobs decides for one config of one video: the frames its sampler (or its
// harness loader's reader) picks, what the model sees of each, and the jobs that build it (one per
// pipeline), or why it cannot be planned.
type ConfigPlan struct {
	Config    *grid.Config
	Selection sampler.Selection // set once the frames are picked (also when the layout then fails)
	// Layout is what the model sees of each frame; nil when the video's size is unknown (a plan from
	// counts), or when Err says why there is none.
	Layout *geom.Layout
	// Size is the size of the frames the layout is computed from: the video's displayed size, or a
	// harness loader's frames (qwen-vl-utils: its resized frames).
	Width, Height int
	Jobs          []*Job // shared with the configs of the same bytes; their Key is "" when v has no digest
	Err           error  // the Failure's error: what extract and serve report for this pair
}

// PlanConfigs plans configs for v exactly as PlanJobsContext does (the same selection, layout and
// tensor checks, the same harness loader runs) and reports it per config, in the configs' order:
// what `framesweep plan --grid` prints is what extract and serve then build or refuse. v may lack a
// digest (the jobs then have no content key) and a size (Info.OutWidth 0, a plan from a frame count:
// the configs then get their frames only, no layout and no jobs). Text-only configs are reported with
// nothing planned. It errors only on bad options.
func PlanConfigs(ctx context.Context, v Video, configs []grid.Config, o Options) ([]ConfigPlan, error) {
	ro, err := o.resolve()
	if err == nil {
		err = ro.keyable()
	}
	if err == nil {
		err = ro.checkLoaderOptions(configs)
	}
	if err != nil {
		return nil, err
	}
	out := make([]ConfigPlan, len(configs))
	p := &planner{v: v, o: ro, byKey: map[string]*Job{}, report: map[*grid.Config]*ConfigPlan{}}
	for i := range configs {
		out[i].Config = &configs[i]
		p.report[&configs[i]] = &out[i]
	}
	for i := range configs {
		if configs[i].TextOnly {
			out[i].Selection = sampler.Selection{Policy: "text-only", Indices: []int{}, TimestampsS: []float64{}}
		}
		p.config(&configs[i])
	}
	p.loaders(ctx)
	return out, nil
}

// planner collects one video's jobs and failures.
type planner struct {
	v     Video
	o     resolved
	jobs  []*Job
	fails []Failure
	byKey map[string]*Job
	// loaderConfigs wait for their loaders' plan-only runs (loaders.go).
	loaderConfigs []*grid.Config
	// report, when set (PlanConfigs), gets each config's plan as it is made.
	report map[*grid.Config]*ConfigPlan
}

func (p *planner) fail(c *grid.Config, pl string, err error) {
	if strings.HasPrefix(err.Error(), c.ID+":") { // the sampler's errors name the config already
		p.addFailure(Failure{Config: c, Pipeline: pl, Err: fmt.Errorf("%s: %w", p.v.Path, err)})
		return
	}
	p.addFailure(Failure{Config: c, Pipeline: pl, Err: fmt.Errorf("%s: config %s: %w", p.v.Path, c.ID, err)})
}

func (p *planner) addFailure(f Failure) {
	p.fails = append(p.fails, f)
	if r := p.report[f.Config]; r != nil && r.Err == nil {
		r.Err = f.Err
	}
}

// picked notes a config's frames, and the layout and frame size when there is one (PlanConfigs).
func (p *planner) picked(c *grid.Config, plan sampler.Selection, lay *geom.Layout, w, h int) {
	if r := p.report[c]; r != nil {
		r.Selection, r.Layout, r.Width, r.Height = plan, lay, w, h
	}
}

// add makes the job of spec for config c, or joins the job of the same bytes: by content key, or,
// for a video without a digest (PlanConfigs' plan from counts or an unhashed file), per config.
func (p *planner) add(c *grid.Config, pl string, spec cache.KeySpec, plan sampler.Selection, g geom.Geometry, lay geom.Layout) *Job {
	key := ""
	if p.v.SHA256 != "" {
		key = spec.Key()
		if j := p.byKey[key]; j != nil {
			j.Configs = append(j.Configs, c)
			p.addJob(c, j)
			return j
		}
	}
	j := p.o.newJob(c, pl, spec, plan, g, lay)
	j.Key = key
	if key != "" {
		p.byKey[key] = j
	}
	p.jobs = append(p.jobs, j)
	p.addJob(c, j)
	return j
}

func (p *planner) addJob(c *grid.Config, j *Job) {
	if r := p.report[c]; r != nil {
		r.Jobs = append(r.Jobs, j)
	}
}

// validate checks spec as a content key; without a digest (PlanConfigs) there is no key to check
// but the rest of it.
func (p *planner) validate(spec cache.KeySpec) error {
	if p.v.SHA256 == "" {
		spec.VideoSHA256 = strings.Repeat("0", 64)
	}
	return spec.Validate()
}

// config plans one config: its frames, its layout, then a job per pipeline (shared by key).
func (p *planner) config(c *grid.Config) {
	if c.TextOnly {
		return
	}
	if c.Loader != "" {
		p.loaderConfigs = append(p.loaderConfigs, c)
		return
	}
	info := p.v.Info
	plan, err := c.Select(sampler.Video{Frames: info.Frames, FPS: info.FPS, DurationS: info.DurationS})
	if err != nil {
		p.fail(c, "", err)
		return
	}
	if len(plan.Indices) == 0 {
		p.fail(c, "", fmt.Errorf("the plan has no frames for this video (%d frames, %.3f s)", info.Frames, info.DurationS))
		return
	}
	p.picked(c, plan, nil, 0, 0)
	if info.OutWidth == 0 && p.report != nil {
		return // a plan from counts (PlanConfigs): the frames are all there is to know
	}
	var g geom.Geometry = geom.Native{}
	if c.Geometry() != nil {
		g = c.Geometry()
	}
	lay, err := layoutFor(g, info, len(plan.Indices))
	if err != nil {
		p.fail(c, "", err)
		return
	}
	p.picked(c, plan, &lay, info.OutWidth, info.OutHeight)
	for _, pl := range p.o.pipelinesOf(c) {
		spec := p.o.keySpec(p.v, g, plan.Indices, pl)
		if err := p.validate(spec); err != nil {
			p.fail(c, pl, err)
			continue
		}
		p.add(c, pl, spec, plan, g, lay)
	}
}

// layoutFor is what the model sees of each frame of a video described by info under g, for n
// sampled frames, checked to fit one tensor.
func layoutFor(g geom.Geometry, info decode.Info, n int) (geom.Layout, error) {
	lay, err := g.Layout(info.OutWidth, info.OutHeight, n)
	if err != nil {
		return lay, err
	}
	_, _, _, err = lay.ImageSize()
	return lay, err
}

// keySpec is everything that decides the bytes of indices of v through geometry g and pipeline pl.
func (o resolved) keySpec(v Video, g geom.Geometry, indices []int, pl string) cache.KeySpec {
	spec := cache.KeySpec{
		Autorotate: !o.NoAutorotate, DType: o.DType, Engine: version.Engine, Geometry: g.String(),
		Indices: indices, Kernel: o.Kernel, Layout: o.Layout, Libraries: keyLibraries(o.Kernel, pl),
		Norm: o.Norm, Pipeline: pl, Stream: v.Info.StreamIndex, VideoSHA256: v.SHA256,
	}
	if pl == cache.PipelineCached {
		spec.JPEGQuality, spec.JPEGSubsample = resize.PillowJPEGQuality, "4:2:0"
	}
	return spec
}

// newJob is the job building spec's bytes for config c (its Key is the caller's to set).
func (o resolved) newJob(c *grid.Config, pl string, spec cache.KeySpec, plan sampler.Selection, g geom.Geometry, lay geom.Layout) *Job {
	w, h, images, _ := lay.ImageSize() // checked by layoutFor
	return &Job{Config: c, Configs: []*grid.Config{c}, Pipeline: pl, Spec: spec, Selection: plan,
		Layout: lay, Geometry: g.String(), Width: w, Height: h, Images: images, DType: o.DType,
		Norm: o.Norm, norm: &o}
}

// FrameRequest asks for exact frames rather than a sampling config: what `framesweep frames` and the
// memory benchmark build.
type FrameRequest struct {
	Indices  []int         // frame indices in plan order (duplicates allowed)
	Geometry geom.Geometry // nil: the source size
	// LayoutFrames is the frame count a frame-count-dependent geometry (Qwen's total-pixel cap) is
	// computed for; 0 means len(Indices).
	LayoutFrames int
	// Pipeline is raw ("" too) or cached (the JPEG q75 round trip a grid's cached pipeline applies).
	Pipeline string
}

// framesConfig names the jobs of PlanFrames in results and errors.
var framesConfig = grid.Config{ID: "frames"}

// PlanFrames makes the job that builds r's frames of v, through r's pipeline with o's kernel,
// dtype and norm: the engine's bytes for those frames, without a sampler. Its Key is "": no cache
// key names it (it may use o.HWAccel, and v need not be hashed), so it is for sinks that do not
// store (a MemorySink, `frames`' PNG writer); StoreSink refuses it. An index past the end is a
// *decode.RangeError naming the video, before anything is decoded.
func PlanFrames(v Video, r FrameRequest, o Options) (*Job, error) {
	ro, err := o.resolve()
	if err != nil {
		return nil, err
	}
	if len(r.Indices) == 0 {
		return nil, fmt.Errorf("%s: no frames requested", v.Path)
	}
	n := v.Info.Frames
	plan := sampler.Selection{Policy: "indices", Indices: r.Indices, TimestampsS: make([]float64, len(r.Indices))}
	for k, x := range r.Indices {
		if x < 0 || x >= n {
			return nil, fmt.Errorf("%s: %w", v.Path, &decode.RangeError{Index: x, NumFrames: n})
		}
		plan.TimestampsS[k] = float64(x) / v.Info.FPS
	}
	g := r.Geometry
	if g == nil {
		g = geom.Native{}
	}
	lf := r.LayoutFrames
	if lf == 0 {
		lf = len(r.Indices)
	}
	lay, err := layoutFor(g, v.Info, lf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Path, err)
	}
	pl := r.Pipeline
	switch pl {
	case "":
		pl = cache.PipelineRaw
	case cache.PipelineRaw, cache.PipelineCached:
	default:
		return nil, fmt.Errorf("%w: pipeline %q (want raw or cached)", ErrOptions, r.Pipeline)
	}
	spec := ro.keySpec(v, g, r.Indices, pl)
	return ro.newJob(&framesConfig, pl, spec, plan, g, lay), nil
}

// keyLibraries is the part of a cache key that names the linked libraries deciding the pixels: the
// decoder and swscale always, OpenCV when its kernels or its JPEG codec (cached pipeline) are used.
func keyLibraries(kernel, pipeline string) string {
	libs := Libraries()
	s := "libavcodec " + libs["libavcodec"] + ", libswscale " + libs["libswscale"]
	if strings.HasPrefix(kernel, "cv-") || pipeline == cache.PipelineCached {
		s += ", opencv " + libs["opencv"]
	}
	return s
}

// Libraries are the versions of the linked libraries that decide an input's pixels, read from the
// running process (decode.Libraries, resize.OpenCVVersion).
func Libraries() map[string]string {
	libs := decode.Libraries()
	libs["opencv"] = resize.OpenCVVersion()
	return libs
}

// Union is the sorted distinct frame indices of jobs: the frames one pass decodes (a harness
// loader's jobs have their reader's positions, which its own pass reads: they are left out).
func Union(jobs []*Job) []int {
	seen := map[int]bool{}
	var out []int
	for _, j := range jobs {
		if j.Loader != nil {
			continue
		}
		for _, x := range j.Selection.Indices {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sort.Ints(out)
	return out
}
