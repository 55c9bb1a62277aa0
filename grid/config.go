package grid

import (
	"errors"
	"strings"

	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// Config is one point of the grid.
type Config struct {
	ID           string  `json:"id"`
	Frames       int     `json:"frames,omitempty"`     // frame budget; 0 in fps mode and for text-only
	SampleFPS    float64 `json:"sample_fps,omitempty"` // fps mode
	Policy       string  `json:"policy,omitempty"`
	Preset       string  `json:"preset,omitempty"`
	Seed         uint64  `json:"seed"`
	Resolution   string  `json:"resolution,omitempty"` // geometry spec string (resize/geom.Parse)
	Pipeline     string  `json:"pipeline,omitempty"`
	TextOnly     bool    `json:"text_only,omitempty"`
	VisualTokens int     `json:"visual_tokens,omitempty"` // frames × tokens per frame, when known
	OverContext  bool    `json:"over_context,omitempty"`  // matched grid: above the model's context
	IsoGroup     string  `json:"iso_group,omitempty"`     // configs with equal visual tokens
	// Loader is the harness loader that reads this config's frames ("" = framesweep's own reading:
	// keys, ids and objects are then what they were before loaders existed).
	Loader string `json:"loader,omitempty"`

	request  sampler.Request
	loaderOp LoaderOptions
	smp      sampler.Sampler
	ladder   []int // nested: the grid's budgets
	geometry geom.Geometry
}

// Geometry is the parsed resolution of the config; nil when the grid lists no resolutions.
func (c *Config) Geometry() geom.Geometry { return c.geometry }

// Request is the sampling request this config makes.
func (c *Config) Request() sampler.Request { return c.request }

// Select samples one video for this config. A text-only config has an empty plan.
func (c *Config) Select(v sampler.Video) (sampler.Selection, error) {
	if c.TextOnly {
		return sampler.Selection{Policy: "text-only", Indices: []int{}, TimestampsS: []float64{}}, nil
	}
	if c.Loader != "" {
		return sampler.Selection{}, errf(ErrLoader, c.ID, "the "+c.Loader+" loader picks its frames by decoding the video: plan it through the engine (pipeline.PlanJobs, `framesweep plan --loader`)")
	}
	if c.smp == nil {
		return sampler.Selection{}, errf(ErrGrid, c.ID, "config was not built by Parse")
	}
	if c.Policy == "nested" && c.Frames > 0 {
		return sampler.NestedAmong(v, c.ladder, c.Frames, c.ID)
	}
	p, err := c.smp.Select(v, c.request)
	if err != nil {
		var e *sampler.Error
		if errors.As(err, &e) {
			ce := *e
			ce.Op = c.ID + ": " + e.Op
			return sampler.Selection{}, &ce
		}
		return sampler.Selection{}, err
	}
	return p, nil
}

// Grid is an expanded grid spec.
type Grid struct {
	Spec    Spec
	Configs []Config
	Dropped []string // matched grid with over_context: drop: ids of the configs left out

	geoms map[string]geom.Geometry
	srcW  int // model.source_size, 0 when not given
	srcH  int
}

// ConfigSelection is one config's plan for a video, or the reason it has none.
type ConfigSelection struct {
	Config    Config
	Selection sampler.Selection
	Err       error
}

// SelectAll samples a video for every config. A config that fails keeps its error; the others go on.
// fps-mode configs get VisualTokens and OverContext recomputed from their actual frame count.
func (g *Grid) SelectAll(v sampler.Video) []ConfigSelection {
	out := make([]ConfigSelection, len(g.Configs))
	for i := range g.Configs {
		c := &g.Configs[i]
		p, err := c.Select(v)
		cc := *c
		if err == nil && c.Frames == 0 && !c.TextOnly {
			// fps mode: the frame count is known now; redo the context check with it.
			if tokens, fits, known := g.FitsContext(c, len(p.Indices)); known {
				cc.VisualTokens = tokens - g.Spec.Model.PromptTokens
				cc.OverContext = !fits
			}
		}
		out[i] = ConfigSelection{Config: cc, Selection: p, Err: err}
	}
	return out
}

// oneBudget makes spec the grid of one request: its budget (frames or sample_fps, if set) and
// resolution (if any). One and OneLoader build their configs from such a spec.
func (spec *Spec) oneBudget(r sampler.Request, resolution string) {
	if resolution != "" {
		spec.Resolutions = []string{resolution}
	}
	if r.Frames != 0 {
		spec.Frames = []int{r.Frames}
	}
	if r.SampleFPS != 0 {
		spec.SampleFPS = []float64{r.SampleFPS}
	}
}

// errf is a grid error: a *sampler.Error (the error type of sampling and grids alike) wrapping
// sentinel.
func errf(sentinel error, op, detail string) error {
	return &sampler.Error{Op: op, Detail: detail, Err: sentinel}
}

// One builds the single config a grid with exactly these values would hold: the same id, request,
// plan and geometry (Expand's rules). name is a preset or a policy; r carries the budget (Frames or
// SampleFPS; both 0 means the sampler's own default, e.g. a preset's fps mode), the seed and the
// options; resolution is a geometry spec ("" = the source size); pipeline "" means raw. It is how
// one-off callers (ask, the HTTP server) name a configuration the way a grid file would.
func One(name string, r sampler.Request, resolution, pipeline string) (Config, error) {
	s, err := sampler.Lookup(name)
	if err != nil {
		return Config{}, err
	}
	if pipeline == "" {
		pipeline = PipelineRaw
	}
	spec := Spec{Pipelines: []string{pipeline}}
	spec.oneBudget(r, resolution)
	if err := validateSpec(&spec); err != nil {
		return Config{}, err
	}
	if r.MinFrames < 0 || r.MaxFrames < 0 {
		return Config{}, gridErr("min_frames/max_frames must not be negative")
	}
	c := Config{Frames: r.Frames, SampleFPS: r.SampleFPS, Seed: r.Seed, Resolution: resolution, Pipeline: pipeline, smp: s, request: r}
	if _, perr := sampler.LookupPreset(name); perr == nil {
		c.Preset = s.Name()
	} else {
		c.Policy = s.Name()
	}
	if resolution == "" && c.Preset != "" {
		c.Resolution = PresetResolution(c.Preset) // as a grid without resolutions
	}
	if c.Resolution != "" {
		c.geometry, _ = geom.Parse(c.Resolution) // validated above, or a preset's own
	}
	random := strings.HasPrefix(s.Name(), "random")
	if !random {
		c.Seed, c.request.Seed = 0, 0 // as a grid: seeds apply to random policies only
	}
	if c.Frames > 0 {
		c.request.MinFrames, c.request.MaxFrames = 0, 0 // min/max frames clamp fps modes only
	}
	if s.Name() == "nested" && c.Frames > 0 {
		c.ladder = []int{c.Frames}
	}
	c.ID = configID(c, random)
	if c.Frames == 0 && c.SampleFPS == 0 {
		c.ID = "default-" + strings.TrimPrefix(c.ID, "fps0-")
	}
	return c, nil
}
