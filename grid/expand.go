package grid

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

type samplerEntry struct {
	s      sampler.Sampler
	preset bool
}

// Expand validates a spec and builds its configs: frames × samplers × seeds × resolutions ×
// pipelines, then sample_fps × fps-capable samplers × …, then the text-only config.
func Expand(spec Spec) (*Grid, error) {
	if err := validateSpec(&spec); err != nil {
		return nil, err
	}
	if spec.Loader != "" && spec.Loader != DefaultLoader {
		return expandLoader(spec)
	}
	if err := spec.Options.LoaderOptions.check(""); err != nil {
		return nil, err
	}
	entries, err := samplerEntries(spec)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 && !spec.TextOnly {
		return nil, gridErr("no policies or presets (and no text_only config)")
	}
	if len(entries) > 0 && len(spec.Frames) == 0 && len(spec.SampleFPS) == 0 {
		return nil, gridErr("no frames or sample_fps budgets")
	}
	resolutions := spec.Resolutions
	if len(resolutions) == 0 {
		resolutions = []string{""}
	}
	pipelines := spec.Pipelines
	if len(pipelines) == 0 {
		pipelines = []string{PipelineRaw}
	}
	seeds := spec.Seeds
	if len(seeds) == 0 {
		seeds = []uint64{0}
	}
	// Bound the product before building anything.
	total := (len(spec.Frames) + len(spec.SampleFPS)) * len(entries) * len(seeds) * len(resolutions) * len(pipelines)
	if total > maxGridConfigs {
		return nil, gridErr("%d configs exceed the limit of %d", total, maxGridConfigs)
	}
	g := &Grid{Spec: spec, geoms: map[string]geom.Geometry{}}
	for _, r := range spec.Resolutions {
		g.geoms[r], _ = geom.Parse(r) // validated above
	}
	if spec.Model != nil && spec.Model.SourceSize != "" {
		g.srcW, g.srcH, _ = geom.ParseWxH(spec.Model.SourceSize)
	}
	base := sampler.Request{Torch: spec.Options.Torch, ForceLast: spec.Options.ForceLast, ForceSample: spec.Options.ForceSample,
		MinFrames: spec.Options.MinFrames, MaxFrames: spec.Options.MaxFrames}
	for _, e := range entries {
		if err := g.addSampler(e, base, seeds, resolutions, pipelines); err != nil {
			return nil, err
		}
	}
	if spec.TextOnly {
		g.Configs = append(g.Configs, Config{ID: "text-only", TextOnly: true})
	}
	if err := g.checkIDs(); err != nil {
		return nil, err
	}
	if err := g.applyModel(); err != nil {
		return nil, err
	}
	return g, nil
}

// samplerEntries looks up the spec's policies and presets.
func samplerEntries(spec Spec) ([]samplerEntry, error) {
	var entries []samplerEntry
	for _, n := range spec.Policies {
		s, err := sampler.LookupPolicy(n)
		if err != nil {
			return nil, errf(sampler.ErrUnknown, "grid", "policies: "+err.Error())
		}
		entries = append(entries, samplerEntry{s, false})
	}
	for _, n := range spec.Presets {
		s, err := sampler.LookupPreset(n)
		if err != nil {
			return nil, errf(sampler.ErrUnknown, "grid", "presets: "+err.Error())
		}
		entries = append(entries, samplerEntry{s, true})
	}
	return entries, nil
}

// addSampler adds one sampler's configs: its budgets (frames, then sample_fps, as its modes allow) ×
// seeds (random samplers only) × resolutions × pipelines.
func (g *Grid) addSampler(e samplerEntry, base sampler.Request, seeds []uint64, resolutions, pipelines []string) error {
	name := e.s.Name()
	hasFrames, hasFPS := e.s.Modes()
	random := strings.HasPrefix(name, "random")
	needsFPS := e.s.NeedsFPS()
	if (needsFPS || !hasFrames) && len(g.Spec.SampleFPS) == 0 {
		return gridErr("%q needs sample_fps values", name)
	}
	if !hasFPS && len(g.Spec.Frames) == 0 {
		return gridErr("%q has no fps mode and the grid has no frames budgets", name)
	}
	type budget struct {
		n int
		f float64
	}
	var budgets []budget
	if hasFrames && !needsFPS {
		for _, n := range g.Spec.Frames {
			budgets = append(budgets, budget{n: n})
		}
	}
	if hasFPS {
		for _, f := range g.Spec.SampleFPS {
			budgets = append(budgets, budget{f: f})
		}
	}
	seedList := []uint64{0}
	if random {
		seedList = seeds
	}
	if e.preset && len(g.Spec.Resolutions) == 0 {
		resolutions = presetResolutions(name, g.geoms)
	}
	for _, b := range budgets {
		for _, seed := range seedList {
			for _, res := range resolutions {
				for _, pipe := range pipelines {
					c := Config{Frames: b.n, SampleFPS: b.f, Seed: seed, Resolution: res, Pipeline: pipe, smp: e.s, geometry: g.geoms[res]}
					if e.preset {
						c.Preset = name
					} else {
						c.Policy = name
					}
					c.request = base
					c.request.Frames, c.request.SampleFPS, c.request.Seed = b.n, b.f, seed
					if b.n > 0 { // min/max frames clamp fps modes only
						c.request.MinFrames, c.request.MaxFrames = 0, 0
					}
					if name == "nested" {
						c.ladder = g.Spec.Frames
					}
					c.ID = configID(c, random)
					g.Configs = append(g.Configs, c)
				}
			}
		}
	}
	return nil
}

// PresetResolution is the resolution a preset's configs take when the grid (or the request) gives
// none: the preset's own geometry (geom.ForPreset), the frames its name promises, so that
// `presets: [qwen2.5-vl]` feeds what `ask --preset qwen2.5-vl` feeds. It is "" (the source size) for
// the presets whose readers hand source-size frames to the model (lmms-eval, vlmevalkit, videomme)
// and for the names geom has no geometry for.
func PresetResolution(name string) string {
	g, err := geom.ForPreset(name)
	if err != nil {
		return ""
	}
	if n, ok := g.(geom.Named); ok {
		g = n.Geometry
	}
	if _, native := g.(geom.Native); native {
		return ""
	}
	return name
}

// presetResolutions is a preset's one resolution in a grid without resolutions, its geometry added
// to geoms.
func presetResolutions(name string, geoms map[string]geom.Geometry) []string {
	res := PresetResolution(name)
	if res != "" {
		geoms[res], _ = geom.Parse(res) // a preset name parses
	}
	return []string{res}
}

// checkIDs refuses two configs with the same id.
func (g *Grid) checkIDs() error {
	seen := map[string]bool{}
	for _, c := range g.Configs {
		if seen[c.ID] {
			return gridErr("two configs get the id %q (resolutions that differ only in punctuation?)", c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

func validateSpec(spec *Spec) error {
	if spec.Loader != "" && !knownLoader(spec.Loader) {
		return unknownLoader(spec.Loader)
	}
	if spec.Stream != nil && (*spec.Stream < 0 || *spec.Stream > 1<<16) {
		return gridErr("stream: %d is not a stream index", *spec.Stream)
	}
	for _, n := range spec.Frames {
		if n < 1 || n > sampler.MaxBudget {
			return gridErr("frames: budget %d is outside [1, %d]", n, sampler.MaxBudget)
		}
	}
	if dup := firstDup(spec.Frames); dup != "" {
		return gridErr("frames: %s listed twice", dup)
	}
	for _, f := range spec.SampleFPS {
		if !(f > 0) || math.IsInf(f, 0) || f > 1000 {
			return gridErr("sample_fps: %v is not in (0, 1000]", f)
		}
	}
	if dup := firstDup(spec.SampleFPS); dup != "" {
		return gridErr("sample_fps: %s listed twice", dup)
	}
	if dup := firstDup(spec.Seeds); dup != "" {
		return gridErr("seeds: %s listed twice", dup)
	}
	if dup := firstDup(append(slices.Clone(spec.Policies), spec.Presets...)); dup != "" {
		return gridErr("policies/presets: %s listed twice", dup)
	}
	for _, r := range spec.Resolutions {
		if strings.TrimSpace(r) == "" || len(r) > 200 {
			return gridErr("resolutions: empty or over-long geometry spec %q", r)
		}
	}
	if dup := firstDup(spec.Resolutions); dup != "" {
		return gridErr("resolutions: %s listed twice", dup)
	}
	for _, r := range spec.Resolutions {
		if _, err := geom.Parse(r); err != nil {
			return gridErr("resolutions: %v", err)
		}
	}
	for _, p := range spec.Pipelines {
		if p != PipelineRaw && p != PipelineCached {
			return gridErr("pipelines: unknown pipeline %q (want raw or cached)", p)
		}
	}
	if dup := firstDup(spec.Pipelines); dup != "" {
		return gridErr("pipelines: %s listed twice", dup)
	}
	switch spec.Options.Torch {
	case "", sampler.Torch2, sampler.Torch2NoFMA, sampler.Torch113AVX2, sampler.Torch113AVX512:
	default:
		return gridErr("options.torch: unknown torch variant %q (want 2, 2-nofma, 1.13-avx2 or 1.13-avx512)", spec.Options.Torch)
	}
	if spec.Options.MinFrames < 0 || spec.Options.MaxFrames < 0 {
		return gridErr("options: min_frames/max_frames must not be negative")
	}
	if m := spec.Model; m != nil {
		if m.Context < 1 {
			return gridErr("model.context must be ≥ 1")
		}
		if m.PromptTokens < 0 || m.TokensPerFrame < 0 {
			return gridErr("model: prompt_tokens and tokens_per_frame must not be negative")
		}
		for r, t := range m.TokensPerResolution {
			if t < 1 {
				return gridErr("model.tokens_per_resolution[%q] must be ≥ 1", r)
			}
			if !slices.Contains(spec.Resolutions, r) {
				return gridErr("model.tokens_per_resolution: %q is not one of the grid's resolutions", r)
			}
		}
		switch m.OverContext {
		case "", "flag", "drop":
		default:
			return gridErr("model.over_context: %q (want flag or drop)", m.OverContext)
		}
	}
	if m := spec.Model; m != nil && m.SourceSize != "" {
		if _, _, err := geom.ParseWxH(m.SourceSize); err != nil {
			return gridErr("model.source_size: %v", err)
		}
	}
	if spec.IsoCompute && (spec.Model == nil || (spec.Model.TokensPerFrame == 0 && len(spec.Model.TokensPerResolution) == 0 && spec.Model.SourceSize == "")) {
		return gridErr("iso_compute needs model.tokens_per_frame, model.tokens_per_resolution or model.source_size")
	}
	return nil
}

func firstDup[T comparable](xs []T) string {
	seen := map[T]bool{}
	for _, x := range xs {
		if seen[x] {
			return fmt.Sprint(x)
		}
		seen[x] = true
	}
	return ""
}

// configID is deterministic and human-readable: f16-uniform-448x448-raw, fps2-qwen2.5-vl-raw,
// f8-random-s3-raw.
func configID(c Config, random bool) string {
	var b strings.Builder
	if c.Frames > 0 {
		b.WriteString("f" + strconv.Itoa(c.Frames))
	} else {
		b.WriteString("fps" + strings.ReplaceAll(strconv.FormatFloat(c.SampleFPS, 'g', -1, 64), ".", "p"))
	}
	b.WriteString("-")
	if c.Loader != "" {
		b.WriteString("loader-" + strings.ReplaceAll(c.Loader, "/", "_"))
	} else if c.Preset != "" {
		b.WriteString(strings.ReplaceAll(c.Preset, "/", "_")) // ids may become file names
	} else {
		b.WriteString(c.Policy)
	}
	if random {
		b.WriteString("-s" + strconv.FormatUint(c.Seed, 10))
	}
	if c.Resolution != "" {
		b.WriteString("-" + idPart(c.Resolution))
	}
	b.WriteString("-" + c.Pipeline)
	return b.String()
}

// idPart keeps [a-z0-9.-] of a geometry spec and turns every other run of characters into "_".
func idPart(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' || r == '-' {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return b.String()
}
