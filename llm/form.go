package llm

import (
	"math"
	"strconv"
)

// Input forms (Response.InputForm): exactly which form the model, or the server in front of it,
// received the frames in. InputMode says images or video; the form says whose reader reads them.
const (
	// FormImages: in process, each frame one image of the projector (its markers around it).
	FormImages = "images"
	// FormQwen2VLVideo, FormQwen25VLVideo, FormQwen3VLVideo, FormInternVLFrames: in process, the
	// family's own video reading (docs/runtimes.md "Video input"): temporal pairs in one block at
	// index positions (Qwen2-VL) or time positions (Qwen2.5-VL), pairs behind their "<t seconds>"
	// (Qwen3-VL), "Frame{i}: " lines (InternVL).
	FormQwen2VLVideo   = "qwen2vl-video"
	FormQwen25VLVideo  = "qwen25vl-video"
	FormQwen3VLVideo   = "qwen3vl-video"
	FormInternVLFrames = "internvl-frames"
	// FormImageURL: a server, one image_url part per frame (PNG or JPEG: Response.ImageFormat).
	FormImageURL = "image_url"
	// FormVLLMVideo: a server, one video_url "data:video/jpeg;base64,<f1>,<f2>,…" item with the
	// frames' metadata in media_io_kwargs and the fps in mm_processor_kwargs (vLLM's
	// VideoMediaIO.load_base64).
	FormVLLMVideo = "vllm-video-jpeg"
	// FormSGLangVideo: a server, one video_url "data:video/mp4;base64,…" item, the frames as PNG
	// pictures in an MP4 at a constant rate (SGLang's load_video hands it to decord or torchcodec).
	FormSGLangVideo = "sglang-video-mp4"
)

// InputForms lists every form, in the order above (record validates against its own copy).
var InputForms = []string{FormImages, FormQwen2VLVideo, FormQwen25VLVideo, FormQwen3VLVideo, FormInternVLFrames,
	FormImageURL, FormVLLMVideo, FormSGLangVideo}

// MetadataFPS is the sampling rate transformers 5.x derives from a video's metadata instead of
// taking the fps a request passes: n / total_num_frames × the source fps (the metadata's
// sampled_fps). It is 0 when the metadata lacks either.
func MetadataFPS(n, totalFrames int, sourceFPS float64) float64 {
	if n <= 0 || totalFrames <= 0 || !(sourceFPS > 0) || math.IsInf(sourceFPS, 0) {
		return 0
	}
	return float64(n) / float64(totalFrames) * sourceFPS
}

// FPSWarning is the note a record carries when the fps a processor is told (sent) differs from the
// one transformers 5.x would derive from the same video's metadata (MetadataFPS of n frames out of
// totalFrames at sourceFPS): Qwen2.5-VL's temporal positions (second_per_grid_t = 2 / fps) then
// differ between transformers 4.x/vLLM and 5.x. "" when they agree (to 1e-9 relative) or the
// metadata is incomplete.
func FPSWarning(sent float64, n, totalFrames int, sourceFPS float64) string {
	derived := MetadataFPS(n, totalFrames, sourceFPS)
	if derived == 0 || !(sent > 0) || math.Abs(sent-derived) <= 1e-9*derived {
		return ""
	}
	return "transformers 5.x derives fps " + fmtG(derived) + " from the video metadata (" + strconv.Itoa(n) + " / " +
		strconv.Itoa(totalFrames) + " × " + fmtG(sourceFPS) + "), not the " + fmtG(sent) +
		" sent: Qwen2.5-VL's temporal positions follow the sent fps in transformers 4.x and vLLM only"
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
