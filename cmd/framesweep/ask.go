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

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/llamacpp"
	"github.com/framesweep/framesweep/llm/onnx"
	"github.com/framesweep/framesweep/llm/openai"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/sampler"
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
	Video       string    `json:"video,omitempty"`
	Sampler     string    `json:"sampler,omitempty"`
	Indices     []int     `json:"indices"`
	TimestampsS []float64 `json:"timestamps_s"`
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

// runAsk: framesweep ask --runtime SPEC VIDEO --question Q --options "A. …" "B. …" …
// (--preset NAME [--frames N] | --policy NAME --frames N | --text-only) [--template T] [--json]
func runAsk(args []string, stdout, stderr io.Writer) int {
	const name = "ask"
	args, options, sawOptions := splitOptions(args)
	fs := newFlags(name, stderr)
	spec := fs.String("runtime", "", "runtime spec: llamacpp:model=PATH,mmproj=PATH | onnx:model=PATH | openai:url=URL,model=NAME")
	question := fs.String("question", "", "the question (required)")
	preset := fs.String("preset", "", "sampling preset: "+strings.Join(presetNames(), " "))
	policy := fs.String("policy", "", "sampling policy: "+strings.Join(policyNames(), " "))
	frames := fs.Int("frames", 0, "frame budget (default: the preset's)")
	sampleFPS := fs.Float64("sample-fps", 0, "sampling rate for presets/policies with an fps mode")
	seed := fs.Uint64("seed", 0, "seed of random sampling policies and of sampling at temperature > 0")
	textOnly := fs.Bool("text-only", false, "ask without frames (the VIDEO is not read)")
	template := fs.String("template", llm.TemplateGeneric, "prompt template and answer parser: "+strings.Join(llm.TemplateIDs, " "))
	subtitles := fs.String("subtitles", "", "subtitle text (videomme template)")
	maxTokens := fs.Int("max-tokens", 0, fmt.Sprintf("generation bound (default %d)", llm.DefaultMaxTokens))
	temperature := fs.Float64("temperature", 0, "sampling temperature (0 = greedy)")
	noRot := fs.Bool("no-autorotate", false, "do not apply the display rotation")
	asJSON := fs.Bool("json", false, "JSON output")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: framesweep ask --runtime SPEC VIDEO --question Q --options "A. …" "B. …" … (--preset NAME [--frames N] | --policy NAME --frames N | --text-only) [--template generic|videomme|mlvu] [--json]`)
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	switch {
	case *spec == "":
		return usageErr(stderr, name, "--runtime SPEC is required")
	case *question == "":
		return usageErr(stderr, name, "--question is required")
	case sawOptions && len(options) == 0:
		return usageErr(stderr, name, "--options needs at least one option")
	case *textOnly && (*preset != "" || *policy != ""):
		return usageErr(stderr, name, "--text-only excludes --preset/--policy")
	case !*textOnly && (*preset == "") == (*policy == ""):
		return usageErr(stderr, name, "give one of --preset NAME, --policy NAME or --text-only")
	case len(pos) > 1:
		return usageErr(stderr, name, "want at most one VIDEO, got %d arguments", len(pos))
	case !*textOnly && len(pos) == 0:
		return usageErr(stderr, name, "VIDEO is required unless --text-only")
	}
	req := &llm.Request{Question: *question, Options: options, Template: *template, Subtitles: *subtitles,
		MaxTokens: *maxTokens, Temperature: *temperature, Seed: int64(*seed)}
	if err := req.Validate(); err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	sp, err := llm.ParseSpec(*spec)
	if err != nil {
		return usageErr(stderr, name, "--runtime: %v", err)
	}
	out := askOutput{Runtime: sp.Engine, Indices: []int{}, TimestampsS: []float64{}}
	if !*textOnly {
		out.Video = pos[0]
		var s sampler.Sampler
		if *preset != "" {
			s, err = sampler.LookupPreset(*preset)
		} else {
			s, err = sampler.LookupPolicy(*policy)
		}
		if err != nil {
			return usageErr(stderr, name, "%v", err)
		}
		out.Sampler = s.Name()
		imgs, plan, err := sampleFrames(pos[0], s, sampler.Request{Frames: *frames, SampleFPS: *sampleFPS, Seed: *seed}, decode.Options{NoAutorotate: *noRot})
		if err != nil {
			if errors.Is(err, sampler.ErrRequest) {
				return usageErr(stderr, name, "%v", err)
			}
			return failErr(stderr, name, err)
		}
		req.Frames, out.Indices, out.TimestampsS = imgs, plan.Indices, plan.TimestampsS
	}

	// llama.cpp logs through slog at INFO; keep stderr to warnings and errors.
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	rt, err := runtimes.Open(*spec)
	if err != nil {
		if errors.Is(err, llm.ErrBadSpec) || errors.Is(err, llm.ErrUnknownEngine) {
			return usageErr(stderr, name, "--runtime: %v", err)
		}
		return failErr(stderr, name, err)
	}
	defer rt.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	resp, err := rt.Answer(ctx, req)
	if err != nil {
		return failErr(stderr, name, err)
	}
	out.Response = resp
	if *asJSON {
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
		resp.Choice, strings.Join(probs, " "), resp.Template, len(req.Frames), resp.LatencyS, resp.Text)
	return exitOK
}

// sampleFrames plans the frame indices of video with s and decodes them (one forward pass), returning
// the frames in plan order (duplicates included).
func sampleFrames(video string, s sampler.Sampler, r sampler.Request, opts decode.Options) ([]*rgb.Image, sampler.Plan, error) {
	v, err := decode.Open(video, opts)
	if err != nil {
		return nil, sampler.Plan{}, err
	}
	defer v.Close()
	in := v.Info()
	plan, err := s.Plan(sampler.Video{Frames: in.Frames, FPS: in.FPS, DurationS: in.DurationS}, r)
	if err != nil {
		return nil, sampler.Plan{}, sampler.WithPath(err, video)
	}
	got := map[int]*rgb.Image{}
	if _, err := v.Read(plan.Indices, func(f *decode.Frame) error {
		got[f.Index] = f.Image.Clone() // the frame is borrowed until the callback returns
		return nil
	}); err != nil {
		return nil, plan, err
	}
	imgs := make([]*rgb.Image, len(plan.Indices))
	for i, idx := range plan.Indices {
		imgs[i] = got[idx]
	}
	return imgs, plan, nil
}
