package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/framesweep/framesweep/llm"
)

// llavaNextVideoTokens is what vLLM's LLaVA-NeXT-Video (vllm/model_executor/models/
// llava_next_video.py, LlavaNextVideoProcessingInfo._get_num_frame_tokens) puts in the prompt per
// frame: ceil(patch_grid_length / spatial_pool_stride)², with the checkpoint's 336-pixel CLIP frames
// of 14-pixel patches (a 24×24 grid) pooled with stride 2: 144.
func llavaNextVideoTokens(imageSize, patch, poolStride int) int {
	g := int(math.Ceil(float64(imageSize/patch) / float64(poolStride)))
	return g * g
}

// TestLLaVANeXTVideoRequestShape: what LLaVA-NeXT-Video served by vLLM takes — at most one video per
// prompt and no images (get_supported_mm_limits: {"video": 1}) — is what input=video sends: one
// video_url item, no image part, every frame in order. input=images is refused by such a server
// (vLLM's "At most 0 image(s)" reply: ErrTooManyImages). No model ran: the reply is canned.
func TestLLaVANeXTVideoRequestShape(t *testing.T) {
	if got := llavaNextVideoTokens(336, 14, 2); got != 144 {
		t.Fatalf("tokens per frame %d, want 144", got)
	}
	var frames int
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		v := videoItem{}
		if _, err := collectParts(body, &v); err != nil || v.videoParts > 1 || v.imageParts > 0 {
			w.WriteHeader(400)
			b, _ := json.Marshal(map[string]any{"object": "error", "code": 400,
				"message": "At most 0 image(s) may be provided in one prompt. Set `--limit-mm-per-prompt` to increase this limit."})
			w.Write(b)
			return
		}
		item, err := parseVLLM(body)
		if err != nil {
			w.WriteHeader(400)
			io.WriteString(w, `{"object":"error","message":"`+err.Error()+`","code":400}`)
			return
		}
		frames = len(item.frames)
		io.WriteString(w, vllmReply)
	})
	fr, timing := planFrames(t, 32)
	r := req4
	r.Frames, r.Video = fr, timing
	resp, err := client(t, s, Options{Input: llm.InputVideo}).Answer(context.Background(), &r)
	if err != nil || frames != 32 || resp.InputForm != llm.FormVLLMVideo {
		t.Fatalf("input=video: %v, the server read %d frames, form %q", err, frames, resp.InputForm)
	}
	t.Logf("32 frames → %d video tokens in vLLM's LLaVA-NeXT-Video prompt", 32*llavaNextVideoTokens(336, 14, 2))
	if _, err := client(t, s, Options{}).Answer(context.Background(), &r); !errors.Is(err, llm.ErrTooManyImages) {
		t.Errorf("input=images to LLaVA-NeXT-Video: %v, want ErrTooManyImages", err)
	}
}
