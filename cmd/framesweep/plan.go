package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// planVideo is what plan knows about the video: from the decode index scan, or from flags.
type planVideo struct {
	path string // "" with --total-frames
	v    sampler.Video
	src  pipeline.LocalSource // the video's decoder (what a Read of the union would decode); nil with --total-frames
	srcW int                  // displayed size, 0 when unknown
	srcH int
}

type gridConfigOutput struct {
	grid.Config
	OutputSize string             `json:"output_size,omitempty"`
	OutputErr  string             `json:"output_error,omitempty"` // the geometry rejects this video (e.g. aspect > 200)
	Plan       *sampler.Selection `json:"plan,omitempty"`
	Error      string             `json:"error,omitempty"`
}

type gridOutput struct {
	Grid        string              `json:"grid"`
	Name        string              `json:"name,omitempty"`
	Path        string              `json:"path,omitempty"`
	TotalFrames int                 `json:"total_frames"`
	FPS         float64             `json:"fps"`
	DurationS   float64             `json:"duration_s"`
	Configs     []gridConfigOutput  `json:"configs"`
	Dropped     []string            `json:"dropped,omitempty"`
	Union       sampler.UnionReport `json:"union"`
	Decode      decode.ReadCost     `json:"decode"`
	Failed      int                 `json:"failed"`
}

func runPlan(args []string, stdout, stderr io.Writer) int {
	const name = "plan"
	fs := newFlags(name, stderr)
	total := fs.Int("total-frames", 0, "frame count, instead of a VIDEO (with --fps)")
	fps := fs.Float64("fps", 0, "frame rate, with --total-frames")
	dur := fs.Float64("duration", 0, "duration in seconds, with --total-frames (default frames/fps)")
	preset := fs.String("preset", "", "preset: "+strings.Join(presetNames(), " "))
	policy := fs.String("policy", "", "policy: "+strings.Join(policyNames(), " "))
	frames := fs.Int("frames", 0, "frame budget n (nframes / num_segments / max_frames_num)")
	sampleFPS := fs.Float64("sample-fps", 0, "sampling rate for presets and policies with an fps mode")
	seed := fs.Uint64("seed", 0, "seed of the random policies (SplitMix64)")
	minF := fs.Int("min-frames", 0, "fps modes: lower clamp")
	maxF := fs.Int("max-frames", 0, "fps modes: upper clamp")
	forceLast := fs.Bool("force-last", false, "lmms-eval: force_include_last_frame")
	forceSample := fs.Bool("force-sample", false, "llava-video: force_sample")
	startS := fs.Float64("start-s", 0, "clip start in seconds (qwen2.5-vl/qwen3-vl video_start, internvl3 bound)")
	endS := fs.Float64("end-s", 0, "clip end in seconds (qwen2.5-vl/qwen3-vl video_end, internvl3 bound); 0 = to the end")
	torch := fs.String("torch", "", "torch.linspace variant: 2 (default), 2-nofma, 1.13-avx2, 1.13-avx512")
	res := fs.String("resolution", "", "geometry spec for output_size/visual_tokens (default: the preset's own, when it has one)")
	srcSize := fs.String("src-size", "", "WxH of the source, with --total-frames (for output sizes)")
	gridPath := fs.String("grid", "", "grid file: plan every config, the union and the decode plan")
	list := fs.Bool("list", false, "list presets, policies and loaders with their upstream sources")
	asJSON := fs.Bool("json", false, "JSON output")
	lf := &loaderFlags{name: addLoaderFlag(fs), frames: frames, sampleFPS: sampleFPS, forceLast: forceLast, minF: minF, maxF: maxF, torch: torch}
	addPixelFlags(fs, lf)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if *list {
		return listSamplers(stdout, *asJSON)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *lf.name != "" {
		return planLoader(pos, set, lf, *res, *asJSON, stdout, stderr)
	}
	for _, f := range []string{"image-patch-size", "min-pixels", "max-pixels", "total-pixels"} {
		if set[f] {
			return usageErr(stderr, name, "--%s needs --loader (a qwen-vl-utils loader)", f)
		}
	}
	if len(pos) > 1 {
		return usageErr(stderr, name, "one VIDEO at most, got %d arguments", len(pos))
	}
	if len(pos) == 1 && (set["total-frames"] || set["fps"] || set["duration"] || set["src-size"]) {
		return usageErr(stderr, name, "give a VIDEO or --total-frames/--fps, not both")
	}
	if len(pos) == 0 && (!set["total-frames"] || !set["fps"]) {
		return usageErr(stderr, name, "need a VIDEO, or --total-frames N and --fps F")
	}
	if *gridPath != "" {
		for _, f := range []string{"preset", "policy", "frames", "sample-fps", "seed", "min-frames", "max-frames", "force-last", "force-sample", "torch", "resolution", "start-s", "end-s"} {
			if set[f] {
				return usageErr(stderr, name, "--%s does not apply with --grid (the grid file sets it)", f)
			}
		}
	} else if (*preset == "") == (*policy == "") {
		return usageErr(stderr, name, "need exactly one of --preset or --policy (or --grid)")
	}

	if *res != "" { // a usage error, before any video is opened
		if _, err := geom.Parse(*res); err != nil {
			return usageErr(stderr, name, "--resolution: %v", err)
		}
	}

	var pv planVideo
	if len(pos) == 1 {
		pv, err = probeForPlan(pos[0])
		if err != nil {
			return failErr(stderr, name, err)
		}
		defer pv.src.Close()
	} else {
		pv.v = sampler.Video{Frames: *total, FPS: *fps, DurationS: *dur}
		if *srcSize != "" {
			if pv.srcW, pv.srcH, err = geom.ParseWxH(*srcSize); err != nil {
				return usageErr(stderr, name, "--src-size: %v", err)
			}
		}
	}
	where := pv.path
	if where == "" {
		where = fmt.Sprintf("--total-frames %d --fps %g", *total, *fps)
	}

	if *gridPath != "" {
		return planGrid(*gridPath, pv, where, *asJSON, stdout, stderr)
	}

	req := sampler.Request{Frames: *frames, SampleFPS: *sampleFPS, Seed: *seed, MinFrames: *minF, MaxFrames: *maxF,
		ForceLast: *forceLast, ForceSample: *forceSample, Torch: sampler.Torch(*torch), StartS: *startS, EndS: *endS}
	return planOne(pv, where, *preset, *policy, req, *res, *asJSON, stdout, stderr)
}

// planOne plans one preset or policy for pv and prints it (JSON or text). The output size is the
// geometry res names, else the geometry preset of the same name if any.
func planOne(pv planVideo, where, preset, policy string, req sampler.Request, res string, asJSON bool, stdout, stderr io.Writer) int {
	const name = "plan"
	var s sampler.Sampler
	var err error
	if preset != "" {
		s, err = sampler.LookupPreset(preset)
	} else {
		s, err = sampler.LookupPolicy(policy)
	}
	if err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	p, err := s.Select(pv.v, req)
	if err != nil {
		if errors.Is(err, sampler.ErrRequest) || errors.Is(err, sampler.ErrVideo) && pv.path == "" {
			return usageErr(stderr, name, "%v", err)
		}
		return failErr(stderr, name, sampler.WithPath(err, where))
	}
	out := pipeline.NewPlanReport(pv.path, pv.v, p)
	spec := res
	if spec == "" && preset != "" {
		if _, err := geom.Parse(preset); err == nil {
			spec = preset
		}
	}
	if spec != "" {
		g, err := geom.Parse(spec)
		if err != nil {
			return usageErr(stderr, name, "--resolution: %v", err)
		}
		out.Resolution = g.String()
		if pv.srcW > 0 && len(p.Indices) > 0 {
			l, err := g.Layout(pv.srcW, pv.srcH, len(p.Indices))
			if err != nil {
				return failErr(stderr, name, fmt.Errorf("%s: %w", where, err))
			}
			out.SetLayout(l)
		}
	}
	if asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return failErr(stderr, name, err)
		}
		return exitOK
	}
	printPlan(stdout, out, pv)
	return exitOK
}

// printPlan is plan's text output.
func printPlan(stdout io.Writer, out pipeline.PlanReport, pv planVideo) {
	p := out.Selection
	fmt.Fprintf(stdout, "%s %s: %d of %d frames (%g fps, %.3f s)\n", kindOf(p), p.Name(), len(p.Indices), pv.v.Frames, pv.v.FPS, pv.v.Duration())
	fmt.Fprintf(stdout, "indices: %s\n", joinInts(p.Indices))
	fmt.Fprintf(stdout, "timestamps_s: %s\n", joinFloats(p.TimestampsS))
	if len(p.TimestampStrings) > 0 {
		fmt.Fprintf(stdout, "timestamp_strings: %s\n", strings.Join(p.TimestampStrings, " "))
	}
	if out.OutputSize != "" {
		fmt.Fprintf(stdout, "output: %s (%s), %d visual tokens\n", out.OutputSize, out.Resolution, out.VisualTokens)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
}

func planGrid(path string, pv planVideo, where string, asJSON bool, stdout, stderr io.Writer) int {
	const name = "plan"
	g, err := grid.Load(path)
	if err != nil {
		return failErr(stderr, name, err)
	}
	cps, err := planConfigs(g, pv)
	if err != nil {
		return failErr(stderr, name, err)
	}
	out := gridOutput{Grid: path, Name: g.Spec.Name, Path: pv.path, TotalFrames: pv.v.Frames, FPS: pv.v.FPS,
		DurationS: pv.v.Duration(), Dropped: g.Dropped}
	var plans []sampler.Selection
	var firstErr error
	for _, cp := range cps {
		co := gridConfigOutput{Config: cp.Config}
		if cp.Err != nil {
			out.Failed++
			co.Error = cp.Err.Error()
			if firstErr == nil {
				firstErr = cp.Err
			}
		} else {
			p := cp.Selection
			co.Plan = &p
			plans = append(plans, p)
			srcW, srcH := pv.srcW, pv.srcH
			if cp.size[0] > 0 { // a loader's frames (or qwen-vl-utils' resized frames)
				srcW, srcH = cp.size[0], cp.size[1]
			}
			if gm := cp.Config.Geometry(); gm != nil && srcW > 0 && len(p.Indices) > 0 {
				if l, err := gm.Layout(srcW, srcH, len(p.Indices)); err == nil {
					co.OutputSize = l.Output().String()
				} else {
					co.OutputErr = err.Error()
				}
			}
		}
		out.Configs = append(out.Configs, co)
	}
	out.Union = sampler.Union(plans...)
	// What decoding the union costs: the decoder's own plan of that Read (the seek rule a sweep or
	// extract runs), or one pass from frame 0 when there is no index to plan with.
	out.Decode = decode.ForwardCost(out.Union.Indices)
	switch {
	case loaderGrid(g): // positions in the loader's own reading, not framesweep's frame indices
		where += " (loader " + g.Spec.Loader + ": positions as its reader numbers frames)"
	case pv.src != nil:
		if out.Decode, err = pv.src.ReadCost(out.Union.Indices); err != nil {
			return failErr(stderr, name, err)
		}
	}
	if asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return failErr(stderr, name, err)
		}
	} else {
		fmt.Fprintf(stdout, "grid %s: %d configs for %s (%d frames, %g fps)\n", path, len(out.Configs), where, pv.v.Frames, pv.v.FPS)
		for _, c := range out.Configs {
			if c.Error != "" {
				fmt.Fprintf(stdout, "%-40s error: %s\n", c.ID, c.Error)
				continue
			}
			extra := ""
			if c.OverContext {
				extra = " [over context]"
			}
			if c.IsoGroup != "" {
				extra += " [" + c.IsoGroup + "]"
			}
			if c.OutputErr != "" {
				extra += " [resolution: " + c.OutputErr + "]"
			}
			fmt.Fprintf(stdout, "%-40s %3d frames%s: %s\n", c.ID, len(c.Plan.Indices), extra, joinInts(c.Plan.Indices))
		}
		for _, d := range out.Dropped {
			fmt.Fprintf(stdout, "%-40s dropped: above the model context\n", d)
		}
		fmt.Fprintf(stdout, "union: %d frames (%d requested, %d shared)\n", out.Union.Size, out.Union.Requested, out.Union.Shared)
		seeks := "unknown (no keyframe index)"
		if out.Decode.Seeks != nil {
			seeks = strconv.Itoa(*out.Decode.Seeks)
		}
		fmt.Fprintf(stdout, "decode: %d frames to decode, %d decoded in one pass, seeks %s\n", out.Decode.FramesToDecode, out.Decode.FramesDecoded, seeks)
	}
	if firstErr != nil {
		fmt.Fprintf(stderr, "framesweep plan: %s: %d of %d configs cannot be planned for %s; first: %s\n",
			path, out.Failed, len(out.Configs), where, strings.ReplaceAll(firstErr.Error(), "\n", " "))
		return exitError
	}
	return exitOK
}

// probeForPlan runs the decode index scan (no decoding) through the engine's source layer for the
// frame count, fps and size, and keeps the decoder open for what decoding the union costs (the
// caller closes pv.src).
func probeForPlan(path string) (planVideo, error) {
	v, src, err := pipeline.OpenLocal(context.Background(), pipeline.VideoRef{Path: path}, pipeline.Options{})
	if err != nil {
		return planVideo{}, err
	}
	in := v.Info
	return planVideo{path: path, v: sampler.Video{Frames: in.Frames, FPS: in.FPS, DurationS: in.DurationS},
		src: src, srcW: in.OutWidth, srcH: in.OutHeight}, nil
}

func listSamplers(stdout io.Writer, asJSON bool) int {
	cat := sampler.Catalog()
	if asJSON {
		if err := writeJSON(stdout, cat); err != nil {
			return exitError
		}
		return exitOK
	}
	for _, in := range cat {
		kind := "policy"
		if in.Preset {
			kind = "preset"
		}
		fmt.Fprintf(stdout, "%-6s %-16s %s\n", kind, in.Name, in.Summary)
		if in.Upstream != "" {
			fmt.Fprintf(stdout, "       %-16s upstream: %s\n", "", in.Upstream)
		}
	}
	listLoaders(stdout)
	return exitOK
}

func presetNames() []string { return catalogNames(true) }
func policyNames() []string { return catalogNames(false) }

func catalogNames(preset bool) []string {
	var out []string
	for _, in := range sampler.Catalog() {
		if in.Preset == preset {
			out = append(out, in.Name)
		}
	}
	return out
}

func kindOf(p sampler.Selection) string {
	if p.Preset != "" {
		return "preset"
	}
	return "policy"
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, " ")
}

func joinFloats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strings.Join(parts, " ")
}
