package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/llamacpp"
	"github.com/framesweep/framesweep/llm/onnx"
	"github.com/framesweep/framesweep/llm/openai"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
	"github.com/framesweep/framesweep/sweep"
)

// runtimes is the explicit registry of model runtimes the CLI can open.
var runtimes = llm.Registry{
	"llamacpp": llamacpp.Open,
	"onnx":     onnx.Open,
	"openai":   openai.Open,
}

type askOutput struct {
	*llm.Response
	Runtime     string    `json:"runtime"`
	Backend     string    `json:"runtime_backend,omitempty"` // in process: the build and devices it ran on
	Video       string    `json:"video,omitempty"`
	Sampler     string    `json:"sampler,omitempty"`
	Config      string    `json:"config,omitempty"`   // the grid config id these settings name
	Geometry    string    `json:"geometry,omitempty"` // what the model sees: the preset's, --resolution/--size, or a tensor runtime's
	Kernel      string    `json:"kernel,omitempty"`
	Pipeline    string    `json:"pipeline,omitempty"`
	Width       int       `json:"width,omitempty"` // each image fed
	Height      int       `json:"height,omitempty"`
	Images      int       `json:"images,omitempty"`       // images per frame (tiles + thumbnail, or 1)
	InputSHA256 string    `json:"input_sha256,omitempty"` // sha256 of the frames tensor fed (uint8 frames, or a tensor runtime's float tensor)
	Indices     []int     `json:"indices"`
	TimestampsS []float64 `json:"timestamps_s"`
}

// askArgs are ask's validated flags.
type askArgs struct {
	spec    string
	engine  string // the spec's engine name
	req     *llm.Request
	video   string // "" with --text-only
	sampler string // preset or policy name
	request sampler.Request
	res     string // --resolution or --size ("": the preset's, or a tensor runtime's)
	pipe    string
	kernel  string
	dec     extract.Decoding
	asJSON  bool
}

// runAsk: framesweep ask --runtime SPEC VIDEO --question Q --options "A. …" "B. …" …
// (--preset NAME [--frames N] | --policy NAME --frames N | --text-only) [--template T] [--json]
// The video is opened first (a bad video is reported before a bad model), then the runtime, then the
// input is built as a sweep of that runtime feeds it (sweep.OneVideo.Build: the frames, or the tensor
// a tensor runtime describes).
func runAsk(args []string, stdout, stderr io.Writer) int {
	const name = "ask"
	a, code := parseAsk(args, stderr)
	if a == nil {
		return code
	}
	out := askOutput{Runtime: a.engine, Indices: []int{}, TimestampsS: []float64{}}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var ov *sweep.OneVideo
	if a.video != "" {
		o, err := a.dec.Options()
		if err != nil {
			return usageErr(stderr, name, "%v", err)
		}
		o.Kernel = a.kernel
		if ov, err = sweep.OpenOne(ctx, a.video, o); err != nil {
			return failErr(stderr, name, err)
		}
		defer ov.Close()
	}
	// llama.cpp logs through slog at INFO; keep stderr to warnings and errors.
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	rt, err := runtimes.Open(a.spec)
	if err != nil {
		if errors.Is(err, llm.ErrBadSpec) || errors.Is(err, llm.ErrUnknownEngine) {
			return usageErr(stderr, name, "--runtime: %v", err)
		}
		return failErr(stderr, name, err)
	}
	defer rt.Close()
	if ov != nil {
		if code := a.feed(ctx, rt, ov, &out, stderr); code != exitOK {
			return code
		}
	}
	resp, err := rt.Answer(ctx, a.req)
	if err != nil {
		return failErr(stderr, name, err)
	}
	out.Response = resp
	if d, ok := rt.(llm.Describer); ok && a.engine == "llamacpp" { // a server's Describe is a request
		if info, err := d.Describe(ctx); err == nil {
			out.Backend = info.Backend
		}
	}
	if a.asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return failErr(stderr, name, err)
		}
		return exitOK
	}
	letters := make([]string, 0, len(resp.Probs))
	for l := range resp.Probs {
		letters = append(letters, l)
	}
	sort.Strings(letters)
	var probs []string
	for _, l := range letters {
		probs = append(probs, fmt.Sprintf("%s=%.3f", l, resp.Probs[l]))
	}
	fmt.Fprintf(stdout, "choice: %q  probs: %s  (template %s, %d frames, %.3fs)\ntext: %q\n",
		resp.Choice, strings.Join(probs, " "), resp.Template, len(out.Indices), resp.LatencyS, resp.Text)
	return exitOK
}

// feed builds the request's input through the sweep's input builder. A tensor runtime takes its
// tensor at its own geometry: ask's config is built there unless --resolution/--size names one (the
// sweep's rule then holds: another geometry, or another --kernel, is bad usage, never resized away).
// input_sha256 is the sha256 of the tensor fed: what the model consumes.
func (a *askArgs) feed(ctx context.Context, rt llm.Runtime, ov *sweep.OneVideo, out *askOutput, stderr io.Writer) int {
	const name = "ask"
	res := a.res
	if res == "" {
		res = sweep.TensorGeometry(rt)
	}
	cfg, err := grid.One(a.sampler, a.request, res, a.pipe)
	if err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	in, err := ov.Build(ctx, rt, a.engine, cfg)
	switch {
	case errors.Is(err, sweep.ErrOptions), errors.Is(err, sampler.ErrRequest):
		return usageErr(stderr, name, "%v", err)
	case err != nil:
		return failErr(stderr, name, err)
	}
	in.Fill(a.req, in.Video)
	job := in.Job
	out.Video, out.Indices, out.TimestampsS = a.video, job.Selection.Indices, job.Selection.TimestampsS
	out.Sampler, out.Config, out.Geometry, out.Kernel, out.Pipeline = job.Selection.Name(), cfg.ID, job.Geometry, job.Spec.Kernel, job.Pipeline
	out.Width, out.Height, out.Images, out.InputSHA256 = job.Width, job.Height, job.Images, in.SHA256
	return exitOK
}

// parseAsk validates ask's flags: nil and the exit status on bad usage.
func parseAsk(args []string, stderr io.Writer) (*askArgs, int) {
	const name = "ask"
	args, options, sawOptions := splitOptions(args)
	fs := newFlags(name, stderr)
	spec := fs.String("runtime", "", "runtime spec: llamacpp:model=PATH,mmproj=PATH | onnx:model=PATH | openai:url=URL,model=NAME")
	question := fs.String("question", "", "the question (required)")
	preset := fs.String("preset", "", "sampling preset: "+strings.Join(presetNames(), " "))
	policy := fs.String("policy", "", "sampling policy: "+strings.Join(policyNames(), " "))
	frames := fs.Int("frames", 0, "frame budget (default: the preset's)")
	sampleFPS := fs.Float64("sample-fps", 0, "sampling rate for presets/policies with an fps mode")
	samplerSeed := fs.Uint64("sampler-seed", 0, samplerSeedHelp)
	llmSeed := fs.Int64("llm-seed", 0, llmSeedHelp)
	deprecate(fs, "seed", "--sampler-seed and --llm-seed", "sampler-seed", "llm-seed")
	textOnly := fs.Bool("text-only", false, "ask without frames (the VIDEO is not read)")
	template := fs.String("template", llm.TemplateGeneric, "prompt template and answer parser: "+strings.Join(llm.TemplateIDs, " "))
	subtitles := fs.String("subtitles", "", "subtitle text (videomme template)")
	maxTokens := fs.Int("max-tokens", 0, fmt.Sprintf("generation bound (default %d)", llm.DefaultMaxTokens))
	temperature := fs.Float64("temperature", 0, "sampling temperature (0 = greedy)")
	resolution := fs.String("resolution", "", "geometry spec of what the model sees (default: the preset's geometry, a tensor runtime's, else the source size)")
	size := fs.String("size", "", "feed every frame resized to WxH (shorthand for --resolution WxH)")
	kernel := kernelFlag(fs)
	pipe := fs.String("pipeline", cache.PipelineRaw, "raw | cached (frames through JPEG q75 first, as VLMEvalKit)")
	dec := addDecodeFlags(fs, dStream|dDamaged|dRotate|dWorker)
	asJSON := addJSON(fs, false)
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: framesweep ask --runtime SPEC VIDEO --question Q --options "A. …" "B. …" … (--preset NAME [--frames N] | --policy NAME --frames N | --text-only) [--resolution SPEC | --size WxH] [--kernel K] [--pipeline raw|cached] [--stream N] [--on-damaged fail|keep] [--template generic|videomme|mlvu] [--sampler-seed S] [--llm-seed S] [--json]`)
		printFlags(fs)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, flagParseStatus(err)
	}
	switch {
	case *spec == "":
		return nil, usageErr(stderr, name, "--runtime SPEC is required")
	case *question == "":
		return nil, usageErr(stderr, name, "--question is required")
	case sawOptions && len(options) == 0:
		return nil, usageErr(stderr, name, "--options needs at least one option")
	case *textOnly && (*preset != "" || *policy != ""):
		return nil, usageErr(stderr, name, "--text-only excludes --preset/--policy")
	case !*textOnly && (*preset == "") == (*policy == ""):
		return nil, usageErr(stderr, name, "give one of --preset NAME, --policy NAME or --text-only")
	case len(pos) > 1:
		return nil, usageErr(stderr, name, "want at most one VIDEO, got %d arguments", len(pos))
	case !*textOnly && len(pos) == 0:
		return nil, usageErr(stderr, name, "VIDEO is required unless --text-only")
	}
	a := &askArgs{spec: *spec, asJSON: *asJSON, pipe: *pipe, kernel: *kernel, dec: dec.d}
	a.req = &llm.Request{Question: *question, Options: options, Template: *template, Subtitles: *subtitles,
		MaxTokens: *maxTokens, Temperature: *temperature, Seed: *llmSeed}
	if err := a.req.Validate(); err != nil {
		return nil, usageErr(stderr, name, "%v", err)
	}
	sp, err := llm.ParseSpec(*spec)
	if err != nil {
		return nil, usageErr(stderr, name, "--runtime: %v", err)
	}
	a.engine = sp.Engine
	if *textOnly {
		return a, exitOK
	}
	a.video, a.sampler = pos[0], *preset+*policy
	a.request = sampler.Request{Frames: *frames, SampleFPS: *sampleFPS, Seed: *samplerSeed}
	if a.res, err = askResolution(*resolution, *size); err != nil {
		return nil, usageErr(stderr, name, "%v", err)
	}
	if _, err = grid.One(a.sampler, a.request, a.res, *pipe); err != nil {
		return nil, usageErr(stderr, name, "%v", err)
	}
	if err := extract.CheckKernel(a.kernel); err != nil {
		return nil, usageErr(stderr, name, "%v", err)
	}
	if _, err := a.dec.Options(); err != nil {
		return nil, usageErr(stderr, name, "%v", err)
	}
	return a, exitOK
}

// askResolution is what the model sees: --resolution, --size, else "" (grid.One then gives a
// preset's configs the preset's own geometry, as a grid without resolutions does; a policy's the
// source size; a tensor runtime's is its own); an error is bad usage.
func askResolution(resolution, size string) (string, error) {
	switch {
	case size != "" && resolution != "":
		return "", errors.New("--size and --resolution are mutually exclusive")
	case size != "":
		if _, _, err := geom.ParseWxH(size); err != nil {
			return "", fmt.Errorf("--size %q: want WxH", size)
		}
		return size, nil
	}
	return resolution, nil
}

// splitOptions pulls `--options A B C …` (every argument up to the next flag) out of args, since the
// flag package takes one value per flag. "--options=X" adds one option.
func splitOptions(args []string) (rest, opts []string, seen bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(rest, args[i:]...), opts, seen
		case a == "--options" || a == "-options":
			seen = true
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				opts = append(opts, args[i])
			}
		case strings.HasPrefix(a, "--options=") || strings.HasPrefix(a, "-options="):
			seen = true
			opts = append(opts, a[strings.Index(a, "=")+1:])
		default:
			rest = append(rest, a)
		}
	}
	return rest, opts, seen
}
