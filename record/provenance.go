package record

import "fmt"

// Provenance is what a sweep records beside the canonical fields: where the input came from and what
// it was, and what answered. The audit does not read it (Record skips these keys).
type Provenance struct {
	// The input.
	Video       string    `json:"video"`
	VideoSHA256 string    `json:"video_sha256,omitempty"`
	StreamIndex *int      `json:"stream_index,omitempty"`
	TimestampsS []float64 `json:"timestamps_s,omitempty"`
	Geometry    string    `json:"geometry,omitempty"`
	Kernel      string    `json:"kernel,omitempty"`
	Images      int       `json:"images_per_frame,omitempty"`
	Width       int       `json:"width,omitempty"` // each image fed (this video's layout)
	Height      int       `json:"height,omitempty"`
	FramesFed   int       `json:"frames_fed,omitempty"`   // plan positions fed (an fps mode's count for this video)
	InputKey    string    `json:"input_key,omitempty"`    // the cache key of the input object
	InputSHA256 string    `json:"input_sha256,omitempty"` // sha256 of the uint8 RGB frames tensor fed
	Damaged     []int     `json:"damaged,omitempty"`      // frames the decoder concealed, fed under --on-damaged keep

	// The answer.
	Runtime        string            `json:"runtime"`
	RuntimeBackend string            `json:"runtime_backend,omitempty"` // in process: the build and devices (llm.ModelInfo.Backend)
	ModelSHA256    map[string]string `json:"model_sha256,omitempty"`    // spec key → file digest
	// Decoding is how the answer was generated (every pair of a RUN alike); absent in records written
	// before it was recorded.
	Decoding         *Decoding          `json:"decoding,omitempty"`
	Template         string             `json:"template,omitempty"`
	PromptSHA256     string             `json:"prompt_sha256,omitempty"`
	Response         string             `json:"response,omitempty"`
	Probs            map[string]float64 `json:"probs,omitempty"`
	PromptTokens     int                `json:"prompt_tokens,omitempty"`
	CompletionTokens int                `json:"completion_tokens,omitempty"`
	RequestSHA256    string             `json:"request_sha256,omitempty"`
	ImageFormat      string             `json:"image_format,omitempty"`
	// How the frames reached the model (the runtime's response): "images" (one image per frame) or
	// "video" (the model's own video input: Qwen temporal pairs, InternVL frame prompts, a server's
	// video item), the exact form (InputForms), the sampling rate its processor was told and how it was found, the times sent, and
	// the prompt's visual tokens per frame or frame pair with their positions (their sum and the
	// family's expected count are the record's visual_tokens).
	InputMode        string        `json:"input_mode,omitempty"`
	InputForm        string        `json:"input_form,omitempty"` // the exact form received (llm.Response.InputForm)
	VideoFPS         float64       `json:"video_fps,omitempty"`
	VideoFPSSource   string        `json:"video_fps_source,omitempty"`
	VideoTimestampsS []float64     `json:"video_timestamps_s,omitempty"`
	VisualGroups     []VisualGroup `json:"visual_groups,omitempty"`
	// VideoWarnings: where the model sees the frames otherwise than the request says (what a server
	// re-derives, the fps transformers 5.x would derive from the metadata, a fallback to images).
	VideoWarnings []string `json:"video_warnings,omitempty"`
	At            string   `json:"at"` // UTC time the record was written
}

// Decoding is the sampling settings a runtime generated an answer under: part of a RUN's identity
// (run.json's decoding, each record's), as the runtime spec is.
type Decoding struct {
	Temperature float64 `json:"temperature"` // 0: greedy
	Seed        int64   `json:"seed"`
	MaxTokens   int     `json:"max_tokens"` // the bound in effect (the default made explicit)
}

// Check says what in d no sweep sends ("" when nothing): a temperature that is not a finite number
// ≥ 0, a generation bound below 1.
func (d *Decoding) Check() string {
	switch {
	case !nonNegative(d.Temperature):
		return fmt.Sprintf("temperature %v is not a finite number ≥ 0", d.Temperature)
	case d.MaxTokens < 1:
		return fmt.Sprintf("max_tokens %d is below 1", d.MaxTokens)
	}
	return ""
}

// VisualGroup is one frame or frame pair of the prompt as the runtime laid it out (llm.VisualGroup):
// which frames (indices into the frames fed), how many visual tokens, the merged token grid, the
// position its tokens start from, the temporal position (M-RoPE) and the text written before it.
type VisualGroup struct {
	Frames   []int  `json:"frames"`
	Tokens   int    `json:"tokens"`
	GridH    int    `json:"grid_h"`
	GridW    int    `json:"grid_w"`
	PosStart int    `json:"pos_start"`
	PosT     int    `json:"pos_t"`
	Prefix   string `json:"prefix,omitempty"`
}

// Full is one line of a sweep's records.jsonl: the canonical record and its provenance, flattened into
// one JSON object (the canonical keys first). A sweep always writes status, answer, video, runtime and
// at; the audit reads the same line as a Record.
type Full struct {
	Record
	Provenance
}

// Pair identifies one (item, config) pair: a sweep records each once.
type Pair struct{ Item, Config string }

// Key is r's pair.
func (r *Record) Key() Pair { return Pair{r.ItemID, r.Config} }

// VideoIdentity names the record's input video for grouping: the sha256 of its bytes when recorded (two
// names of one file are one video), else its name; "" when the record names none.
func (f *Full) VideoIdentity() string {
	if f.VideoSHA256 != "" {
		return "sha256:" + f.VideoSHA256
	}
	return f.Video
}
