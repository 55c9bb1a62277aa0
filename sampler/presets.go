package sampler

import (
	"fmt"
	"math"
	"strconv"
)

func presetList() []*sampler {
	return append([]*sampler{qwen25VL, qwen3VL, qwen3VLHF, internVL3, llavaOneVision, llavaVideo, lmmsEval, vlmEvalKit, videoMME}, harnessList()...)
}

// qwen25VL reproduces qwen-vl-utils 0.0.10/0.0.11 (QwenLM/Qwen2.5-VL:
// qwen-vl-utils/src/qwen_vl_utils/vision_process.py, smart_nframes and _read_video_decord /
// _read_video_torchcodec): nframes mode rounds the budget half-to-even to a multiple of 2, fps mode
// (default 2 fps, min 4, max min(768, N)) floors to a multiple of 2; either must land in [2, N] or
// upstream raises ValueError. Indices are torch.linspace(0, N-1, n).round() in float32.
var qwen25VL = &sampler{name: "qwen2.5-vl", preset: true, frames: true, fps: true, clip: true,
	summary:  "qwen-vl-utils 0.0.10/0.0.11 smart_nframes + torch.linspace(0, N-1, n).round() (float32)",
	upstream: "QwenLM/Qwen2.5-VL qwen-vl-utils/src/qwen_vl_utils/vision_process.py (smart_nframes, _read_video_decord)",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		return qwenVLUtils(s, v, r)
	}}

// qwen3VL reproduces qwen-vl-utils 0.0.14 (QwenLM/Qwen3-VL: qwen-vl-utils/src/qwen_vl_utils/
// vision_process.py; the sampler is unchanged from 0.0.10) plus the timestamp strings of
// transformers models/qwen3_vl/processing_qwen3_vl.py (_calculate_timestamps, replace_video_token):
// indices padded to even, each temporal pair's mean time written "<%.1f seconds>".
var qwen3VL = &sampler{name: "qwen3-vl", preset: true, frames: true, fps: true, clip: true,
	summary:  "qwen-vl-utils 0.0.14 (same sampler as qwen2.5-vl) + Qwen3VLProcessor \"<%.1f seconds>\" per temporal pair",
	upstream: "QwenLM/Qwen3-VL qwen-vl-utils/src/qwen_vl_utils/vision_process.py; transformers models/qwen3_vl/processing_qwen3_vl.py",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		p, err := qwenVLUtils(s, v, r)
		if err != nil {
			return Selection{}, err
		}
		p.TimestampStrings = qwen3Timestamps(p.Indices, v.FPS)
		return p, nil
	}}

// qwen3VLHF reproduces transformers models/qwen3_vl/video_processing_qwen3_vl.py sample_frames,
// used when the HF processor or vLLM samples frames itself (do_sample_frames=True): fps mode
// n = int(N/fps·f) clamped to [4, 768] and N, not forced even; num_frames mode takes n as is;
// indices np.linspace(0, N-1, n).round() in float64.
var qwen3VLHF = &sampler{name: "qwen3-vl-hf", preset: true, frames: true, fps: true,
	summary:  "transformers Qwen3VLVideoProcessor.sample_frames: np.linspace(0, N-1, n).round(), n not forced even",
	upstream: "huggingface/transformers models/qwen3_vl/video_processing_qwen3_vl.py (sample_frames)",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		if r.Frames > 0 && r.SampleFPS > 0 {
			return Selection{}, errf(ErrRequest, s.name, "give frames or sample fps, not both (upstream raises)")
		}
		n := r.Frames
		if n == 0 {
			f := r.SampleFPS
			if f == 0 {
				f = 2
			}
			minF, maxF := orDefault(r.MinFrames, 4), orDefault(r.MaxFrames, 768)
			n = int(float64(v.Frames) / v.FPS * f)
			n = min(max(n, minF), maxF, v.Frames)
		}
		p := newSelection(s, v, roundLinspaceF64(v.Frames, n))
		p.TimestampStrings = qwen3Timestamps(p.Indices, v.FPS)
		if n > v.Frames {
			p.Notes = append(p.Notes, "num_frames > total frames: upstream repeats frames")
		}
		return p, nil
	}}

func orDefault(x, d int) int {
	if x == 0 {
		return d
	}
	return x
}

// roundByFactor etc. are qwen-vl-utils' helpers; Python round() is half-to-even.
func roundByFactor(x float64, f int) int {
	return int(math.RoundToEven(x/float64(f))) * f
}
func ceilByFactor(x float64, f int) int  { return int(math.Ceil(x/float64(f))) * f }
func floorByFactor(x float64, f int) int { return int(math.Floor(x/float64(f))) * f }

// qwenVLUtils is smart_nframes + torch.linspace(...).round() (SAMPLING.md §1).
func qwenVLUtils(s *sampler, v Video, r Request) (Selection, error) {
	if r.Frames > 0 && r.SampleFPS > 0 {
		return Selection{}, errf(ErrRequest, s.name, "give nframes or fps, not both (upstream asserts)")
	}
	start, end, N, err := qwenFrameRange(s, v, r)
	if err != nil {
		return Selection{}, err
	}
	var n int
	if r.Frames > 0 {
		if r.MinFrames > 0 || r.MaxFrames > 0 {
			return Selection{}, errf(ErrRequest, s.name, "min/max frames apply to fps mode only")
		}
		n = roundByFactor(float64(r.Frames), 2)
	} else {
		f := r.SampleFPS
		if f == 0 {
			f = 2.0
		}
		minF := ceilByFactor(float64(orDefault(r.MinFrames, 4)), 2)
		maxF := floorByFactor(float64(orDefault(r.MaxFrames, min(768, N))), 2)
		x := float64(N) / v.FPS * f
		x = math.Min(math.Min(math.Max(x, float64(minF)), float64(maxF)), float64(N))
		n = floorByFactor(x, 2)
	}
	if !(2 <= n && n <= N) {
		return Selection{}, errf(ErrBudget, s.name, fmt.Sprintf("nframes should be in [2, %d] (total frames), got %d (upstream raises ValueError)", N, n))
	}
	ys := TorchLinspace(float32(start), float32(end), n, r.Torch)
	idx := make([]int, n)
	for i, y := range ys {
		idx[i] = int(math.RoundToEven(float64(y)))
	}
	p := newSelection(s, v, idx)
	p.SampleFPS = float64(n) / math.Max(float64(N), 1e-6) * v.FPS
	return p, nil
}

// qwenFrameRange is calculate_video_frame_range of qwen-vl-utils 0.0.11+: a clip [StartS, EndS]
// becomes frames ceil(start·F) … min(floor(end·F), N-1), both clamped to the duration N/F first;
// upstream raises when start ≥ end. Without a clip it is 0 … N-1.
func qwenFrameRange(s *sampler, v Video, r Request) (start, end, total int, err error) {
	if r.StartS == 0 && r.EndS == 0 {
		return 0, v.Frames - 1, v.Frames, nil
	}
	maxDur := float64(v.Frames) / v.FPS
	startC, endC := math.Max(0, math.Min(r.StartS, maxDur)), maxDur
	if r.EndS > 0 {
		endC = math.Max(0, math.Min(r.EndS, maxDur))
	}
	if startC > endC {
		return 0, 0, 0, errf(ErrRequest, s.name, fmt.Sprintf("clip start %gs is after its end %gs", r.StartS, r.EndS))
	}
	start = int(math.Ceil(startC * v.FPS))
	end = v.Frames - 1
	if r.EndS > 0 {
		end = min(int(math.Floor(endC*v.FPS)), v.Frames-1)
	}
	if start >= end {
		return 0, 0, 0, errf(ErrBudget, s.name, fmt.Sprintf("clip [%g, %g] s holds no frame range (start frame %d ≥ end frame %d; upstream raises)", r.StartS, r.EndS, start, end))
	}
	return start, end, end - start + 1, nil
}

// qwen3Timestamps is Qwen3VLProcessor._calculate_timestamps with merge_size 2, formatted "<%.1f seconds>".
func qwen3Timestamps(idx []int, fps float64) []string {
	if len(idx) == 0 {
		return nil
	}
	padded := append([]int(nil), idx...)
	if len(padded)%2 != 0 {
		padded = append(padded, padded[len(padded)-1])
	}
	out := make([]string, 0, len(padded)/2)
	for k := 0; k < len(padded); k += 2 {
		t := (float64(padded[k])/fps + float64(padded[k+1])/fps) / 2
		out = append(out, "<"+strconv.FormatFloat(t, 'f', 1, 64)+" seconds>")
	}
	return out
}

// internVL3 reproduces get_index of OpenGVLab/InternVL README.md (load_video, bound=None,
// num_segments default 32; copied unchanged in lmms-eval models/simple/internvl3.py): segment
// midpoints over [0, N-1]; fewer frames than segments gives duplicates.
var internVL3 = &sampler{name: "internvl3", preset: true, frames: true, clip: true,
	summary:  "InternVL get_index: int(seg/2 + np.round(seg·i)), seg = (N-1)/S, S = 32 by default",
	upstream: "OpenGVLab/InternVL README.md (get_index, load_video); lmms-eval models/simple/internvl3.py",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		S := orDefault(r.Frames, 32)
		startIdx, endIdx := 0, v.Frames-1
		if r.StartS != 0 || r.EndS != 0 {
			// get_index with bound = (start, end): Python round() is half to even.
			startIdx = max(0, int(math.RoundToEven(r.StartS*v.FPS)))
			if r.EndS != 0 {
				if r.StartS > r.EndS {
					return Selection{}, errf(ErrRequest, s.name, fmt.Sprintf("clip start %gs is after its end %gs", r.StartS, r.EndS))
				}
				endIdx = min(int(math.RoundToEven(r.EndS*v.FPS)), v.Frames-1)
			}
		}
		idx := segmentMidpointsRange(startIdx, endIdx, S)
		for _, x := range idx {
			if x < 0 || x >= v.Frames { // a clip starting past the end: decord raises on the index
				return Selection{}, errf(ErrBudget, s.name, fmt.Sprintf("clip [%g, %g] s starts at frame %d, past the last frame %d: upstream indexes frame %d", r.StartS, r.EndS, startIdx, v.Frames-1, x))
			}
		}
		p := newSelection(s, v, idx)
		if S > v.Frames {
			p.Notes = append(p.Notes, "more segments than frames: upstream repeats frames")
		}
		return p, nil
	}}

// llavaOneVision reproduces lmms-eval models/simple/llava_onevision.py load_video (decord backend,
// max_frames_num default 32): np.linspace(0, N-1, n, dtype=int), duplicates kept (get_batch repeats).
var llavaOneVision = &sampler{name: "llava-onevision", preset: true, frames: true,
	summary:  "np.linspace(0, N-1, n, dtype=int) with duplicates kept, n = 32 by default",
	upstream: "EvolvingLMMs-Lab/lmms-eval lmms_eval/models/simple/llava_onevision.py (load_video, decord)",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		n := orDefault(r.Frames, 32)
		p := newSelection(s, v, floorLinspace(0, v.Frames-1, n))
		if n > v.Frames {
			p.Notes = append(p.Notes, "more frames requested than the video has: upstream repeats frames")
		}
		return p, nil
	}}

// llavaVideo reproduces LLaVA-VL/LLaVA-NeXT llava/utils.py process_video_with_decord, as used by
// lmms-eval models/simple/llava_vid.py (max_frames_num 20, video_fps 1, force_sample False):
// stride = round(avg_fps/video_fps), indices range(0, N, stride); if that exceeds max_frames_num
// or force_sample, np.linspace(0, N-1, max_frames_num, dtype=int). Timestamp strings are the
// upstream's frame_time ("%.2fs"), which divides by the stride on the stride grid (a quirk).
var llavaVideo = &sampler{name: "llava-video", preset: true, frames: true, fps: true,
	summary:  "stride round(fps/video_fps) from frame 0, or np.linspace(0, N-1, max_frames_num, dtype=int) when over budget / force_sample",
	upstream: "LLaVA-VL/LLaVA-NeXT llava/utils.py (process_video_with_decord); lmms-eval models/simple/llava_vid.py",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		maxN := orDefault(r.Frames, 20)
		vf := r.SampleFPS
		if vf == 0 {
			vf = 1
		}
		stride := int(math.RoundToEven(v.FPS / vf))
		if stride < 1 {
			return Selection{}, errf(ErrRequest, s.name, fmt.Sprintf("round(%g fps / %g) = 0: upstream range() fails with step 0", v.FPS, vf))
		}
		var idx []int
		var times []float64
		for i := 0; i < v.Frames; i += stride {
			idx = append(idx, i)
			times = append(times, float64(i)/float64(stride))
		}
		quirk := true
		if len(idx) > maxN || r.ForceSample {
			idx = floorLinspace(0, v.Frames-1, maxN)
			times = times[:0]
			for _, i := range idx {
				times = append(times, float64(i)/v.FPS)
			}
			quirk = false
		}
		p := newSelection(s, v, idx)
		p.TimestampStrings = make([]string, len(times))
		for i, t := range times {
			p.TimestampStrings[i] = strconv.FormatFloat(t, 'f', 2, 64) + "s"
		}
		if quirk && float64(stride) != v.FPS {
			p.Notes = append(p.Notes, "upstream frame_time divides by the stride, not the fps: timestamp_strings differ from timestamps_s")
		}
		return p, nil
	}}

// lmmsEval reproduces read_video of EvolvingLMMs-Lab/lmms-eval
// lmms_eval/models/model_utils/load_video.py (PyAV backend): num_frm capped by int(N/fps·f) when
// an fps is given, sampled = min(N, num_frm), np.linspace(0, N-1, sampled, dtype=int), optional
// force_include_last_frame; frames are kept while decoding sequentially, so duplicates collapse.
// num_frm defaults to 32, the max_num_frames default of the lmms-eval model adapters.
var lmmsEval = &sampler{name: "lmms-eval", preset: true, frames: true, fps: true,
	summary:  "read_video: unique(np.linspace(0, N-1, min(N, n), dtype=int)), optional fps cap and force-last, n = 32 by default",
	upstream: "EvolvingLMMs-Lab/lmms-eval lmms_eval/models/model_utils/load_video.py (read_video, PyAV)",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		N := v.Frames
		num := orDefault(r.Frames, 32)
		if r.SampleFPS > 0 {
			num = min(num, int(float64(N)/v.FPS*r.SampleFPS))
		}
		sampled := min(N, num)
		if sampled < 1 {
			idx := make([]int, N)
			for i := range idx {
				idx[i] = i
			}
			p := newSelection(s, v, idx)
			p.Notes = append(p.Notes, "no frame sampled: upstream fails inside the sampling path and returns every decoded frame")
			return p, nil
		}
		idx := floorLinspace(0, N-1, sampled)
		if r.ForceLast && idx[len(idx)-1] != N-1 {
			idx = append(floorLinspace(0, N-2, sampled-1), N-1)
		}
		return newSelection(s, v, uniqueSorted(idx)), nil
	}}

func uniqueSorted(idx []int) []int {
	out := idx[:0:0]
	for i, x := range idx {
		if i == 0 || x != idx[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// vlmEvalKit reproduces save_video_frames / frame_paths of open-compass/VLMEvalKit
// vlmeval/dataset/video_base.py (identical in videomme.py and mlvu.py): nframe mode takes interior
// points int(i·N/(n+1)), i = 1..n (default 8, as Video-MME_8frame); fps mode takes
// int(i·fps_video/f) for i < int(N/fps_video·f), which is empty for short videos.
var vlmEvalKit = &sampler{name: "vlmevalkit", preset: true, frames: true, fps: true,
	summary:  "nframe: int(i·N/(n+1)), i=1..n (default 8); fps: int(i·fps/f), i < int(N/fps·f)",
	upstream: "open-compass/VLMEvalKit vlmeval/dataset/video_base.py (save_video_frames)",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		if r.Frames > 0 && r.SampleFPS > 0 {
			return Selection{}, errf(ErrRequest, s.name, "give nframe or fps, not both (upstream asserts)")
		}
		if r.SampleFPS == 0 {
			n := orDefault(r.Frames, 8)
			p := newSelection(s, v, interiorPoints(v.Frames, n))
			if n >= v.Frames {
				p.Notes = append(p.Notes, "nframe ≥ total frames: upstream repeats frames")
			}
			return p, nil
		}
		reqF := math.Floor(float64(v.Frames) / v.FPS * r.SampleFPS)
		if reqF > MaxFrames { // sampling faster than the video repeats frames; bound the list
			return Selection{}, errf(ErrBudget, s.name, fmt.Sprintf("fps %g on a %g fps video asks for %.0f frames (at most %d)", r.SampleFPS, v.FPS, reqF, MaxFrames))
		}
		req := int(reqF)
		step := v.FPS / r.SampleFPS
		idx := make([]int, max(req, 0))
		for i := range idx {
			idx[i] = int(float64(i) * step)
		}
		p := newSelection(s, v, idx)
		if req < 1 {
			p.Notes = append(p.Notes, "video shorter than one sampling interval: upstream samples no frame")
		}
		return p, nil
	}}

// videoMME reproduces the Video-MME reference frame extractor (look4u-ok/video-slicer
// slice_and_extract.py get_seq_frames, linked from MME-Benchmarks/Video-MME README.md):
// seg = (N-1)/n, idx_i = (round(seg·i) + round(seg·(i+1))) // 2. There is no default frame count.
var videoMME = &sampler{name: "videomme", preset: true, frames: true,
	summary:  "Video-MME official slicer: (round(seg·i) + round(seg·(i+1))) // 2, seg = (N-1)/n; frames required",
	upstream: "look4u-ok/video-slicer slice_and_extract.py (get_seq_frames), linked from MME-Benchmarks/Video-MME README.md",
	selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
		if r.Frames < 1 {
			return Selection{}, errf(ErrRequest, s.name, "needs a frame count (the benchmark fixes none)")
		}
		p := newSelection(s, v, videoMMESlicer(v.Frames, r.Frames))
		if r.Frames > v.Frames {
			p.Notes = append(p.Notes, "more frames requested than the video has: upstream repeats frames")
		}
		return p, nil
	}}
