package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// planFlags are plan's flags besides the loader's (frames_loader.go).
type planFlags struct {
	total                          *int
	fps, dur, startS, endS         *float64
	preset, policy, res, src, grid *string
	seed                           *uint64
	forceSample, list, asJSON      *bool
	lf                             *loaderFlags
	dec                            *decodeFlags
}

func (f *planFlags) register(fs *flag.FlagSet) {
	f.total = fs.Int("total-frames", 0, "frame count, instead of a VIDEO (with --fps)")
	f.fps = fs.Float64("fps", 0, "frame rate, with --total-frames")
	f.dur = fs.Float64("duration", 0, "duration in seconds, with --total-frames (default frames/fps)")
	f.preset = fs.String("preset", "", "preset: "+strings.Join(presetNames(), " "))
	f.policy = fs.String("policy", "", "policy: "+strings.Join(policyNames(), " "))
	frames := fs.Int("frames", 0, "frame budget n (nframes / num_segments / max_frames_num)")
	sampleFPS := fs.Float64("sample-fps", 0, "sampling rate for presets and policies with an fps mode")
	f.seed = fs.Uint64("sampler-seed", 0, samplerSeedHelp)
	deprecate(fs, "seed", "--sampler-seed", "sampler-seed")
	minF := fs.Int("min-frames", 0, "fps modes: lower clamp")
	maxF := fs.Int("max-frames", 0, "fps modes: upper clamp")
	forceLast := fs.Bool("force-last", false, "lmms-eval: force_include_last_frame")
	f.forceSample = fs.Bool("force-sample", false, "llava-video: force_sample")
	f.startS = fs.Float64("start-s", 0, "clip start in seconds (qwen2.5-vl/qwen3-vl video_start, internvl3 bound)")
	f.endS = fs.Float64("end-s", 0, "clip end in seconds (qwen2.5-vl/qwen3-vl video_end, internvl3 bound); 0 = to the end")
	torch := fs.String("torch", "", "torch.linspace variant: 2 (default), 2-nofma, 1.13-avx2, 1.13-avx512")
	f.res = fs.String("resolution", "", "geometry spec for output_size/visual_tokens (default: the preset's own, when it has one)")
	f.src = fs.String("src-size", "", "WxH of the source, with --total-frames (for output sizes)")
	f.grid = fs.String("grid", "", "grid file: plan every config as extract does, the union and the decode plan")
	f.list = fs.Bool("list", false, "list presets, policies and loaders with their upstream sources")
	f.asJSON = addJSON(fs, false)
	f.lf = &loaderFlags{name: addLoaderFlag(fs), frames: frames, sampleFPS: sampleFPS, forceLast: forceLast, minF: minF, maxF: maxF, torch: torch}
	addPixelFlags(fs, f.lf)
	f.dec = addDecodeFlags(fs, dIndexOnly)
}

// request is the sampling request the flags make.
func (f *planFlags) request() sampler.Request {
	l := f.lf
	return sampler.Request{Frames: *l.frames, SampleFPS: *l.sampleFPS, Seed: *f.seed, MinFrames: *l.minF, MaxFrames: *l.maxF,
		ForceLast: *l.forceLast, ForceSample: *f.forceSample, Torch: sampler.Torch(*l.torch), StartS: *f.startS, EndS: *f.endS}
}

func runPlan(args []string, stdout, stderr io.Writer) int {
	const name = "plan"
	fs := newFlags(name, stderr)
	var f planFlags
	f.register(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if *f.list {
		return listSamplers(stdout, *f.asJSON)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if *f.lf.name != "" {
		return planLoader(pos, set, f.lf, *f.res, *f.asJSON, stdout, stderr)
	}
	subj, bad := f.subject(pos, set)
	if bad != "" {
		return usageErr(stderr, name, "%s", bad)
	}
	o, err := f.dec.d.Options()
	if err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	ctx := context.Background()
	if *f.grid != "" {
		g, err := grid.Load(*f.grid)
		if err != nil {
			return failErr(stderr, name, err)
		}
		p, err := extract.PlanGrid(ctx, g, *f.grid, subj, o)
		if err != nil {
			return failErr(stderr, name, err)
		}
		return printGridPlan(p, subj, *f.asJSON, stdout, stderr)
	}
	p, err := extract.PlanOne(ctx, subj, *f.preset, *f.policy, f.request(), *f.res, o)
	var ue *extract.UsageError
	switch {
	case errors.As(err, &ue):
		return usageErr(stderr, name, "%v", err)
	case err != nil:
		return failErr(stderr, name, err)
	case *f.asJSON:
		if err := writeJSON(stdout, p); err != nil {
			return failErr(stderr, name, err)
		}
		return exitOK
	}
	printPlan(stdout, p)
	return exitOK
}

// subject checks the flags that say what is planned, and returns it; a non-empty string is bad usage.
func (f *planFlags) subject(pos []string, set map[string]bool) (extract.Subject, string) {
	for _, n := range []string{"image-patch-size", "min-pixels", "max-pixels", "total-pixels"} {
		if set[n] {
			return extract.Subject{}, fmt.Sprintf("--%s needs --loader (a qwen-vl-utils loader)", n)
		}
	}
	switch {
	case len(pos) > 1:
		return extract.Subject{}, fmt.Sprintf("one VIDEO at most, got %d arguments", len(pos))
	case len(pos) == 1 && (set["total-frames"] || set["fps"] || set["duration"] || set["src-size"]):
		return extract.Subject{}, "give a VIDEO or --total-frames/--fps, not both"
	case len(pos) == 0 && (!set["total-frames"] || !set["fps"]):
		return extract.Subject{}, "need a VIDEO, or --total-frames N and --fps F"
	case len(pos) == 0 && f.dec.given(set) != "":
		return extract.Subject{}, fmt.Sprintf("--%s needs a VIDEO", f.dec.given(set))
	}
	if *f.grid != "" {
		for _, n := range []string{"preset", "policy", "frames", "sample-fps", "sampler-seed", "min-frames", "max-frames", "force-last", "force-sample", "torch", "resolution", "start-s", "end-s"} {
			if set[n] {
				return extract.Subject{}, fmt.Sprintf("--%s does not apply with --grid (the grid file sets it)", n)
			}
		}
	} else if (*f.preset == "") == (*f.policy == "") {
		return extract.Subject{}, "need exactly one of --preset or --policy (or --grid)"
	}
	if *f.res != "" { // a usage error, before any video is opened
		if _, err := geom.Parse(*f.res); err != nil {
			return extract.Subject{}, fmt.Sprintf("--resolution: %v", err)
		}
	}
	if len(pos) == 1 {
		return extract.Subject{Path: pos[0]}, ""
	}
	s := extract.Subject{Frames: *f.total, FPS: *f.fps, DurationS: *f.dur}
	if *f.src != "" {
		var err error
		if s.Width, s.Height, err = geom.ParseWxH(*f.src); err != nil {
			return s, fmt.Sprintf("--src-size: %v", err)
		}
	}
	return s, ""
}

// printPlan is plan's text output.
func printPlan(stdout io.Writer, out *extract.OnePlan) {
	p := out.Selection
	fmt.Fprintf(stdout, "%s %s: %d of %d frames (%g fps, %.3f s)\n", out.Kind, p.Name(), len(p.Indices), out.TotalFrames, out.FPS, out.DurationS)
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

// printGridPlan prints `plan --grid` (JSON or text); a config that cannot be planned is exit 1, with
// the JSON printed all the same.
func printGridPlan(out *extract.GridPlan, subj extract.Subject, asJSON bool, stdout, stderr io.Writer) int {
	where := subj.Where()
	if out.Loader != "" { // positions in the loader's own reading, not framesweep's frame indices
		where += " (loader " + out.Loader + ": positions as its reader numbers frames)"
	}
	if asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return failErr(stderr, "plan", err)
		}
	} else {
		fmt.Fprintf(stdout, "grid %s: %d configs for %s (%d frames, %g fps)\n", out.Grid, len(out.Configs), where, out.TotalFrames, out.FPS)
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
	if err := out.FirstError(); err != nil {
		fmt.Fprintf(stderr, "framesweep plan: %s: %d of %d configs cannot be planned for %s; first: %s\n",
			out.Grid, out.Failed, len(out.Configs), where, strings.ReplaceAll(err.Error(), "\n", " "))
		return exitError
	}
	return exitOK
}
