package llm

import (
	"math"
	"strconv"
)

// Input modes: how a runtime hands the frames to the model (spec key input=, Response.InputMode).
const (
	// InputImages: each frame is an independent image (one image_url part per frame, one mtmd image
	// per frame).
	InputImages = "images"
	// InputVideo: the frames are one video, read the way the model's own video processor reads it
	// (Qwen's temporal pairs and time positions, Qwen3-VL's timestamps, InternVL's frame lines; a
	// server's video item).
	InputVideo = "video"
)

// VideoTiming places a request's frames in time, as a video processor needs them: Qwen2.5-VL's
// temporal positions (second_per_grid_t = 2/fps), Qwen3-VL's `<t.t seconds>` text, a server's video
// metadata (fps, frames_indices, total_num_frames). TimestampsS is required; the rest is optional and
// is passed on when given.
type VideoTiming struct {
	TimestampsS []float64 `json:"timestamps_s"`           // presentation time of each frame, seconds, one per frame
	Indices     []int     `json:"indices,omitempty"`      // source frame index of each frame
	SourceFPS   float64   `json:"source_fps,omitempty"`   // the video's own frame rate
	TotalFrames int       `json:"total_frames,omitempty"` // frames in the source video
	// SampleFPS is the rate the model's processor is told the frames were sampled at (qwen-vl-utils'
	// sample_fps; HF Qwen2.5-VL's fps kwarg); 0: derived (FPS).
	SampleFPS float64 `json:"sample_fps,omitempty"`
}

// FPS sources (Response: how VideoFPS was found).
const (
	FPSGiven      = "given"      // VideoTiming.SampleFPS
	FPSSampled    = "sample_fps" // n / TotalFrames × SourceFPS, qwen-vl-utils fetch_video's sample_fps
	FPSTimestamps = "timestamps" // (n-1) / (last - first timestamp)
)

// check validates the timing of n frames.
func (v *VideoTiming) check(n int) error {
	if len(v.TimestampsS) != n {
		return Errorf("answer", "", ErrBadRequest, "video timing: %d timestamps for %d frames", len(v.TimestampsS), n)
	}
	if v.Indices != nil && len(v.Indices) != n {
		return Errorf("answer", "", ErrBadRequest, "video timing: %d indices for %d frames", len(v.Indices), n)
	}
	for i, t := range v.TimestampsS {
		if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 || (i > 0 && t < v.TimestampsS[i-1]) {
			return Errorf("answer", "", ErrBadRequest, "video timing: timestamp %d (%v) is not a finite time ≥ the one before", i, t)
		}
	}
	for i, x := range v.Indices {
		if x < 0 || (i > 0 && x < v.Indices[i-1]) || (v.TotalFrames > 0 && x >= v.TotalFrames) {
			return Errorf("answer", "", ErrBadRequest, "video timing: index %d (%d) out of order or past %d frames", i, x, v.TotalFrames)
		}
	}
	for name, x := range map[string]float64{"source_fps": v.SourceFPS, "sample_fps": v.SampleFPS} {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return Errorf("answer", "", ErrBadRequest, "video timing: %s %v", name, x)
		}
	}
	if v.TotalFrames < 0 || (v.TotalFrames > 0 && v.TotalFrames < n && v.Indices != nil) {
		return Errorf("answer", "", ErrBadRequest, "video timing: total_frames %d for %d frames", v.TotalFrames, n)
	}
	return nil
}

// FPS returns the sampling rate a video processor is told for n frames and where it came from:
// SampleFPS when given; else qwen-vl-utils' sample_fps, n / TotalFrames × SourceFPS
// (qwen_vl_utils/vision_process.py, fetch_video), when both are known; else the timestamps'
// rate, (n-1) / (last - first). It fails when none of these exists (one frame and no fps).
func (v *VideoTiming) FPS(n int) (float64, string, error) {
	switch {
	case v.SampleFPS > 0:
		return v.SampleFPS, FPSGiven, nil
	case v.SourceFPS > 0 && v.TotalFrames > 0:
		return float64(n) / float64(v.TotalFrames) * v.SourceFPS, FPSSampled, nil
	case n > 1 && len(v.TimestampsS) == n && v.TimestampsS[n-1] > v.TimestampsS[0]:
		return float64(n-1) / (v.TimestampsS[n-1] - v.TimestampsS[0]), FPSTimestamps, nil
	}
	return 0, "", Errorf("answer", "", ErrBadRequest, "video timing: no sample_fps, no source_fps+total_frames, and the %d timestamp(s) span no time", n)
}

// VisualGroup is one unit the model's vision encoder saw and where its tokens sit: a frame (images
// mode, InternVL), or a temporal pair of frames (Qwen video mode: both frames through the two
// Conv3D patch kernels; an odd count repeats the last frame).
type VisualGroup struct {
	Frames []int `json:"frames"` // indices into Request.Frames
	Tokens int   `json:"tokens"` // visual tokens (embeddings) it became
	GridH  int   `json:"grid_h"` // merged token rows (M-RoPE); 1 otherwise
	GridW  int   `json:"grid_w"` // merged token columns (M-RoPE); the token count otherwise
	// PosStart is the position its tokens start from: under M-RoPE a token in row r, column c has
	// (t, h, w) = (PosT, PosStart+r, PosStart+c); with 1-D positions the tokens take
	// PosStart, PosStart+1, ….
	PosStart int `json:"pos_start"`
	// PosT is the M-RoPE temporal position of its tokens: PosStart for an image or a Qwen3-VL pair,
	// PosStart + ⌊group × second_per_grid_t × tokens_per_second⌋ in a Qwen2.5-VL video.
	PosT int `json:"pos_t"`
	// Prefix is the text written just before it: Qwen3-VL's "<1.3 seconds>", InternVL's "Frame3: ".
	Prefix string `json:"prefix,omitempty"`
}

// TimestampText is Qwen3-VL's timestamp for a frame pair, "<%.1f seconds>" (Python's %.1f and Go's
// 'f' format both round correctly).
func TimestampText(t float64) string {
	return "<" + strconv.FormatFloat(t, 'f', 1, 64) + " seconds>"
}

// PairTimes returns the time of each temporal pair of frames, as transformers' Qwen3VLProcessor
// computes it (processing_qwen3_vl.py, _calculate_timestamps): the list padded to even length by
// repeating the last time, then the mean of each pair's first and last.
func PairTimes(ts []float64) []float64 {
	if len(ts) == 0 {
		return nil
	}
	p := append([]float64(nil), ts...)
	if len(p)%2 == 1 {
		p = append(p, p[len(p)-1])
	}
	out := make([]float64, len(p)/2)
	for i := range out {
		out[i] = (p[2*i] + p[2*i+1]) / 2
	}
	return out
}
