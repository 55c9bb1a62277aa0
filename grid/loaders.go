package grid

import (
	"math"
	"slices"
	"strings"

	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// DefaultLoader is framesweep's own exact reading (docs/decode.md): the loader of every grid that
// names none. Its configs carry Loader "".
const DefaultLoader = loader.Framesweep

// knownLoader reports whether a grid's `loader:` key names a loader of package loader (which owns
// the names).
func knownLoader(name string) bool { return slices.Contains(loader.Names(), name) }

// unknownLoader is the error for a `loader:` name package loader does not know.
func unknownLoader(name string) error {
	return gridErr("loader: unknown loader %q (known: %s)", name, strings.Join(loader.Names(), ", "))
}

// LoaderOptions are qwen-vl-utils' fetch_video element keys beyond the budget (grid `options:`,
// serve's request fields): the pixel budgets of smart_resize and image_patch_size (14, or 16 for
// Qwen3-VL). Zero values are qwen-vl-utils' defaults.
type LoaderOptions struct {
	ImagePatchSize int     `yaml:"image_patch_size" json:"image_patch_size,omitempty"`
	MinPixels      float64 `yaml:"min_pixels" json:"min_pixels,omitempty"`
	MaxPixels      float64 `yaml:"max_pixels" json:"max_pixels,omitempty"`
	TotalPixels    float64 `yaml:"total_pixels" json:"total_pixels,omitempty"`
}

func (lo LoaderOptions) isZero() bool { return lo == LoaderOptions{} }

// check refuses options the loader does not take ("" = framesweep's own reading takes none).
func (lo LoaderOptions) check(name string) error {
	for _, v := range []float64{lo.MinPixels, lo.MaxPixels, lo.TotalPixels} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return gridErr("options: min_pixels, max_pixels and total_pixels must be finite and ≥ 0")
		}
	}
	switch {
	case lo.isZero():
		return nil
	case !strings.HasPrefix(name, "qwen-vl-utils"):
		return gridErr("options: image_patch_size, min_pixels, max_pixels and total_pixels are qwen-vl-utils loader options (loader: qwen-vl-utils…)")
	case lo.ImagePatchSize != 0 && lo.ImagePatchSize != 14 && lo.ImagePatchSize != 16:
		return gridErr("options.image_patch_size: %d (14, or 16 for Qwen3-VL)", lo.ImagePatchSize)
	}
	return nil
}

// LoaderOptions are the config's qwen-vl-utils element keys (zero for other loaders).
func (c *Config) LoaderOptions() LoaderOptions { return c.loaderOp }

// LoaderName is the loader that reads the config's frames: Loader, or DefaultLoader.
func (c *Config) LoaderName() string {
	if c.Loader == "" {
		return DefaultLoader
	}
	return c.Loader
}

// checkLoader validates a grid's loader: a known name, and nothing a loader decides itself.
func checkLoader(spec *Spec) error {
	name := spec.Loader
	switch {
	case !knownLoader(name):
		return unknownLoader(name)
	case len(spec.Policies) > 0 || len(spec.Presets) > 0:
		return gridErr("loader %s picks each video's frames itself: a loader grid lists no policies or presets", name)
	case len(spec.Frames) == 0 && len(spec.SampleFPS) == 0:
		return gridErr("loader %s: no frames or sample_fps budgets", name)
	case spec.Stream != nil:
		return gridErr("loader %s picks its own video stream: drop stream:", name)
	case len(spec.Seeds) > 0:
		return gridErr("loader %s: seeds apply to random policies only", name)
	case spec.Options.ForceSample:
		return gridErr("loader %s: force_sample is llava-video's (a preset option)", name)
	case spec.Options.ForceLast && !strings.HasPrefix(name, "lmms-eval"):
		return gridErr("loader %s: force_last is lmms-eval's force_include_last_frame", name)
	case (spec.Options.MinFrames != 0 || spec.Options.MaxFrames != 0 || spec.Options.Torch != "") && !strings.HasPrefix(name, "qwen-vl-utils"):
		return gridErr("loader %s: min_frames, max_frames and torch are qwen-vl-utils options", name)
	}
	for _, p := range spec.Pipelines {
		if p != PipelineRaw {
			return gridErr("loader %s: pipelines: %s (a loader's frames are its reader's own, JPEG step included: raw only)", name, p)
		}
	}
	return spec.Options.LoaderOptions.check(name)
}

// expandLoader builds a loader grid's configs: (frames, then sample_fps) × resolutions, each with the
// loader's request; the loader plans them per video (pipeline.PlanJobs).
func expandLoader(spec Spec) (*Grid, error) {
	if err := checkLoader(&spec); err != nil {
		return nil, err
	}
	resolutions := spec.Resolutions
	if len(resolutions) == 0 {
		resolutions = []string{""}
	}
	g := &Grid{Spec: spec, geoms: map[string]geom.Geometry{}}
	for _, r := range spec.Resolutions {
		g.geoms[r], _ = geom.Parse(r) // validated
	}
	if spec.Model != nil && spec.Model.SourceSize != "" {
		g.srcW, g.srcH, _ = geom.ParseWxH(spec.Model.SourceSize)
	}
	base := sampler.Request{Torch: spec.Options.Torch, ForceLast: spec.Options.ForceLast, MinFrames: spec.Options.MinFrames, MaxFrames: spec.Options.MaxFrames}
	var budgets []sampler.Request
	for _, n := range spec.Frames {
		r := base
		r.Frames, r.MinFrames, r.MaxFrames = n, 0, 0 // min/max frames clamp fps modes only
		budgets = append(budgets, r)
	}
	for _, f := range spec.SampleFPS {
		r := base
		r.SampleFPS = f
		budgets = append(budgets, r)
	}
	for _, r := range budgets {
		for _, res := range resolutions {
			c := Config{Frames: r.Frames, SampleFPS: r.SampleFPS, Resolution: res, Pipeline: PipelineRaw, Loader: spec.Loader,
				request: r, loaderOp: spec.Options.LoaderOptions, geometry: g.geoms[res]}
			c.ID = configID(c, false)
			g.Configs = append(g.Configs, c)
		}
	}
	if spec.TextOnly { // the question alone, no reader involved, as in any grid (text overwrite needs it)
		g.Configs = append(g.Configs, Config{ID: "text-only", TextOnly: true})
	}
	if err := g.applyModel(); err != nil {
		return nil, err
	}
	return g, nil
}

// OneLoader builds the single config a loader grid with these values would hold (expandLoader's
// rules): what serve's "loader" requests name. r carries the budget (Frames or SampleFPS; both 0 is
// the loader's own default) and options; name DefaultLoader is refused: framesweep's own reading
// takes a preset or policy (One).
func OneLoader(name string, r sampler.Request, lo LoaderOptions, resolution string) (Config, error) {
	spec := Spec{Loader: name, Options: Options{Torch: r.Torch, ForceLast: r.ForceLast, ForceSample: r.ForceSample,
		MinFrames: r.MinFrames, MaxFrames: r.MaxFrames, LoaderOptions: lo}}
	spec.oneBudget(r, resolution)
	if name == DefaultLoader {
		return Config{}, gridErr("loader %s is framesweep's own reading: name a preset or policy", name)
	}
	if err := validateSpec(&spec); err != nil {
		return Config{}, err
	}
	if r.Seed != 0 {
		return Config{}, gridErr("loader %s: seeds apply to random policies only", name)
	}
	if r.Frames == 0 && r.SampleFPS == 0 {
		spec.Frames = []int{1} // to pass the budget check; the config below has none
	}
	if err := checkLoader(&spec); err != nil {
		return Config{}, err
	}
	c := Config{Frames: r.Frames, SampleFPS: r.SampleFPS, Resolution: resolution, Pipeline: PipelineRaw, Loader: name, request: r, loaderOp: lo}
	c.request.Seed, c.request.StartS, c.request.EndS = 0, 0, 0
	if c.Frames > 0 {
		c.request.MinFrames, c.request.MaxFrames = 0, 0
	}
	if resolution != "" {
		c.geometry, _ = geom.Parse(resolution)
	}
	c.ID = configID(c, false)
	if c.Frames == 0 && c.SampleFPS == 0 {
		c.ID = "default-" + strings.TrimPrefix(c.ID, "fps0-")
	}
	return c, nil
}
