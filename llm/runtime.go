package llm

import (
	"context"

	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/rgb"
)

// Tensor is a dense float32 input for tensor models (llm/onnx), already in the model's layout.
type Tensor struct {
	Name  string // model input name; "" means the model's first input
	Shape []int64
	Data  []float32
}

// Request is one question. Frames may be empty: text-only requests are first-class.
type Request struct {
	Frames   []*rgb.Image
	Tensors  []Tensor
	Question string
	// Options are the answer options as shown to the model, e.g. "A. a cat"; the letter before the
	// first '.' or ')' (or the position, A, B, … when there is none) is the option's label.
	Options   []string
	Subtitles string // Video-MME subtitle setting; "" for none
	Template  string // template id (TemplateIDs); "" means TemplateGeneric
	// Prompt, when set, replaces the template's rendering (the template still parses the answer).
	Prompt      *Prompt
	Temperature float64 // 0 = greedy (the default)
	MaxTokens   int     // 0 = DefaultMaxTokens
	Seed        int64
	// ImagesPerFrame is how many images each frame is: a tiled layout (InternVL's dynamic_preprocess:
	// tiles then a thumbnail, Frames holding each frame's images one after another); 0 or 1: one.
	// Video timing then has one entry per frame, not per image.
	ImagesPerFrame int
	// Video places the frames in time (one timestamp per frame, …), for runtimes that hand them to
	// the model as a video (input=video); nil when their timing is unknown.
	Video *VideoTiming

	// History is a dialogue's earlier turns (AVSD), rendered before the question (history.go).
	History []Turn
}

// DefaultMaxTokens bounds generation when Request.MaxTokens is 0: answers are a letter or a short phrase.
const DefaultMaxTokens = 32

// The ranges of the decoding settings (Request.Validate; the CLI's --max-tokens and --temperature).
const (
	// MaxMaxTokens is the largest generation bound a request may ask for (a context of 1M tokens).
	MaxMaxTokens = 1 << 20
	// MaxTemperature is the OpenAI API's documented upper bound of temperature (0..2), which the
	// servers framesweep talks to apply too; the in-process runtimes take the same range.
	MaxTemperature = 2
)

// Response is one answer.
type Response struct {
	Text   string `json:"text"`
	Choice string `json:"choice"` // the extracted option letter, "" when none could be extracted
	// Probs has one entry per option letter and sums to 1 (nil when the backend cannot score options).
	Probs            map[string]float64 `json:"probs"`
	PromptTokens     int                `json:"prompt_tokens"`
	CompletionTokens int                `json:"completion_tokens"`
	LatencyS         float64            `json:"latency_s"`
	Template         string             `json:"template"`
	// RequestSHA256 is the digest of the exact request body sent to a server (openai), for provenance.
	RequestSHA256 string `json:"request_sha256,omitempty"`
	// ImageFormat is how the frames were encoded for a server (openai), for provenance: "png"
	// (lossless) or "jpeg:q=N"; "" when no frames were sent or the backend takes them unencoded.
	ImageFormat string `json:"image_format,omitempty"`
	// InputMode is how the frames reached the model: InputImages or InputVideo; "" without frames.
	InputMode string `json:"input_mode,omitempty"`
	// InputForm is the exact form the model or its server received the frames in (Form*: in-process
	// images or the family's video reading, image_url parts, vLLM's or SGLang's video item); "" without
	// frames.
	InputForm string `json:"input_form,omitempty"`
	// VideoFPS is the sampling rate the model's processor was told (video mode): what Qwen2.5-VL's
	// temporal positions follow (second_per_grid_t = 2 / fps); VideoFPSSource says how it was found
	// (FPSGiven, FPSSampled, FPSTimestamps).
	VideoFPS       float64 `json:"video_fps,omitempty"`
	VideoFPSSource string  `json:"video_fps_source,omitempty"`
	// VideoTimestampsS are the times sent with the frames (video mode): per frame to a server, per
	// temporal pair as written in a Qwen3-VL prompt.
	VideoTimestampsS []float64 `json:"video_timestamps_s,omitempty"`
	// VisualTokens is the number of visual tokens (embeddings) in the prompt, when the runtime knows
	// it (in process); VisualGroups says per frame or frame pair how many and at which positions.
	VisualTokens int           `json:"visual_tokens,omitempty"`
	VisualGroups []VisualGroup `json:"visual_groups,omitempty"`
	// VisualCheck is the family's expected count of the request's visual tokens and, in process, the
	// count the model built (visualtokens.go); nil without frames.
	VisualCheck *VisualCheck `json:"visual_check,omitempty"`
	// VideoWarnings says, one line each, where the model sees the frames otherwise than the request
	// says: what a server re-derives (SGLang's rate, times and resize), the fps transformers 5.x would
	// derive from the metadata instead of the one sent, a fallback to images.
	VideoWarnings []string `json:"video_warnings,omitempty"`
}

// Runtime answers requests. Implementations are safe for concurrent use unless documented otherwise,
// and Close is idempotent.
type Runtime interface {
	Answer(ctx context.Context, req *Request) (*Response, error)
	Close() error
}

// Letters returns the option labels of opts: "A" for "A. cat" or "(A) cat", else the positional letter.
func Letters(opts []string) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		if l, _ := splitOption(o); l != "" {
			out[i] = l
		} else {
			out[i] = string(rune('A' + i))
		}
	}
	return out
}

// splitOption splits "A. text", "A) text", "(A) text" into ("A", "text"); ("", o) when o has no label.
func splitOption(o string) (letter, text string) {
	s := o
	if len(s) >= 3 && s[0] == '(' && isUpper(s[1]) && s[2] == ')' {
		return s[1:2], trimLeftSpace(s[3:])
	}
	if len(s) >= 2 && isUpper(s[0]) && (s[1] == '.' || s[1] == ')' || s[1] == ':') {
		return s[0:1], trimLeftSpace(s[2:])
	}
	return "", o
}

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

func trimLeftSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	return s
}

// Validate checks what every backend needs before doing work.
func (r *Request) Validate() error {
	if r == nil {
		return Errorf("answer", "", ErrBadRequest, "nil request")
	}
	if r.Question == "" && r.Prompt == nil {
		return Errorf("answer", "", ErrBadRequest, "empty question")
	}
	if len(r.Options) > 26 {
		return Errorf("answer", "", ErrBadRequest, "%d options (at most 26)", len(r.Options))
	}
	seen := map[string]bool{}
	for _, l := range Letters(r.Options) {
		if seen[l] {
			return Errorf("answer", "", ErrBadRequest, "option letter %s appears twice", l)
		}
		seen[l] = true
	}
	for i, f := range r.Frames {
		if err := f.Validate(); err != nil {
			return Errorf("answer", "", ErrBadImage, "frame %d: %v", i, err)
		}
	}
	per := r.Images()
	if r.ImagesPerFrame < 0 || len(r.Frames)%per != 0 {
		return Errorf("answer", "", ErrBadRequest, "%d images are not whole frames of %d images each", len(r.Frames), r.ImagesPerFrame)
	}
	if r.Video != nil {
		if err := r.Video.check(len(r.Frames) / per); err != nil {
			return err
		}
	}
	if _, err := TemplateByID(r.Template); err != nil {
		return err
	}
	if err := num.In(0, MaxTemperature).Float("temperature", r.Temperature); err != nil {
		return Errorf("answer", "", ErrBadRequest, "%v", err)
	}
	if err := num.In(0, MaxMaxTokens).Int("max tokens", int64(r.MaxTokens)); err != nil {
		return Errorf("answer", "", ErrBadRequest, "%v", err)
	}
	return nil
}

// Images is the number of images per frame: ImagesPerFrame, at least 1.
func (r *Request) Images() int { return max(1, r.ImagesPerFrame) }

// MaxTok returns the effective generation bound.
func (r *Request) MaxTok() int {
	if r.MaxTokens > 0 {
		return r.MaxTokens
	}
	return DefaultMaxTokens
}

// Concurrent is implemented by runtimes that answer several requests at once (an OpenAI-compatible
// server): Concurrency is how many they have in flight at most, so a caller can keep that many busy.
type Concurrent interface {
	Concurrency() int
}
