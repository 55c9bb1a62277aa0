package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/sampler"
)

// planLoader is `plan VIDEO --loader NAME …`: the positions, counts, sizes and fallbacks the loader's
// reader gives for the request, from a plan-only run (it decodes as the reader does, converts nothing).
func planLoader(pos []string, set map[string]bool, lf *loaderFlags, res string, asJSON bool, stdout, stderr io.Writer) int {
	const name = "plan"
	if len(pos) != 1 {
		return usageErr(stderr, name, "--loader needs a VIDEO (the loader's reader decodes it)")
	}
	for _, f := range []string{"total-frames", "fps", "duration", "src-size", "grid", "preset", "policy", "sampler-seed", "force-sample", "start-s", "end-s", "stream", "no-autorotate"} {
		if set[f] {
			return usageErr(stderr, name, "--%s does not apply with --loader", f)
		}
	}
	req, err := lf.request()
	if err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	out, err := extract.PlanLoader(context.Background(), pos[0], *lf.name, req, res)
	var ue *extract.UsageError
	switch {
	case errors.As(err, &ue):
		return usageErr(stderr, name, "%v", err)
	case err != nil:
		return failErr(stderr, name, err)
	case asJSON:
		if err := writeJSON(stdout, out); err != nil {
			return failErr(stderr, name, err)
		}
		return exitOK
	}
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
	return exitOK
}

// listSamplers is `plan --list`: the presets, policies and loaders with their upstream sources.
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
