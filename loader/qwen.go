package loader

import (
	"errors"
	"fmt"
	"sort"

	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// TorchvisionFrames is torchvision 0.14's read_video (pyav backend, start 0, no end) over one pass
// of decoded frames: pts[k] is the k-th decoder output's pts (has[k] false when it had none).
// _read_from_stream keeps frames in a dict keyed by pts (a later frame replaces an earlier one with
// the same pts), then returns those with 0 ≤ pts sorted by pts. It returns the decoder output
// ordinals read_video's frames come from, in the order it returns them.
func TorchvisionFrames(pts []int64, has []bool) ([]int, error) {
	last := make(map[int64]int, len(pts))
	for k, p := range pts {
		if !has[k] {
			return nil, errf(ErrUpstream, QwenVLUtils, "decoded frame %d has no pts: torchvision's read_video raises TypeError (None does not compare with int)", k)
		}
		last[p] = k
	}
	keys := make([]int64, 0, len(last))
	for p := range last {
		if p >= 0 {
			keys = append(keys, p)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := make([]int, len(keys))
	for i, p := range keys {
		out[i] = last[p]
	}
	return out, nil
}

// QwenFrames is qwen-vl-utils' smart_nframes + torch.linspace(0, T-1, n).round() over T frames at
// fps (the torchvision reader's count and info["video_fps"]; the decord and torchcodec readers' own
// count and rate), and the sample_fps fetch_video reports. nframes outside [2, T] is ErrUpstream
// (upstream raises ValueError).
func QwenFrames(name string, T int, fps float64, r Request) (idx []int, sampleFPS float64, err error) {
	if T < 1 {
		return nil, 0, errf(ErrUpstream, name, "the reader returned no frames: smart_nframes raises (nframes should be in [2, 0])")
	}
	if !(fps > 0) {
		return nil, 0, errf(ErrUpstream, name, "the stream has no average rate: qwen-vl-utils cannot compute nframes (video_fps %v)", fps)
	}
	s, _ := sampler.LookupPreset("qwen3-vl") // qwen-vl-utils 0.0.14: the oracle's version
	p, err := s.Select(sampler.Video{Frames: T, FPS: fps}, sampler.Request{Frames: r.Frames, SampleFPS: r.SampleFPS,
		MinFrames: r.MinFrames, MaxFrames: r.MaxFrames, Torch: r.Torch})
	if err != nil {
		if errors.Is(err, sampler.ErrBudget) || errors.Is(err, sampler.ErrVideo) {
			return nil, 0, &Error{Loader: name, Detail: err.Error(), Err: ErrUpstream}
		}
		return nil, 0, &Error{Loader: name, Detail: err.Error(), Err: ErrRequest}
	}
	return p.Indices, p.SampleFPS, nil
}

// QwenSize is fetch_video's resize target (qwen-vl-utils 0.0.14: the per-frame cap from nframes and
// total_pixels, then smart_resize with factor 2·image_patch_size) for nframes frames of w×h.
func QwenSize(name string, w, h, nframes int, r Request) (outW, outH int, err error) {
	patch := r.ImagePatchSize
	if patch == 0 {
		patch = 14
	}
	g := geom.Qwen{Version: geom.QwenV0014, Factor: 2 * patch, MinPixels: r.MinPixels, MaxPixels: r.MaxPixels, TotalPixels: r.TotalPixels}
	l, err := g.Layout(w, h, nframes)
	if err != nil {
		return 0, 0, &Error{Loader: name, Detail: fmt.Sprintf("smart_resize of %dx%d: %v", w, h, err), Err: ErrUpstream}
	}
	return l.Resize.W, l.Resize.H, nil
}

// DecordCount is decord's len(vr): one entry per packet of the stream when its packet index is
// built (video_reader.cc IndexKeyframes / GetFrameCount), else nb_frames, else avg_fps × duration.
func DecordCount(packets int, nbFrames int64, rate Rate, durationS float64) int {
	switch {
	case packets > 0:
		return packets
	case nbFrames > 0:
		return int(nbFrames)
	}
	return int(rate.Float64() * durationS)
}

// VLMEvalKitIndices is save_video_frames' frame choice over decord's count and average fps.
func VLMEvalKitIndices(n int, fps float64, r Request) ([]int, error) {
	if n < 1 || !(fps > 0) {
		return nil, errf(ErrUpstream, VLMEvalKit, "decord reports %d frames at %v fps", n, fps)
	}
	s, _ := sampler.LookupPreset("vlmevalkit")
	p, err := s.Select(sampler.Video{Frames: n, FPS: fps}, sampler.Request{Frames: r.Frames, SampleFPS: r.SampleFPS})
	if err != nil {
		return nil, &Error{Loader: VLMEvalKit, Detail: err.Error(), Err: ErrRequest}
	}
	return p.Indices, nil
}
