package sampler

import (
	"fmt"
	"math"
)

// Harness × model presets: what a model actually sees when an evaluation harness drives
// qwen-vl-utils with its own arguments (SAMPLING.md §2 and §5). Their names match the geometry
// presets of resize/geom where both exist.
func harnessList() []*sampler {
	return []*sampler{lmmsQwen25Simple, lmmsQwen25Chat, lmmsQwen3, vlmQwen25, vlmQwen3, qwen3VideoMME}
}

// lmmsQwen25Simple reproduces lmms-eval lmms_eval/models/simple/qwen2_5_vl.py (max_num_frames 32;
// its fps argument is unused): qwen-vl-utils samples at its default 2 fps (min 4, max 768), then
// j = unique(np.linspace(0, T-1, max_num_frames, dtype=int)) plus T-1 when missing selects from
// those T frames.
var lmmsQwen25Simple = &sampler{name: "lmms-eval/qwen2.5-vl", preset: true, frames: true,
	summary:  "qwen-vl-utils at its default 2 fps, then unique(np.linspace(0, T-1, max_num_frames=32, dtype=int)) + last of those T",
	upstream: "EvolvingLMMs-Lab/lmms-eval lmms_eval/models/simple/qwen2_5_vl.py; qwen-vl-utils vision_process.py",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		maxN := orDefault(r.Frames, 32)
		first, err := qwenVLUtils(s, v, Request{Torch: r.Torch})
		if err != nil {
			return Selection{}, err
		}
		T := len(first.Indices)
		j := uniqueSorted(floorLinspace(0, T-1, maxN))
		if j[len(j)-1] != T-1 {
			j = append(j, T-1)
		}
		idx := make([]int, len(j))
		for i, k := range j {
			idx[i] = first.Indices[k]
		}
		p := newSelection(s, v, idx)
		p.SampleFPS = first.SampleFPS
		return p, nil
	}}

// lmmsQwen25Chat reproduces lmms-eval lmms_eval/models/chat/qwen2_5_vl.py: without fps,
// nframes = max(2, even_floor(min(max_num_frames, N))) (default 32); with fps, qwen-vl-utils' fps mode.
var lmmsQwen25Chat = &sampler{name: "lmms-eval/qwen2.5-vl-chat", preset: true, frames: true, fps: true,
	summary:  "nframes = max(2, even_floor(min(max_num_frames=32, N))) or fps=, through qwen-vl-utils",
	upstream: "EvolvingLMMs-Lab/lmms-eval lmms_eval/models/chat/qwen2_5_vl.py; qwen-vl-utils vision_process.py",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		if r.Frames > 0 && r.SampleFPS > 0 {
			return Selection{}, errf(ErrRequest, s.name, "max_num_frames is unused when fps is set: give one of them")
		}
		if r.SampleFPS > 0 {
			return qwenVLUtils(s, v, Request{SampleFPS: r.SampleFPS, Torch: r.Torch})
		}
		n := max(2, min(orDefault(r.Frames, 32), v.Frames)/2*2)
		return qwenVLUtils(s, v, Request{Frames: n, Torch: r.Torch})
	}}

// lmmsQwen3 reproduces lmms-eval lmms_eval/models/simple/qwen3_vl.py: the element is
// {nframes: max_num_frames} (default 32; shorter videos raise), or {fps, max_frames: max_num_frames}
// when fps is set; then qwen-vl-utils 0.0.14 and the Qwen3-VL timestamp strings.
var lmmsQwen3 = &sampler{name: "lmms-eval/qwen3-vl", preset: true, frames: true, fps: true,
	summary:  "qwen-vl-utils 0.0.14 with nframes = max_num_frames (32), or fps with max_frames = max_num_frames",
	upstream: "EvolvingLMMs-Lab/lmms-eval lmms_eval/models/simple/qwen3_vl.py; QwenLM/Qwen3-VL qwen-vl-utils vision_process.py",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		maxN := orDefault(r.Frames, 32)
		req := Request{Frames: maxN, Torch: r.Torch}
		if r.SampleFPS > 0 {
			req = Request{SampleFPS: r.SampleFPS, MaxFrames: maxN, Torch: r.Torch}
		}
		p, err := qwenVLUtils(s, v, req)
		if err != nil {
			return Selection{}, err
		}
		p.TimestampStrings = qwen3Timestamps(p.Indices, v.FPS)
		return p, nil
	}}

// vlmQwen25 reproduces VLMEvalKit's video-LLM path for Qwen2VLChat (vlmeval/vlm/qwen2_vl/model.py,
// vlmeval/inference_video.py): the dataset's nframe (default 8) becomes qwen-vl-utils' nframes, or
// N//2*2 when the video has fewer frames; the dataset's fps becomes qwen-vl-utils' fps.
var vlmQwen25 = &sampler{name: "vlmevalkit/qwen2.5-vl", preset: true, frames: true, fps: true,
	summary:  "qwen-vl-utils with nframes = nframe (default 8), or N//2*2 for shorter videos, or fps = the dataset's fps",
	upstream: "open-compass/VLMEvalKit vlmeval/vlm/qwen2_vl/model.py, vlmeval/inference_video.py; qwen-vl-utils vision_process.py",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		return vlmQwen(s, v, r, false)
	}}

// vlmQwen3 is vlmQwen25 for Qwen3VLChat (vlmeval/vlm/qwen3_vl/model.py) with the Qwen3-VL
// timestamp strings.
var vlmQwen3 = &sampler{name: "vlmevalkit/qwen3-vl", preset: true, frames: true, fps: true,
	summary:  "as vlmevalkit/qwen2.5-vl, through qwen-vl-utils 0.0.14, with \"<%.1f seconds>\" strings",
	upstream: "open-compass/VLMEvalKit vlmeval/vlm/qwen3_vl/model.py, vlmeval/inference_video.py; QwenLM/Qwen3-VL qwen-vl-utils vision_process.py",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		return vlmQwen(s, v, r, true)
	}}

func vlmQwen(s *sampler, v Video, r Request, stamps bool) (Selection, error) {
	if r.Frames > 0 && r.SampleFPS > 0 {
		return Selection{}, errf(ErrRequest, s.name, "give nframe or fps, not both (upstream asserts)")
	}
	req := Request{SampleFPS: r.SampleFPS, Torch: r.Torch}
	if r.SampleFPS == 0 {
		n := orDefault(r.Frames, 8)
		if v.Frames < n {
			n = v.Frames / 2 * 2
		}
		req.Frames = n
	}
	if req.Frames == 0 && req.SampleFPS == 0 {
		return Selection{}, errf(ErrBudget, s.name, fmt.Sprintf("nframes = %d//2*2 = 0 (upstream raises)", v.Frames))
	}
	p, err := qwenVLUtils(s, v, req)
	if err != nil {
		return Selection{}, err
	}
	if stamps {
		p.TimestampStrings = qwen3Timestamps(p.Indices, v.FPS)
	}
	return p, nil
}

// qwen3VideoMME reproduces the official Qwen3-VL Video-MME evaluation
// (QwenLM/Qwen3-VL evaluation/VideoMME/run_videomme.py): qwen-vl-utils with fps = 2 (an integer
// argument), min_frames 4, max_frames 512.
var qwen3VideoMME = &sampler{name: "qwen3-vl/videomme", preset: true, fps: true,
	summary:  "qwen-vl-utils 0.0.14 with fps = 2 (integer), min_frames 4, max_frames 512",
	upstream: "QwenLM/Qwen3-VL evaluation/VideoMME/run_videomme.py; qwen-vl-utils vision_process.py",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		f := r.SampleFPS
		if f == 0 {
			f = 2
		}
		if f != math.Trunc(f) {
			return Selection{}, errf(ErrRequest, s.name, fmt.Sprintf("fps %g: upstream takes an integer", f))
		}
		p, err := qwenVLUtils(s, v, Request{SampleFPS: f, MinFrames: 4, MaxFrames: 512, Torch: r.Torch})
		if err != nil {
			return Selection{}, err
		}
		p.TimestampStrings = qwen3Timestamps(p.Indices, v.FPS)
		return p, nil
	}}
