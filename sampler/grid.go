package sampler

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/framesweep/framesweep/resize/geom"
)

// Limits that keep a hostile or mistaken grid file bounded in time and memory.
const (
	maxGridBytes   = 1 << 20
	maxGridConfigs = 100000
)

// MaxBudget is the largest frame budget a grid (or an imported config) may name.
const MaxBudget = 1 << 17

// GridSpec is the YAML grid file, field for field (docs/sampler.md describes each field).
type GridSpec struct {
	Name        string    `yaml:"name"`
	Frames      []int     `yaml:"frames"`
	SampleFPS   []float64 `yaml:"sample_fps"`
	Policies    []string  `yaml:"policies"`
	Presets     []string  `yaml:"presets"`
	Seeds       []uint64  `yaml:"seeds"`
	Resolutions []string  `yaml:"resolutions"`
	Pipelines   []string  `yaml:"pipelines"`
	TextOnly    bool      `yaml:"text_only"`
	Options     Options   `yaml:"options"`
	Model       *Model    `yaml:"model"`
	IsoCompute  bool      `yaml:"iso_compute"`
	// Stream is the video stream extract and sweep decode (its index in the file, as --stream takes
	// it); absent: FFmpeg's best video stream. A --stream flag overrides it.
	Stream *int `yaml:"stream"`
	// Loader is the harness loader whose reader picks and decodes every config's frames
	// (docs/loaders.md): absent or "framesweep" = framesweep's own exact reading of the policies and
	// presets. A harness loader replaces policies and presets (loaders.go).
	Loader string `yaml:"loader"`
}

// Options are applied to every config's Request.
type Options struct {
	Torch       Torch `yaml:"torch"`
	ForceLast   bool  `yaml:"force_last"`
	ForceSample bool  `yaml:"force_sample"`
	MinFrames   int   `yaml:"min_frames"`
	MaxFrames   int   `yaml:"max_frames"`
	// qwen-vl-utils loaders only: fetch_video's element keys.
	LoaderOptions `yaml:",inline"`
}

// Model is the context ceiling of a matched grid: a config fits when
// tokens_per_frame × frames + prompt_tokens ≤ context.
type Model struct {
	Name                string         `yaml:"name"`
	Context             int            `yaml:"context"`
	PromptTokens        int            `yaml:"prompt_tokens"`
	TokensPerFrame      int            `yaml:"tokens_per_frame"`
	TokensPerResolution map[string]int `yaml:"tokens_per_resolution"`
	SourceSize          string         `yaml:"source_size"`  // WxH: derive tokens from each resolution's geometry
	OverContext         string         `yaml:"over_context"` // "flag" (default) or "drop"
}

// Pipelines of DESIGN.md: raw decoded frames, or a JPEG q75 round trip as VLMEvalKit does.
const (
	PipelineRaw    = "raw"
	PipelineCached = "cached"
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

	request  Request
	loaderOp LoaderOptions
	sampler  Sampler
	ladder   []int // nested: the grid's budgets
	geometry geom.Geometry
}

// Geometry is the parsed resolution of the config; nil when the grid lists no resolutions.
func (c *Config) Geometry() geom.Geometry { return c.geometry }

// Request is the sampling request this config makes.
func (c *Config) Request() Request { return c.request }

// Plan samples one video for this config. A text-only config has an empty plan.
func (c *Config) Plan(v Video) (Plan, error) {
	if c.TextOnly {
		return Plan{Policy: "text-only", Indices: []int{}, TimestampsS: []float64{}}, nil
	}
	if c.Loader != "" {
		return Plan{}, errf(ErrLoader, c.ID, "the "+c.Loader+" loader picks its frames by decoding the video: plan it through the engine (pipeline.Plan, `framesweep plan --loader`)")
	}
	if c.sampler == nil {
		return Plan{}, errf(ErrGrid, c.ID, "config was not built by ParseGrid")
	}
	if c.Policy == "nested" && c.Frames > 0 {
		if err := v.check(c.ID); err != nil {
			return Plan{}, err
		}
		if c.Frames > v.Frames {
			return Plan{}, errf(ErrBudget, c.ID, fmt.Sprintf("%d frames requested from a video of %d frames", c.Frames, v.Frames))
		}
		// Nest among the budgets this video can satisfy, so a short video does not fail the small ones.
		var ladder []int
		for _, b := range c.ladder {
			if b <= v.Frames {
				ladder = append(ladder, b)
			}
		}
		plans, err := Ladder(v, append(ladder, c.Frames))
		if err != nil {
			return Plan{}, err
		}
		return plans[len(plans)-1], nil
	}
	p, err := c.sampler.Plan(v, c.request)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			ce := *e
			ce.Op = c.ID + ": " + e.Op
			return Plan{}, &ce
		}
		return Plan{}, err
	}
	return p, nil
}

// Grid is an expanded grid spec.
type Grid struct {
	Spec    GridSpec
	Configs []Config
	Dropped []string // matched grid with over_context: drop: ids of the configs left out

	geoms map[string]geom.Geometry
	srcW  int // model.source_size, 0 when not given
	srcH  int
}

// LoadGrid reads and parses a grid file; errors name the file.
func LoadGrid(path string) (*Grid, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Path: path, Op: "grid", Detail: err.Error(), Err: ErrGrid}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGridBytes+1))
	if err != nil {
		return nil, &Error{Path: path, Op: "grid", Detail: err.Error(), Err: ErrGrid}
	}
	g, err := ParseGrid(data)
	return g, WithPath(err, path)
}

func gridErr(format string, a ...any) error {
	return errf(ErrGrid, "grid", fmt.Sprintf(format, a...))
}

// ParseGrid parses a YAML grid (unknown fields are errors) and expands it into configs.
func ParseGrid(data []byte) (*Grid, error) {
	if len(data) > maxGridBytes {
		return nil, gridErr("file larger than %d bytes", maxGridBytes)
	}
	// First as nodes, which keep line numbers: yaml.v3 would store `frames: [8.5]` as 8 without a word,
	// so every integer field is checked to hold an integer before the typed decode.
	var doc yaml.Node
	ndec := yaml.NewDecoder(bytes.NewReader(data))
	if err := ndec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, gridErr("empty grid file")
		}
		return nil, gridErr("malformed YAML: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if top := doc.Content; len(doc.Content) == 1 && top[0].Kind != yaml.MappingNode && !emptyYAML(&doc) {
		// yaml.v3 would say "cannot unmarshal !!str into sampler.GridSpec".
		return nil, &Error{Line: top[0].Line, Op: "grid", Detail: fmt.Sprintf("a grid is a YAML mapping of fields (frames:, policies:, …), this is a %s", kindName(top[0].Kind)), Err: ErrGrid}
	}
	if err := checkIntegers(&doc, reflect.TypeFor[GridSpec](), "", 0); err != nil {
		return nil, err
	}
	var spec GridSpec
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil {
		return nil, gridErr("malformed YAML: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	// A second document would otherwise be ignored without a word (an empty trailing "---" is fine).
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || !emptyYAML(&more) {
			return nil, gridErr("a grid file holds one YAML document; found more after the first \"---\"")
		}
	}
	return Expand(spec)
}

// intLiteral is a plain decimal integer (that YAML resolves to a float only when it overflows int64).
var intLiteral = regexp.MustCompile(`^[-+]?[0-9]+$`)

// checkIntegers walks a YAML node against the Go type it will decode into and rejects, with the line
// and the key, a value that is not an integer where the field is one (frames, seeds, min_frames,
// max_frames, the model's token counts). Keys the type does not have are left to the typed decode
// (KnownFields), which names them; depth bounds alias chains.
func checkIntegers(n *yaml.Node, t reflect.Type, key string, depth int) error {
	if n == nil || depth > 64 {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkIntegers(c, t, key, depth+1); err != nil {
				return err
			}
		}
		return nil
	case yaml.AliasNode:
		return checkIntegers(n.Alias, t, key, depth+1)
	}
	at := func(format string, a ...any) error {
		return &Error{Line: n.Line, Op: "grid", Detail: key + ": " + fmt.Sprintf(format, a...), Err: ErrGrid}
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode {
			return at("want an integer, got a %s", kindName(n.Kind))
		}
		switch tag := n.ShortTag(); {
		case tag == "!!null":
		case tag == "!!int" && t.Kind() >= reflect.Uint && strings.HasPrefix(n.Value, "-"):
			return at("%s is negative", n.Value)
		case tag == "!!int":
		case tag == "!!float" && intLiteral.MatchString(n.Value):
			return at("%s is out of range", n.Value)
		default:
			return at("%q is not an integer", n.Value)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil // the typed decode reports the shape
		}
		for i, c := range n.Content {
			if err := checkIntegers(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := fmt.Sprintf("%s[%q]", key, n.Content[i].Value)
			if err := checkIntegers(n.Content[i+1], t.Elem(), k, depth+1); err != nil {
				return err
			}
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			name := n.Content[i].Value
			f, ok := yamlField(t, name)
			if !ok {
				continue
			}
			k := name
			if key != "" {
				k = key + "." + name
			}
			if err := checkIntegers(n.Content[i+1], f.Type, k, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlField finds the struct field whose yaml tag is name.
func yamlField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "" && opts == "inline" && f.Type.Kind() == reflect.Struct { // an inlined struct's keys are its fields'
			if g, ok := yamlField(f.Type, name); ok {
				return g, true
			}
			continue
		}
		if tag == name && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		return "single value"
	}
	return "value"
}

// emptyYAML reports whether a decoded document has no content (only comments, or null).
func emptyYAML(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	return n.Kind == 0 || n.Kind == yaml.DocumentNode && len(n.Content) == 0 ||
		n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

type samplerEntry struct {
	s      Sampler
	preset bool
}

// Expand validates a spec and builds its configs: frames × samplers × seeds × resolutions ×
// pipelines, then sample_fps × fps-capable samplers × …, then the text-only config.
func Expand(spec GridSpec) (*Grid, error) {
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
	base := Request{Torch: spec.Options.Torch, ForceLast: spec.Options.ForceLast, ForceSample: spec.Options.ForceSample,
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
func samplerEntries(spec GridSpec) ([]samplerEntry, error) {
	var entries []samplerEntry
	for _, n := range spec.Policies {
		s, err := LookupPolicy(n)
		if err != nil {
			return nil, errf(ErrUnknown, "grid", "policies: "+err.Error())
		}
		entries = append(entries, samplerEntry{s, false})
	}
	for _, n := range spec.Presets {
		s, err := LookupPreset(n)
		if err != nil {
			return nil, errf(ErrUnknown, "grid", "presets: "+err.Error())
		}
		entries = append(entries, samplerEntry{s, true})
	}
	return entries, nil
}

// addSampler adds one sampler's configs: its budgets (frames, then sample_fps, as its modes allow) ×
// seeds (random samplers only) × resolutions × pipelines.
func (g *Grid) addSampler(e samplerEntry, base Request, seeds []uint64, resolutions, pipelines []string) error {
	name := e.s.Name()
	hasFrames, hasFPS := e.s.Modes()
	random := strings.HasPrefix(name, "random")
	needsFPS := false
	if s, ok := e.s.(*sampler); ok {
		needsFPS = s.needsFPS
	}
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
					c := Config{Frames: b.n, SampleFPS: b.f, Seed: seed, Resolution: res, Pipeline: pipe, sampler: e.s, geometry: g.geoms[res]}
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

func validateSpec(spec *GridSpec) error {
	if spec.Loader != "" && !slices.Contains(loaderNames, spec.Loader) {
		return gridErr("loader: unknown loader %q (known: %s)", spec.Loader, strings.Join(loaderNames, ", "))
	}
	if spec.Stream != nil && (*spec.Stream < 0 || *spec.Stream > 1<<16) {
		return gridErr("stream: %d is not a stream index", *spec.Stream)
	}
	for _, n := range spec.Frames {
		if n < 1 || n > MaxBudget {
			return gridErr("frames: budget %d is outside [1, %d]", n, MaxBudget)
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
	case "", Torch2, Torch2NoFMA, Torch113AVX2, Torch113AVX512:
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

// TokensFor is the number of visual tokens a config spends on n frames: model.tokens_per_resolution
// or model.tokens_per_frame times n when given, otherwise the resolution's geometry (resize/geom)
// applied to model.source_size (which accounts for Qwen's two-frame temporal patches). known is false
// when neither is available.
func (g *Grid) TokensFor(c *Config, n int) (tokens int, known bool) {
	m := g.Spec.Model
	if m == nil || c.TextOnly {
		return 0, m != nil
	}
	if t, ok := m.TokensPerResolution[c.Resolution]; ok {
		return t * n, true
	}
	if m.TokensPerFrame > 0 {
		return m.TokensPerFrame * n, true
	}
	if c.geometry != nil && g.srcW > 0 && n > 0 {
		l, err := c.geometry.Layout(g.srcW, g.srcH, n)
		if err == nil && l.Tokens > 0 {
			return l.TokensFor(n), true
		}
	}
	return 0, false
}

// FitsContext reports the total tokens (visual + prompt) of a config sampling n frames and whether
// they fit the model's context; known is false without a model section or a token count.
func (g *Grid) FitsContext(c *Config, n int) (tokens int, fits, known bool) {
	m := g.Spec.Model
	if m == nil {
		return 0, true, false
	}
	v, known := g.TokensFor(c, n)
	if !known {
		return 0, true, false
	}
	tokens = v + m.PromptTokens
	return tokens, tokens <= m.Context, true
}

// applyModel computes visual tokens, the over-context flag (or drops those configs) and iso-compute
// groups. fps-mode configs are checked with options.max_frames when it is set; otherwise their
// frame count is known only per video (use FitsContext with the plan's length).
func (g *Grid) applyModel() error {
	m := g.Spec.Model
	if m == nil {
		return nil
	}
	kept := g.Configs[:0]
	for _, c := range g.Configs {
		n := c.Frames
		if n == 0 && !c.TextOnly {
			n = g.Spec.Options.MaxFrames
		}
		if n > 0 || c.TextOnly {
			tokens, fits, known := g.FitsContext(&c, n)
			if known {
				c.VisualTokens = tokens - m.PromptTokens
				c.OverContext = !fits
			}
		}
		if c.OverContext && m.OverContext == "drop" {
			g.Dropped = append(g.Dropped, c.ID)
			continue
		}
		kept = append(kept, c)
	}
	g.Configs = kept
	if g.Spec.IsoCompute {
		// A group is worth naming only when it trades frames for pixels: equal visual tokens
		// reached with at least two different frame budgets.
		budgets := map[int]map[int]bool{}
		for _, c := range g.Configs {
			if c.Frames > 0 && c.VisualTokens > 0 {
				if budgets[c.VisualTokens] == nil {
					budgets[c.VisualTokens] = map[int]bool{}
				}
				budgets[c.VisualTokens][c.Frames] = true
			}
		}
		for i := range g.Configs {
			c := &g.Configs[i]
			if c.Frames > 0 && c.VisualTokens > 0 && len(budgets[c.VisualTokens]) > 1 {
				c.IsoGroup = "iso-" + strconv.Itoa(c.VisualTokens)
			}
		}
	}
	return nil
}

// ConfigPlan is one config's plan for a video, or the reason it has none.
type ConfigPlan struct {
	Config Config
	Plan   Plan
	Err    error
}

// PlanAll samples a video for every config. A config that fails keeps its error; the others go on.
// fps-mode configs get VisualTokens and OverContext recomputed from their actual frame count.
func (g *Grid) PlanAll(v Video) []ConfigPlan {
	out := make([]ConfigPlan, len(g.Configs))
	for i := range g.Configs {
		c := &g.Configs[i]
		p, err := c.Plan(v)
		cc := *c
		if err == nil && c.Frames == 0 && !c.TextOnly {
			// fps mode: the frame count is known now; redo the context check with it.
			if tokens, fits, known := g.FitsContext(c, len(p.Indices)); known {
				cc.VisualTokens = tokens - g.Spec.Model.PromptTokens
				cc.OverContext = !fits
			}
		}
		out[i] = ConfigPlan{Config: cc, Plan: p, Err: err}
	}
	return out
}

// One builds the single config a grid with exactly these values would hold: the same id, request,
// plan and geometry (Expand's rules). name is a preset or a policy; r carries the budget (Frames or
// SampleFPS; both 0 means the sampler's own default, e.g. a preset's fps mode), the seed and the
// options; resolution is a geometry spec ("" = the source size); pipeline "" means raw. It is how
// one-off callers (ask, the HTTP server) name a configuration the way a grid file would.
func One(name string, r Request, resolution, pipeline string) (Config, error) {
	s, err := Lookup(name)
	if err != nil {
		return Config{}, err
	}
	if pipeline == "" {
		pipeline = PipelineRaw
	}
	spec := GridSpec{Resolutions: nil, Pipelines: []string{pipeline}}
	if resolution != "" {
		spec.Resolutions = []string{resolution}
	}
	if r.Frames != 0 {
		spec.Frames = []int{r.Frames}
	}
	if r.SampleFPS != 0 {
		spec.SampleFPS = []float64{r.SampleFPS}
	}
	if err := validateSpec(&spec); err != nil {
		return Config{}, err
	}
	if r.MinFrames < 0 || r.MaxFrames < 0 {
		return Config{}, gridErr("min_frames/max_frames must not be negative")
	}
	c := Config{Frames: r.Frames, SampleFPS: r.SampleFPS, Seed: r.Seed, Resolution: resolution, Pipeline: pipeline, sampler: s, request: r}
	if _, perr := LookupPreset(name); perr == nil {
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
