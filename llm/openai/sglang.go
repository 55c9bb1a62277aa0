package openai

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/framesweep/framesweep/encode"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/resize/geom"
)

// SGLang's video path, read from its sources (sgl-project/sglang):
//   - python/sglang/srt/utils/common.py, load_video: a "data:" URL is split at its first ',', the rest
//     base64-decoded (pybase64, validate=True) into a temporary ".mp4" file that decord's VideoReader
//     opens (newer releases: torchcodec first, decord as fallback, python/sglang/srt/utils/
//     video_decoder.py). A string that is neither a URL, a data: URL nor a file is base64-decoded
//     whole, so the old "video:<base64>" form fails there (':' is not base64).
//   - python/sglang/srt/multimodal/processors/qwen_vl.py, preprocess_video: len(vr) frames (decord:
//     one per packet of the video stream) at vr.get_avg_fps() (the stream's avg_frame_rate) are
//     re-sampled to smart_nframes({}, total, fps) frames at linspace(0, total-1, nframes) (rounded, or
//     truncated and de-duplicated in newer releases), then resized by smart_resize (factor 28, video
//     pixel bounds); Qwen3-VL gets the metadata fps and frames_indices (timestamps indices / fps),
//     Qwen2/2.5-VL no fps at all (transformers' default, 2.0).
//
// So the frames go as a constant-rate MP4 of PNG pictures (encode.PNGMP4, lossless) whose rate makes
// smart_nframes keep every frame: at most 2 fps, an even count from 2 to 768.
const (
	sglangFPS         = 2.0 // FPS
	sglangMinFrames   = 4   // FPS_MIN_FRAMES
	sglangMaxFrames   = 768 // FPS_MAX_FRAMES
	sglangFrameFactor = 2   // FRAME_FACTOR
	sglangImageFactor = 28  // IMAGE_FACTOR, preprocess_video's default image_factor
)

// sglangNFrames is qwen_vl.py smart_nframes({}, total_frames, video_fps) with SGLang's defaults (no
// --mm-process-config video keys): how many frames its Qwen-VL processor keeps; 0 when it raises.
func sglangNFrames(total int, videoFPS float64) int {
	minFrames := math.Ceil(float64(sglangMinFrames)/sglangFrameFactor) * sglangFrameFactor
	maxFrames := math.Floor(float64(min(sglangMaxFrames, total))/sglangFrameFactor) * sglangFrameFactor
	n := float64(total) / videoFPS * sglangFPS
	n = math.Min(math.Min(math.Max(n, minFrames), maxFrames), float64(total))
	n = math.Floor(n/sglangFrameFactor) * sglangFrameFactor
	if !(n >= sglangFrameFactor && n <= float64(total)) {
		return 0
	}
	return int(n)
}

// sglangRate is the MP4's constant rate: the frames' own rate, (n-1) / (last - first timestamp), so
// that frame i at i / rate lies where the plan put it relative to the first; the rate a processor
// is told (VideoTiming.FPS) when the timestamps span no time.
func sglangRate(v *llm.VideoTiming, n int) (encode.Rate, string, error) {
	fps, src := 0.0, llm.FPSTimestamps
	if ts := v.TimestampsS; n > 1 && ts[n-1] > ts[0] {
		fps = float64(n-1) / (ts[n-1] - ts[0])
	} else {
		var err error
		if fps, src, err = v.FPS(n); err != nil {
			return encode.Rate{}, "", err
		}
	}
	r, err := encode.RateOf(fps)
	return r, src, err
}

// sglangVideo is the data: URL of the frames as SGLang reads a video, and what the response records
// of it: the rate and times the server derives from the file, and what else it re-derives. Frames
// SGLang would not keep (an odd count, more than 768, a rate above 2 fps) or cannot take are refused
// before anything is sent (llm.ErrVideoInput, naming the cause: the fallback=images trigger).
func (c *Client) sglangVideo(req *llm.Request, resp *llm.Response) (string, error) {
	refuse := func(format string, a ...any) error {
		return llm.Errorf("answer", c.base, llm.ErrVideoInput, "server=sglang: "+format, a...)
	}
	n := len(req.Frames)
	if req.Video == nil {
		return "", refuse("needs the frames' timing (Request.Video): the file's frame rate is all the time SGLang reads")
	}
	rate, src, err := sglangRate(req.Video, n)
	if err != nil {
		return "", refuse("%v", err)
	}
	if keep := sglangNFrames(n, rate.FPS()); keep != n {
		return "", refuse("SGLang's Qwen-VL processor (qwen_vl.py smart_nframes: 2 fps, an even count of 2..%d) "+
			"keeps %d of %d frames at %s fps; send an even count at most 2 fps, or fallback=images", sglangMaxFrames, keep, n, fmtFPS(rate.FPS()))
	}
	w, h := req.Frames[0].W, req.Frames[0].H
	for i, f := range req.Frames {
		if f.W != w || f.H != h {
			return "", refuse("frame %d is %dx%d, frame 0 %dx%d: one video has one size", i, f.W, f.H, w, h)
		}
	}
	l, err := geom.Qwen{Base: "qwen2.5-vl", Version: geom.QwenV0010, Factor: sglangImageFactor}.Layout(w, h, n)
	if err != nil {
		return "", refuse("SGLang's smart_resize refuses %dx%d frames: %v", w, h, err)
	}
	file, err := encode.PNGMP4(req.Frames, rate, "")
	if err != nil {
		kind := llm.ErrBadRequest
		if errors.Is(err, encode.ErrInput) {
			kind = llm.ErrBadImage
		}
		return "", llm.Errorf("answer", c.base, kind, "server=sglang: encoding the video item: %v", err)
	}
	resp.InputForm = llm.FormSGLangVideo
	resp.VideoFPS, resp.VideoFPSSource = rate.FPS(), src
	resp.VideoTimestampsS = make([]float64, n)
	for i := range resp.VideoTimestampsS {
		resp.VideoTimestampsS[i] = float64(i) * float64(rate.Den) / float64(rate.Num)
	}
	resp.VideoWarnings = sglangWarnings(req.Video, rate, resp.VideoTimestampsS, w, h, l.Resize)
	return "data:video/mp4;base64," + base64.StdEncoding.EncodeToString(file), nil
}

// sglangWarnings: what SGLang re-derives otherwise than the request says.
func sglangWarnings(v *llm.VideoTiming, rate encode.Rate, times []float64, w, h int, resized geom.Size) []string {
	var out []string
	if fps := rate.FPS(); fps != sglangFPS {
		out = append(out, "sglang: Qwen2/2.5-VL get no fps from SGLang (transformers' default 2): second_per_grid_t 1 s, not the file's 2 / "+fmtFPS(fps))
	}
	t0, dev := v.TimestampsS[0], 0.0
	for i, t := range v.TimestampsS {
		dev = math.Max(dev, math.Abs(times[i]-(t-t0)))
	}
	if t0 > 5e-4 || dev > 5e-4 {
		out = append(out, fmt.Sprintf("sglang: the file puts frame i at i / %s s from 0 (Qwen3-VL's timestamps); the plan starts at %.3f s and differs from a constant rate by up to %.3f s",
			fmtFPS(rate.FPS()), t0, dev))
	}
	if resized.W != w || resized.H != h {
		out = append(out, fmt.Sprintf("sglang: preprocess_video resizes each %dx%d frame to %dx%d (smart_resize, factor 28, video pixel bounds)", w, h, resized.W, resized.H))
	}
	return out
}

func fmtFPS(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
