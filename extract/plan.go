package extract

import (
	"context"
	"errors"
	"fmt"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// UsageError is a request that is bad whatever the video (an unknown sampler, a bad resolution, a
// request the sampler refuses): the CLI's exit status 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(err error) error { return &UsageError{Err: err} }

// Subject is what a plan is made for: a video file, or (Path "") a frame count and rate, with the
// source size when it is known.
type Subject struct {
	Path      string
	Frames    int
	FPS       float64
	DurationS float64 // 0: Frames/FPS
	Width     int     // displayed size, with a frame count (0: unknown)
	Height    int
}

// Where names the subject in messages: the file, or the counts.
func (s Subject) Where() string {
	if s.Path != "" {
		return s.Path
	}
	return fmt.Sprintf("--total-frames %d --fps %g", s.Frames, s.FPS)
}

// planVideo is a plan's video: opened in process through the source layer (the index scan, no
// digest: nothing is built), or described from counts (src nil).
type planVideo struct {
	v   pipeline.Video
	src pipeline.LocalSource
}

func (p *planVideo) sampler() sampler.Video {
	in := p.v.Info
	return sampler.Video{Frames: in.Frames, FPS: in.FPS, DurationS: in.DurationS}
}

func (p *planVideo) Close() {
	if p.src != nil {
		p.src.Close()
	}
}

// openPlan opens s for planning: the decoder's index scan of the file with o's stream and rotation,
// or the counts as they are.
func openPlan(ctx context.Context, s Subject, o pipeline.Options) (*planVideo, error) {
	if s.Path == "" {
		// Path names the counts in the planner's messages (a config's error begins with it).
		info := decode.Info{Frames: s.Frames, FPS: s.FPS, DurationS: s.DurationS, OutWidth: s.Width, OutHeight: s.Height}
		return &planVideo{v: pipeline.Video{Path: s.Where(), Info: info}}, nil
	}
	v, src, err := pipeline.OpenLocal(ctx, pipeline.VideoRef{Path: s.Path}, pipeline.Options{Stream: o.Stream, NoAutorotate: o.NoAutorotate})
	if err != nil {
		return nil, err
	}
	return &planVideo{v: v, src: src}, nil
}

// ConfigReport is one config of `plan --grid`: the config, its frames and what the model sees of
// each, or why the pair fails (what extract reports for it).
type ConfigReport struct {
	grid.Config
	OutputSize string `json:"output_size,omitempty"`
	// Shape is the frames tensor extract stores for this pair ([N, H, W, 3], [N, images, H, W, 3] for
	// tiles, channels first for NCHW); omitted when the video's size is unknown.
	Shape []int              `json:"shape,omitempty"`
	Plan  *sampler.Selection `json:"plan,omitempty"`
	Error string             `json:"error,omitempty"`
}

// GridPlan is `framesweep plan --grid`: every config of the grid planned for one video, the union of
// their frames and what decoding it costs.
type GridPlan struct {
	Grid        string              `json:"grid"`
	Name        string              `json:"name,omitempty"`
	Path        string              `json:"path,omitempty"`
	TotalFrames int                 `json:"total_frames"`
	FPS         float64             `json:"fps"`
	DurationS   float64             `json:"duration_s"`
	Configs     []ConfigReport      `json:"configs"`
	Dropped     []string            `json:"dropped,omitempty"`
	Union       sampler.UnionReport `json:"union"`
	Decode      decode.ReadCost     `json:"decode"`
	Failed      int                 `json:"failed"`
	// Loader is the grid's harness loader ("": framesweep's own reading): its positions are in the
	// loader's own numbering, and Decode is one pass from frame 0.
	Loader string `json:"-"`
}

// FirstError is the first config's error, in the grid's order (nil when every config was planned).
func (p *GridPlan) FirstError() error {
	for _, c := range p.Configs {
		if c.Error != "" {
			return errors.New(c.Error)
		}
	}
	return nil
}

// PlanGrid plans every config of g for s through the engine's one planner (pipeline.PlanConfigs, the
// PlanJobs of extract, the sweep and serve, with o's decoding and tensor options): a config whose
// frames, geometry or tensor extract would refuse for this video carries that error, and each
// output size is the one extract builds. The union is that of the configs' frames; its decoding cost
// is the decoder's own plan of that Read (pipeline.LocalSource.ReadCost), or one pass from frame 0
// without a keyframe index (counts, a loader's positions). An error is the video's or the options'.
func PlanGrid(ctx context.Context, g *grid.Grid, gridPath string, s Subject, o pipeline.Options) (*GridPlan, error) {
	loaderName := ""
	if len(g.Configs) > 0 {
		loaderName = g.Configs[0].Loader
	}
	if loaderName != "" && s.Path == "" {
		return nil, fmt.Errorf("loader %s picks its frames by decoding the video: give a VIDEO, not --total-frames", loaderName)
	}
	pv, err := openPlan(ctx, s, o)
	if err != nil {
		return nil, err
	}
	defer pv.Close()
	plans, err := pipeline.PlanConfigs(ctx, pv.v, g.Configs, o)
	if err != nil {
		return nil, err
	}
	sv := pv.sampler()
	out := &GridPlan{Grid: gridPath, Name: g.Spec.Name, Path: s.Path, TotalFrames: sv.Frames, FPS: sv.FPS,
		DurationS: sv.Duration(), Dropped: g.Dropped, Loader: loaderName}
	var sels []sampler.Selection
	for i := range plans {
		cr := configReport(g, &plans[i])
		if cr.Error != "" {
			out.Failed++
		} else {
			sels = append(sels, *cr.Plan)
		}
		out.Configs = append(out.Configs, cr)
	}
	out.Union = sampler.Union(sels...)
	out.Decode = decode.ForwardCost(out.Union.Indices)
	if pv.src != nil && loaderName == "" {
		if out.Decode, err = pv.src.ReadCost(out.Union.Indices); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// configReport is one config's line of the plan. A config planned by frame count (fps modes) is
// checked against the model's context with the count its plan has (grid.Grid.SelectAll's rule).
func configReport(g *grid.Grid, p *pipeline.ConfigPlan) ConfigReport {
	cr := ConfigReport{Config: *p.Config}
	if p.Err != nil {
		cr.Error = p.Err.Error()
		return cr
	}
	sel := p.Selection
	cr.Plan = &sel
	c := p.Config
	if c.Frames == 0 && !c.TextOnly && c.Loader == "" {
		if tokens, fits, known := g.FitsContext(c, len(sel.Indices)); known {
			cr.VisualTokens = tokens - g.Spec.Model.PromptTokens
			cr.OverContext = !fits
		}
	}
	if p.Layout != nil {
		cr.OutputSize = p.Layout.Output().String()
	}
	if len(p.Jobs) > 0 {
		cr.Shape = p.Jobs[0].Shape()
	}
	return cr
}

// OnePlan is `framesweep plan` of one preset or policy: pipeline.PlanReport, the JSON serve's
// /v1/plan answers too.
type OnePlan struct {
	pipeline.PlanReport
	// Kind is "preset" or "policy".
	Kind string `json:"-"`
}

// PlanOne plans the preset or the policy (one of them is set) with req for s. The output size is that of the geometry res
// names, else of the geometry preset of the same name if there is one, when the source size is known.
func PlanOne(ctx context.Context, s Subject, preset, policy string, req sampler.Request, res string, o pipeline.Options) (*OnePlan, error) {
	var smp sampler.Sampler
	var err error
	if preset != "" {
		smp, err = sampler.LookupPreset(preset)
	} else {
		smp, err = sampler.LookupPolicy(policy)
	}
	if err != nil {
		return nil, usage(err)
	}
	spec := res
	if spec == "" && preset != "" {
		if _, gerr := geom.Parse(preset); gerr == nil {
			spec = preset
		}
	}
	var g geom.Geometry
	if spec != "" {
		if g, err = geom.Parse(spec); err != nil {
			return nil, usage(fmt.Errorf("--resolution: %w", err))
		}
	}
	pv, err := openPlan(ctx, s, o)
	if err != nil {
		return nil, err
	}
	defer pv.Close()
	p, err := smp.Select(pv.sampler(), req)
	if err != nil {
		if errors.Is(err, sampler.ErrRequest) || errors.Is(err, sampler.ErrVideo) && s.Path == "" {
			return nil, usage(err)
		}
		return nil, sampler.WithPath(err, s.Where())
	}
	out := &OnePlan{PlanReport: pipeline.NewPlanReport(s.Path, pv.sampler(), p), Kind: "policy"}
	if p.Preset != "" {
		out.Kind = "preset"
	}
	if g != nil {
		out.Resolution = g.String()
		if w, h := pv.v.Info.OutWidth, pv.v.Info.OutHeight; w > 0 && len(p.Indices) > 0 {
			l, err := g.Layout(w, h, len(p.Indices))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Where(), err)
			}
			out.SetLayout(l)
		}
	}
	return out, nil
}

// LoaderPlan is `plan VIDEO --loader NAME --json`: the plan report (positions as indices, their
// timestamps, the loader's count and rate, loader_result) and the loader's description.
type LoaderPlan struct {
	pipeline.PlanReport
	Spec loader.Spec `json:"loader_spec"`
}

// PlanLoader is the positions, counts, sizes and fallbacks the named harness loader's reader gives for
// req on the video at path, from a plan-only run (it decodes as the reader does, converts nothing);
// res, when set, is a geometry to give the output size of its frames.
func PlanLoader(ctx context.Context, path, name string, req loader.Request, res string) (*LoaderPlan, error) {
	var g geom.Geometry
	if res != "" {
		var err error
		if g, err = geom.Parse(res); err != nil {
			return nil, usage(fmt.Errorf("--resolution: %w", err))
		}
	}
	spec, err := loader.Lookup(name)
	if err != nil {
		return nil, usage(err)
	}
	results, errs, err := pipeline.RunLoader(ctx, pipeline.VideoRef{Path: path}, name, []loader.Request{req}, load.Options{PlanOnly: true})
	if err == nil {
		err = errs[0]
	}
	if err != nil {
		return nil, err
	}
	r := results[0]
	out := &LoaderPlan{PlanReport: pipeline.NewLoaderReport(path, r), Spec: spec}
	if g != nil {
		w, h := loadedSize(r)
		l, err := g.Layout(w, h, len(r.Frames))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out.Resolution = g.String()
		out.SetLayout(l)
	}
	return out, nil
}

// loadedSize is the size of the frames a loader hands the model's processor.
func loadedSize(r *load.Result) (int, int) {
	if r.ResizedW > 0 {
		return r.ResizedW, r.ResizedH
	}
	return r.Width, r.Height
}
