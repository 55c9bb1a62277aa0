package record

import "math"

// Values a sweep writes in its provenance (llm.InputImages and llm.InputVideo; llm.InputForms;
// llm.FPSGiven, llm.FPSSampled and llm.FPSTimestamps: record does not import llm, and sweep's
// TestProvenanceValueSets holds the lists equal).
var (
	InputModes = []string{"images", "video"}
	InputForms = []string{"images", "qwen2vl-video", "qwen25vl-video", "qwen3vl-video", "internvl-frames",
		"image_url", "vllm-video-jpeg", "sglang-video-mp4"}
	FPSSources = []string{"given", "sample_fps", "timestamps"}
)

// Validate checks a sweep's record line: the canonical record (Record.Validate) and its provenance.
func (f *Full) Validate() error {
	if err := f.Record.Validate(); err != nil {
		return err
	}
	return f.Provenance.validate(&f.Record)
}

// Upgrade fills in what records written by older sweeps leave implicit: a multiple-choice answer of
// a sweep (it names its template) whose parsed letter is empty is unparsed. Every reader of record
// lines calls it after decoding.
func (f *Full) Upgrade() {
	if f.Template != "" && f.Correct != nil && !*f.Correct && f.Prediction == "" && !f.Failed() {
		f.Unparsed = true
	}
}

// validate checks the provenance's values: the sets above, digests of 64 lower-case hex digits,
// counts, sizes and indices not negative, times and rates finite and not negative, probabilities in
// [0,1]. (Their types are the decoder's to check: a value of the wrong type does not decode.)
func (p *Provenance) validate(r *Record) error {
	bad := func(format string, a ...any) error {
		return Errorf(r.Source.Path, r.Source.Line, "validate", ErrInvalid, "item %q config %q: "+format, append([]any{r.ItemID, r.Config}, a...)...)
	}
	for _, d := range [...]struct{ name, v string }{{"video_sha256", p.VideoSHA256}, {"input_sha256", p.InputSHA256},
		{"prompt_sha256", p.PromptSHA256}, {"request_sha256", p.RequestSHA256}} {
		if d.v != "" && !isSHA256(d.v) {
			return bad("%s %q is not 64 lower-case hex digits", d.name, d.v)
		}
	}
	for k, d := range p.ModelSHA256 {
		if k == "" || !isSHA256(d) {
			return bad("model_sha256 %q: %q is not 64 lower-case hex digits", k, d)
		}
	}
	if p.InputMode != "" && !oneOf(p.InputMode, InputModes) {
		return bad("input_mode %q (want images or video)", p.InputMode)
	}
	if p.InputForm != "" && !oneOf(p.InputForm, InputForms) {
		return bad("input_form %q (want one of %v)", p.InputForm, InputForms)
	}
	if p.VideoFPSSource != "" && !oneOf(p.VideoFPSSource, FPSSources) {
		return bad("video_fps_source %q (want given, sample_fps or timestamps)", p.VideoFPSSource)
	}
	if !nonNegative(p.VideoFPS) || (p.VideoFPS > 0) != (p.VideoFPSSource != "") {
		return bad("video_fps %v with video_fps_source %q (a positive rate and where it came from go together)", p.VideoFPS, p.VideoFPSSource)
	}
	for _, ts := range [...]struct {
		name string
		v    []float64
	}{{"timestamps_s", p.TimestampsS}, {"video_timestamps_s", p.VideoTimestampsS}} {
		for i, t := range ts.v {
			if !nonNegative(t) {
				return bad("%s[%d] %v is not a time ≥ 0", ts.name, i, t)
			}
		}
	}
	for _, n := range [...]struct {
		name string
		v    int
	}{{"images_per_frame", p.Images}, {"width", p.Width}, {"height", p.Height}, {"frames_fed", p.FramesFed},
		{"prompt_tokens", p.PromptTokens}, {"completion_tokens", p.CompletionTokens}} {
		if n.v < 0 {
			return bad("%s %d is negative", n.name, n.v)
		}
	}
	if p.Decoding != nil {
		if why := p.Decoding.Check(); why != "" {
			return bad("decoding: %s", why)
		}
	}
	if p.StreamIndex != nil && *p.StreamIndex < 0 {
		return bad("stream_index %d is negative", *p.StreamIndex)
	}
	for i, x := range p.Damaged {
		if x < 0 {
			return bad("damaged[%d] %d is negative", i, x)
		}
	}
	for k, v := range p.Probs {
		if !(v >= 0 && v <= 1) {
			return bad("probs[%q] %v outside [0,1]", k, v)
		}
	}
	for i, g := range p.VisualGroups {
		if err := g.validate(); err != "" {
			return bad("visual_groups[%d]: %s", i, err)
		}
	}
	return nil
}

// validate says what is wrong with a visual group ("" when nothing is).
func (g *VisualGroup) validate() string {
	switch {
	case g.Tokens < 0 || g.GridH < 0 || g.GridW < 0:
		return "negative tokens or grid"
	case g.PosStart < 0 || g.PosT < 0:
		return "negative position"
	}
	for _, f := range g.Frames {
		if f < 0 {
			return "negative frame index"
		}
	}
	return ""
}

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

func nonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
