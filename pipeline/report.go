package pipeline

import (
	"math"

	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// PlanReport is the JSON of one sampling plan of one video: `framesweep plan --json` prints it, and
// serve's POST /v1/plan answers it followed by the object's fields (one wire type for both; the
// Python client reads it).
type PlanReport struct {
	Path        string  `json:"path,omitempty"` // "" when planned from a frame count, not a file
	TotalFrames int     `json:"total_frames"`
	FPS         float64 `json:"fps"`
	DurationS   float64 `json:"duration_s"`
	Count       int     `json:"count"`
	sampler.Selection
	Resolution   string `json:"resolution,omitempty"`    // canonical geometry spec, when one was asked for
	OutputSize   string `json:"output_size,omitempty"`   // WxH of the (first) image the model sees
	VisualTokens int    `json:"visual_tokens,omitempty"` // for Count frames, when the geometry defines tokens
	// LoaderResult: a harness loader's plan (its reader's counts, rate, fallbacks); Selection.Indices are
	// then its reader's positions and TotalFrames its frame count (docs/loaders.md).
	LoaderResult *LoaderSummary `json:"loader_result,omitempty"`
}

// NewPlanReport is the report of plan p for a video of v's frame count, rate and duration.
func NewPlanReport(path string, v sampler.Video, p sampler.Selection) PlanReport {
	return PlanReport{Path: path, TotalFrames: v.Frames, FPS: v.FPS, DurationS: v.Duration(), Count: len(p.Indices), Selection: p}
}

// NewLoaderReport is the report of a harness loader's result (a plan-only one is enough): its
// positions, their timestamps, the loader's frame count and rate.
func NewLoaderReport(path string, res *load.Result) PlanReport {
	s := loaderSummary(res)
	p := loaderPlan(res)
	dur := 0.0 // a reader that found no rate (a cut WebM: fps 0) gives no duration, not +Inf
	if d := (sampler.Video{Frames: res.Count, FPS: res.FPS}).Duration(); !math.IsInf(d, 0) && !math.IsNaN(d) {
		dur = d
	}
	return PlanReport{Path: path, TotalFrames: res.Count, FPS: res.FPS, DurationS: dur, Count: len(p.Indices), Selection: p, LoaderResult: &s}
}

// SetLayout fills the output size and the visual tokens of Count frames from one frame's layout.
func (r *PlanReport) SetLayout(l geom.Layout) {
	r.OutputSize = l.Output().String()
	r.VisualTokens = l.TokensFor(r.Count)
}
