package pipeline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
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
}

// Job is one input to build for one video: a config's plan through one pipeline. Configs that
// differ only in what does not change the bytes share a Job (and its object); Configs lists them all.
type Job struct {
	Config   *sampler.Config   // the first config of Configs
	Configs  []*sampler.Config // every config served by this job's bytes
	Pipeline string            // raw | cached
	Spec     cache.KeySpec     // everything that determines the bytes
	Key      string            // Spec.Key(): the content key the object is stored under
	Plan     sampler.Plan      // indices in plan order (duplicates possible), timestamps
	Layout   geom.Layout       // what the model sees for one frame
	Geometry string            // canonical geometry spec
	Width    int               // each stored image (a tile, the crop, or the resize)
	Height   int
	Images   int // images per frame: tiles + thumbnail, or 1
	DType    cache.DType
	Norm     string

	norm *resolved
}

// Frames is the number of plan positions (sampled frames, duplicates included).
func (j *Job) Frames() int { return len(j.Plan.Indices) }

// Shape is the frames tensor's shape: [N, H, W, 3], or [N, images, H, W, 3] for tiled layouts.
func (j *Job) Shape() []int {
	if j.Images > 1 {
		return []int{j.Frames(), j.Images, j.Height, j.Width, 3}
	}
	return []int{j.Frames(), j.Height, j.Width, 3}
}

// FrameBytes is how many bytes one plan position adds to the frames tensor.
func (j *Job) FrameBytes() int { return j.Images * j.Width * j.Height * 3 * j.DType.Size() }

// TensorBytes is the size of the frames tensor.
func (j *Job) TensorBytes() int64 { return int64(j.FrameBytes()) * int64(j.Frames()) }

// Failure is a (config, pipeline) pair that cannot be planned for one video, with the reason: the
// pair fails, the video's other configs go on.
type Failure struct {
	Config   *sampler.Config
	Pipeline string // "" when the config failed before a pipeline was chosen
	Err      error
}

func (f Failure) Error() string { return f.Err.Error() }

// pipelinesOf is the pipelines a config is built through.
func (o resolved) pipelinesOf(c *sampler.Config) []string {
	switch {
	case o.Pipelines != nil:
		return o.Pipelines
	case c.Pipeline == "":
		return []string{cache.PipelineRaw}
	}
	return []string{c.Pipeline}
}

// Plan turns every visual config into jobs for v (text-only configs need no frames and get none).
// A config whose plan or geometry fails for this video becomes a Failure naming the video and the
// config; configs with identical bytes share one job. It errors only on bad options.
func Plan(v Video, configs []sampler.Config, o Options) ([]*Job, []Failure, error) {
	ro, err := o.resolve()
	if err != nil {
		return nil, nil, err
	}
	info := v.Info
	sv := sampler.Video{Frames: info.Frames, FPS: info.FPS, DurationS: info.DurationS}
	var jobs []*Job
	var fails []Failure
	byKey := map[string]*Job{}
	fail := func(c *sampler.Config, p string, err error) {
		if strings.HasPrefix(err.Error(), c.ID+":") { // the sampler's errors name the config already
			fails = append(fails, Failure{Config: c, Pipeline: p, Err: fmt.Errorf("%s: %w", v.Path, err)})
			return
		}
		fails = append(fails, Failure{Config: c, Pipeline: p, Err: fmt.Errorf("%s: config %s: %w", v.Path, c.ID, err)})
	}
	for i := range configs {
		c := &configs[i]
		if c.TextOnly {
			continue
		}
		plan, err := c.Plan(sv)
		if err != nil {
			fail(c, "", err)
			continue
		}
		if len(plan.Indices) == 0 {
			fail(c, "", fmt.Errorf("the plan has no frames for this video (%d frames, %.3f s)", info.Frames, info.DurationS))
			continue
		}
		var g geom.Geometry = geom.Native{}
		if c.Geometry() != nil {
			g = c.Geometry()
		}
		lay, err := g.Layout(info.OutWidth, info.OutHeight, len(plan.Indices))
		if err != nil {
			fail(c, "", err)
			continue
		}
		w, h, images, err := lay.ImageSize()
		if err != nil {
			fail(c, "", err)
			continue
		}
		for _, p := range ro.pipelinesOf(c) {
			spec := cache.KeySpec{
				Autorotate: !ro.NoAutorotate, DType: ro.DType, Engine: version.Engine, Geometry: g.String(),
				Indices: plan.Indices, Kernel: ro.Kernel, Layout: "NHWC", Libraries: keyLibraries(ro.Kernel, p),
				Norm: ro.Norm, Pipeline: p, Stream: info.StreamIndex, VideoSHA256: v.SHA256,
			}
			if p == cache.PipelineCached {
				spec.JPEGQuality, spec.JPEGSubsample = resize.PillowJPEGQuality, "4:2:0"
			}
			if err := spec.Validate(); err != nil {
				fail(c, p, err)
				continue
			}
			key := spec.Key()
			if j := byKey[key]; j != nil {
				j.Configs = append(j.Configs, c)
				continue
			}
			j := &Job{Config: c, Configs: []*sampler.Config{c}, Pipeline: p, Spec: spec, Key: key, Plan: plan,
				Layout: lay, Geometry: g.String(), Width: w, Height: h, Images: images, DType: ro.DType,
				Norm: ro.Norm, norm: &ro}
			byKey[key] = j
			jobs = append(jobs, j)
		}
	}
	return jobs, fails, nil
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

// Union is the sorted distinct frame indices of jobs: the frames one pass decodes.
func Union(jobs []*Job) []int {
	seen := map[int]bool{}
	var out []int
	for _, j := range jobs {
		for _, x := range j.Plan.Indices {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sort.Ints(out)
	return out
}
