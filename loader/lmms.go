package loader

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/framesweep/framesweep/sampler"
)

// Rate is a frame rate as the container states it (PyAV's Fraction); Num or Den 0 means none
// (PyAV's average_rate is None).
type Rate struct {
	Num, Den int
}

// Valid reports whether the rate exists (PyAV would give a Fraction).
func (r Rate) Valid() bool { return r.Num != 0 && r.Den != 0 }

// Float64 is float(Fraction).
func (r Rate) Float64() float64 {
	if !r.Valid() {
		return 0
	}
	return float64(r.Num) / float64(r.Den)
}

// LmmsPlan is what lmms-eval's read_video (PyAV) will keep of a video, decided before decoding.
type LmmsPlan struct {
	// AllFrames: read_video returns every decoded frame (record_video_length_packet), why in Reason.
	AllFrames bool
	Reason    string
	// Indices: the positions (in decoder output order) kept while decoding, ascending and distinct;
	// decoding stops after the last one. Positions past the end of the stream are simply not found.
	Indices []int
	// Sampled is read_video's sampled_frm (before duplicates collapse).
	Sampled int
}

// LmmsEvalPlan is load_video_stream's selection (lmms-eval read_video, PyAV backend) for the video at
// path (the string the harness passes: its "webm"/"mkv" test looks at the whole path), whose first
// video stream's header says frames (stream.frames) and rate (stream.average_rate). Request.Frames is
// num_frm (0 = 32), SampleFPS is fps (0 = None), ForceLast is force_include_last_frame.
func LmmsEvalPlan(path string, frames int64, rate Rate, r Request) LmmsPlan {
	if strings.Contains(path, "webm") || strings.Contains(path, "mkv") {
		return LmmsPlan{AllFrames: true, Reason: "the path contains \"webm\" or \"mkv\": record_video_length_packet returns every frame"}
	}
	num := int64(r.Frames)
	if num == 0 {
		num = 32
	}
	if r.SampleFPS > 0 {
		if !rate.Valid() {
			return LmmsPlan{AllFrames: true, Reason: "the stream has no average rate: frames / None raises inside the sampling path, which falls back to every frame"}
		}
		// video_length = total_frames / frame_rate is a Fraction; Fraction * float is float(Fraction) * float.
		length, _ := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(frames), big.NewInt(int64(rate.Den))), big.NewInt(int64(rate.Num))).Float64()
		num = min(num, int64(math.Trunc(length*r.SampleFPS)))
	}
	sampled := min(frames, num)
	switch {
	case frames <= 0:
		return LmmsPlan{AllFrames: true, Reason: "the header gives no frame count (stream.frames = 0): an empty index list raises inside the sampling path, which falls back to every frame"}
	case sampled <= 0:
		return LmmsPlan{AllFrames: true, Reason: fmt.Sprintf("no frame is sampled (min(%d, %d) = %d): the sampling path raises and falls back to every frame", frames, num, sampled)}
	case frames > sampler.MaxFrames:
		return LmmsPlan{AllFrames: true, Reason: fmt.Sprintf("the header claims %d frames (over %d): treated as no usable count", frames, sampler.MaxFrames)}
	}
	N, n := int(frames), int(sampled)
	idx := sampler.FloorLinspace(0, N-1, n)
	if r.ForceLast && !contains(idx, N-1) {
		idx = append(sampler.FloorLinspace(0, N-2, n-1), N-1)
	}
	return LmmsPlan{Indices: sortedDistinct(idx), Sampled: n}
}

// LmmsEvalTorchcodecPlan is read_video_torchcodec's selection: sampled = max(1, min(frames, num_frm,
// int(frames/fps_video·fps))), indices np.unique(np.linspace(0, frames-1, sampled, dtype=int)) with
// the force-last rule, over torchcodec's frame count (metadata.num_frames) and average_fps.
func LmmsEvalTorchcodecPlan(frames int, fpsVideo float64, r Request) ([]int, error) {
	if frames <= 0 {
		return nil, errf(ErrUpstream, LmmsEvalTorchcodec, "no frames: _compute_uniform_indices raises")
	}
	num := r.Frames
	if num == 0 {
		num = 32
	}
	sampled := min(frames, num)
	if r.SampleFPS > 0 && fpsVideo > 0 {
		sampled = min(sampled, int(float64(frames)/fpsVideo*r.SampleFPS))
	}
	sampled = max(1, sampled)
	idx := sampler.FloorLinspace(0, frames-1, sampled)
	if r.ForceLast && !contains(idx, frames-1) {
		if sampled <= 1 {
			idx = []int{frames - 1}
		} else {
			idx = append(sampler.FloorLinspace(0, max(0, frames-2), sampled-1), frames-1)
		}
	}
	return sortedDistinct(idx), nil
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// sortedDistinct sorts (np.linspace output is already ascending) and drops repeats.
func sortedDistinct(idx []int) []int {
	out := make([]int, 0, len(idx))
	for i, x := range idx {
		if i == 0 || x != idx[i-1] {
			out = append(out, x)
		}
	}
	return out
}
