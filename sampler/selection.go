package sampler

import (
	"fmt"
	"math"
)

// Video is what a sampler needs to know about a video: the decoded frame count, the average frame
// rate, and the duration in seconds (0 means Frames/FPS).
type Video struct {
	Frames    int
	FPS       float64
	DurationS float64
}

// Duration is DurationS, or Frames/FPS when DurationS is not set.
func (v Video) Duration() float64 {
	if v.DurationS > 0 {
		return v.DurationS
	}
	return float64(v.Frames) / v.FPS
}

// MaxFrames bounds a video's frame count and every frame budget a sampler accepts (2^22 frames: 38 h
// at 30 fps), so a mistyped count is an error instead of a multi-gigabyte index list.
const MaxFrames = 1 << 22

// MaxBudget is the largest frame budget a grid, a one-off request or an imported config may name
// (package grid checks grids against it; the importers their --frames).
const MaxBudget = 1 << 17

func (v Video) check(op string) error {
	if v.Frames < 1 || v.Frames > MaxFrames {
		return errf(ErrVideo, op, fmt.Sprintf("video has %d frames (want 1..%d)", v.Frames, MaxFrames))
	}
	if !(v.FPS > 0) || math.IsInf(v.FPS, 0) {
		return errf(ErrVideo, op, fmt.Sprintf("video fps %v is not a positive number", v.FPS))
	}
	if math.IsNaN(v.DurationS) || math.IsInf(v.DurationS, 0) || v.DurationS < 0 {
		return errf(ErrVideo, op, fmt.Sprintf("video duration %v is not a non-negative number", v.DurationS))
	}
	return nil
}

// Torch selects which torch.linspace float32 kernel is emulated by the qwen presets and the
// "uniform" policy (SAMPLING.md §1 "Bit-exactness of torch.linspace"). The variants differ only for
// long videos with many frames (1–2 of 768 indices on a 1-hour video).
type Torch string

const (
	// Torch2 is torch ≥ 2.0 on an AVX2/AVX512 CPU: scalar kernel, a+b*c contracted to FMA. Default.
	Torch2 Torch = "2"
	// Torch2NoFMA is the scalar kernel without FMA contraction (torch's DEFAULT-capability build).
	Torch2NoFMA Torch = "2-nofma"
	// Torch113AVX2 is torch ≤ 1.13 on AVX2: 8-lane vectorised kernel, lanes base + k·step without FMA
	// (checked against Debian's torch 1.13.1, torch_test.go).
	Torch113AVX2 Torch = "1.13-avx2"
	// Torch113AVX512 is torch ≤ 1.13 on AVX512: the same kernel with 16 lanes (not verified upstream).
	Torch113AVX512 Torch = "1.13-avx512"
)

// Request is what the caller asks of a sampler. Zero values mean "the sampler's default".
type Request struct {
	Frames      int     // frame budget n (nframes / num_segments / max_frames_num …)
	SampleFPS   float64 // sampling rate in frames per second, for samplers with an fps mode
	Seed        uint64  // random policies only
	MinFrames   int     // fps modes: lower clamp (0 = sampler default)
	MaxFrames   int     // fps modes: upper clamp (0 = sampler default)
	ForceLast   bool    // lmms-eval: force_include_last_frame
	ForceSample bool    // llava-video: force_sample
	Torch       Torch   // torch.linspace variant for the qwen presets and "uniform" ("" = Torch2)
	// Clip range in seconds (qwen-vl-utils video_start/video_end, InternVL bound); 0 = unset, so
	// EndS 0 means "to the end". Only the qwen2.5-vl, qwen3-vl and internvl3 presets take it.
	StartS float64
	EndS   float64
}

// Selection is the frames a sampler selects from one video: the frame indices in the order the
// upstream returns them, and their timestamps (index / fps) in seconds. (Its JSON is the "plan" of
// `framesweep plan` and serve's /v1/plan.)
type Selection struct {
	Preset           string    `json:"preset,omitempty"`
	Policy           string    `json:"policy,omitempty"`
	Loader           string    `json:"loader,omitempty"` // a harness loader's selection (its reader's positions)
	Indices          []int     `json:"indices"`
	TimestampsS      []float64 `json:"timestamps_s"`
	TimestampStrings []string  `json:"timestamp_strings,omitempty"` // as the upstream prompt writes them
	SampleFPS        float64   `json:"sample_fps,omitempty"`        // the upstream's reported sampling rate
	Notes            []string  `json:"notes,omitempty"`             // upstream quirks that applied
}

// Name is the preset, policy or loader name of the selection.
func (p Selection) Name() string {
	switch {
	case p.Preset != "":
		return p.Preset
	case p.Policy != "":
		return p.Policy
	}
	return p.Loader
}

// Sampler computes the frame indices of one video for one request.
type Sampler interface {
	Name() string
	// IsPreset reports whether the sampler reproduces a named upstream framework.
	IsPreset() bool
	// Modes reports whether the sampler takes a frame budget, a sampling fps, or both.
	Modes() (frames, fps bool)
	// NeedsFPS reports whether the fps mode is the only mode (a frame budget only caps it).
	NeedsFPS() bool
	Select(v Video, r Request) (Selection, error)
}

// newSelection fills the timestamps from the indices.
func newSelection(s Sampler, v Video, idx []int) Selection {
	p := Selection{Indices: idx, TimestampsS: make([]float64, len(idx))}
	if s.IsPreset() {
		p.Preset = s.Name()
	} else {
		p.Policy = s.Name()
	}
	for i, x := range idx {
		p.TimestampsS[i] = float64(x) / v.FPS
	}
	return p
}
