package main

import (
	"context"
	"fmt"
	"io"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize/geom"
)

// configPlan is one grid config's plan; size is the frames' size when a loader gave them (its
// reader's frames, or qwen-vl-utils' resized frames), else zero (the video's).
type configPlan struct {
	grid.ConfigSelection
	size [2]int
}

// planConfigs plans every config of g for pv: by the sampler, or, in a loader grid, by one plan-only
// run of the loader's reader over the video for all configs (it decodes: a VIDEO is needed).
func planConfigs(g *grid.Grid, pv planVideo) ([]configPlan, error) {
	var out []configPlan
	name := g.Spec.Loader
	if !loaderGrid(g) {
		for _, cp := range g.SelectAll(pv.v) {
			out = append(out, configPlan{ConfigSelection: cp})
		}
		return out, nil
	}
	if pv.path == "" {
		return nil, fmt.Errorf("loader %s picks its frames by decoding the video: give a VIDEO, not --total-frames", name)
	}
	reqs := make([]loader.Request, len(g.Configs))
	for i := range g.Configs {
		reqs[i] = pipeline.LoaderRequest(&g.Configs[i])
	}
	res, errs, err := pipeline.RunLoader(context.Background(), pipeline.VideoRef{Path: pv.path}, name, reqs, load.Options{PlanOnly: true})
	if err != nil {
		return nil, err
	}
	for i, c := range g.Configs {
		cp := configPlan{ConfigSelection: grid.ConfigSelection{Config: c, Err: errs[i]}}
		if r := res[i]; r != nil {
			cp.Selection = pipeline.NewLoaderReport(pv.path, r).Selection
			cp.size = loadedSize(r)
		}
		out = append(out, cp)
	}
	return out, nil
}

// loaderGrid reports whether g's configs are a harness loader's.
func loaderGrid(g *grid.Grid) bool {
	return len(g.Configs) > 0 && g.Configs[0].Loader != ""
}

// loadedSize is the size of the frames a loader hands the model's processor.
func loadedSize(r *load.Result) [2]int {
	if r.ResizedW > 0 {
		return [2]int{r.ResizedW, r.ResizedH}
	}
	return [2]int{r.Width, r.Height}
}

// loaderPlanOutput is `plan VIDEO --loader NAME --json`: the plan report (positions as indices,
// their timestamps, the loader's count and rate, loader_result) and the loader's description.
type loaderPlanOutput struct {
	pipeline.PlanReport
	Spec loader.Spec `json:"loader_spec"`
}

// planLoader is `plan VIDEO --loader NAME …`: the positions, counts, sizes and fallbacks the loader's
// reader gives for the request, from a plan-only run (it decodes as the reader does, converts nothing).
func planLoader(pos []string, set map[string]bool, lf *loaderFlags, res string, asJSON bool, stdout, stderr io.Writer) int {
	const name = "plan"
	if len(pos) != 1 {
		return usageErr(stderr, name, "--loader needs a VIDEO (the loader's reader decodes it)")
	}
	for _, f := range []string{"total-frames", "fps", "duration", "src-size", "grid", "preset", "policy", "seed", "force-sample", "start-s", "end-s"} {
		if set[f] {
			return usageErr(stderr, name, "--%s does not apply with --loader", f)
		}
	}
	req, err := lf.request()
	if err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	var g geom.Geometry
	if res != "" {
		if g, err = geom.Parse(res); err != nil {
			return usageErr(stderr, name, "--resolution: %v", err)
		}
	}
	spec, _ := loader.Lookup(*lf.name)
	results, errs, err := pipeline.RunLoader(context.Background(), pipeline.VideoRef{Path: pos[0]}, *lf.name, []loader.Request{req}, load.Options{PlanOnly: true})
	if err == nil {
		err = errs[0]
	}
	if err != nil {
		return failErr(stderr, name, err)
	}
	r := results[0]
	out := loaderPlanOutput{PlanReport: pipeline.NewLoaderReport(pos[0], r), Spec: spec}
	if g != nil {
		sz := loadedSize(r)
		l, err := g.Layout(sz[0], sz[1], len(r.Frames))
		if err != nil {
			return failErr(stderr, name, fmt.Errorf("%s: %w", pos[0], err))
		}
		out.Resolution = g.String()
		out.SetLayout(l)
	}
	if asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return failErr(stderr, name, err)
		}
		return exitOK
	}
	printLoaderPlan(stdout, out)
	return exitOK
}

// printLoaderPlan is `plan --loader`'s text output.
func printLoaderPlan(stdout io.Writer, out loaderPlanOutput) {
	r := out.LoaderResult
	fmt.Fprintf(stdout, "loader %s: %d of %d frames (count from %s, %g fps, stream %d)\n", r.Loader, out.Count, r.Count, r.CountFrom, r.FPS, r.StreamIndex)
	fmt.Fprintf(stdout, "positions: %s\n", joinInts(out.Indices))
	fmt.Fprintf(stdout, "timestamps_s: %s\n", joinFloats(out.TimestampsS))
	size := fmt.Sprintf("%dx%d", r.Width, r.Height)
	if r.ResizedW > 0 {
		size += fmt.Sprintf(", resized %dx%d", r.ResizedW, r.ResizedH)
	}
	fmt.Fprintf(stdout, "frames: %s\n", size)
	if out.OutputSize != "" {
		fmt.Fprintf(stdout, "output: %s (%s)\n", out.OutputSize, out.Resolution)
	}
	for _, n := range out.Notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
}

// listLoaders is `plan --list`'s loader lines.
func listLoaders(stdout io.Writer) {
	for _, s := range loader.Catalog() {
		v := "unverified"
		if s.Verified {
			v = "verified"
		}
		fmt.Fprintf(stdout, "%-6s %-24s %s: stream %s, colour %s, count %s (%s)\n", "loader", s.Name, s.Reader, s.Stream, s.Colour, s.Count, v)
		for _, u := range s.Upstream {
			fmt.Fprintf(stdout, "       %-24s upstream: %s\n", "", u)
		}
	}
}
