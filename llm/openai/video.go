package openai

import (
	"encoding/base64"
	"errors"
	"math"
	"strings"

	"github.com/framesweep/framesweep/llm"
)

// frameParts is the request's frames as the spec's input mode sends them, and what the response
// records of it (input mode and form, encoding, timing). A video form the server cannot take for
// these frames (llm.ErrVideoInput before anything is sent) falls back to image parts when the spec
// says fallback=images, and the response says so; otherwise it is the answer's error.
func (c *Client) frameParts(req *llm.Request, cr *chatRequest, resp *llm.Response) ([]part, error) {
	if c.o.Input == llm.InputVideo {
		parts, err := c.videoParts(req, cr, resp)
		if err == nil {
			resp.InputMode, resp.ImageFormat = llm.InputVideo, c.ImageFormat()
			return parts, nil
		}
		if !c.o.FallbackImages || !errors.Is(err, llm.ErrVideoInput) {
			return nil, err
		}
		*resp = llm.Response{VideoWarnings: []string{"fallback=images: " + reason(err)}}
		cr.MediaIOKwargs, cr.MMProcessorKwargs = nil, nil
	}
	parts, err := c.imageParts(req)
	if err != nil {
		return nil, err
	}
	resp.InputMode, resp.InputForm, resp.ImageFormat = llm.InputImages, llm.FormImageURL, c.ImageFormat()
	return parts, nil
}

// reason is an error's cause without the llm.Error prefix ("llm: answer URL: ").
func reason(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

// videoParts is the frames as one video item of the server's form.
func (c *Client) videoParts(req *llm.Request, cr *chatRequest, resp *llm.Response) ([]part, error) {
	if req.Images() > 1 {
		return nil, llm.Errorf("answer", c.base, llm.ErrVideoInput, "input=video: a server's video item takes one image per frame, not %d tiles (the server tiles frames itself)", req.Images())
	}
	if c.o.Server == ServerSGLang {
		url, err := c.sglangVideo(req, resp)
		if err != nil {
			return nil, err
		}
		return []part{{Type: "video_url", VideoURL: &imageURL{URL: url}}}, nil
	}
	// vLLM's VideoMediaIO.load_base64 (vllm/multimodal/media/video.py): a "video/jpeg" payload is
	// split at ',' and each piece decoded as a JPEG image; the frames are taken as they are (no
	// re-sampling; newer versions keep the first num_frames, default 32, hence num_frames below).
	if req.Video == nil {
		return nil, llm.Errorf("answer", c.base, llm.ErrBadRequest, "input=video,server=vllm needs the frames' timing (Request.Video): without it the server places them at 1 fps")
	}
	var url strings.Builder
	url.WriteString("data:video/jpeg;base64,")
	for i, f := range req.Frames {
		b, _, err := c.encode(f, i)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			url.WriteByte(',')
		}
		url.WriteString(base64.StdEncoding.EncodeToString(b))
	}
	if err := c.videoTiming(req, cr, resp); err != nil {
		return nil, err
	}
	resp.InputForm = llm.FormVLLMVideo
	return []part{{Type: "video_url", VideoURL: &imageURL{URL: url.String()}}}, nil
}

// videoTiming tells vLLM where the frames lie in time. The loader's metadata (media_io_kwargs:
// fps, frames_indices, total_num_frames; read by VideoMediaIO.load_base64) gives Qwen3-VL its
// timestamps, frames_indices / fps (transformers Qwen3VLProcessor._calculate_timestamps); the
// processor's fps (mm_processor_kwargs) gives Qwen2.5-VL its second_per_grid_t = 2 / fps
// (Qwen2_5_VLProcessor.__call__); do_sample_frames false keeps the frames as sent. transformers 5.x
// derives the fps from that metadata instead (llm.FPSWarning), which the response notes when the two
// differ.
func (c *Client) videoTiming(req *llm.Request, cr *chatRequest, resp *llm.Response) error {
	v, n := req.Video, len(req.Frames)
	fps, src, err := v.FPS(n)
	if err != nil {
		return err
	}
	meta := map[string]any{"num_frames": n}
	idx, rate := v.Indices, v.SourceFPS
	if idx == nil || rate <= 0 {
		// Only timestamps: indices on a millisecond grid (fps 1000), so idx/fps is each time to 1 ms.
		idx, rate = make([]int, n), 1000
		for i, t := range v.TimestampsS {
			idx[i] = int(math.Round(t * rate))
		}
	}
	meta["fps"], meta["frames_indices"] = rate, idx
	total := n // vLLM's default total_num_frames
	if v.TotalFrames > 0 && v.Indices != nil {
		total = v.TotalFrames
		meta["total_num_frames"] = total
	} else if last := idx[n-1] + 1; last > n {
		total = last
		meta["total_num_frames"] = total // vLLM requires total_num_frames ≥ the frames sent
	}
	cr.MediaIOKwargs = map[string]map[string]any{"video": meta}
	cr.MMProcessorKwargs = map[string]any{"fps": fps, "do_sample_frames": false}
	resp.VideoFPS, resp.VideoFPSSource = fps, src
	resp.VideoTimestampsS = make([]float64, n)
	for i, x := range idx {
		resp.VideoTimestampsS[i] = float64(x) / rate
	}
	if w := llm.FPSWarning(fps, n, total, rate); w != "" {
		resp.VideoWarnings = append(resp.VideoWarnings, w)
	}
	return nil
}
