package record

import "math"

// Record is one model answer for one item under one configuration: the canonical fields of
// METRICS.md "Records", the ones the audit reads. Pointer fields are optional: nil means unknown,
// never zero. A sweep's records carry more (Provenance; Full is both).
type Record struct {
	ItemID string `json:"item_id"`
	Config string `json:"config"`
	// Status is "error" for a pair a sweep could not answer (Error says why); such records carry no
	// verdict and are counted, reported and left out of every metric. "" or "ok" otherwise.
	Status     string   `json:"status,omitempty"`
	Run        *int     `json:"run,omitempty"`
	Correct    *bool    `json:"correct,omitempty"`
	Score      *float64 `json:"score,omitempty"` // open-ended: 0–1 (a sweep's: Token-F1 of the response)
	Prediction string   `json:"prediction,omitempty"`
	// Unparsed marks a multiple-choice answer whose text named no option letter (the template's
	// parser, or the harness's, found none): its correct is false, and the audit counts and shows it
	// apart from wrong letters (docs/audit.md "Unparsed answers").
	Unparsed   bool        `json:"unparsed,omitempty"`
	Answer     string      `json:"answer,omitempty"`
	Confidence *float64    `json:"confidence,omitempty"` // the largest option probability
	Category   string      `json:"category,omitempty"`
	Duration   string      `json:"duration,omitempty"`
	QuestionID string      `json:"question_id,omitempty"`
	Task       string      `json:"task,omitempty"`
	DocHash    string      `json:"doc_hash,omitempty"` // the harness's hash of the item's document (drift check)
	ConfigMeta *ConfigMeta `json:"config_meta,omitempty"`
	LatencyS   *float64    `json:"latency_s,omitempty"` // the runtime's own time for this answer
	// VisualTokens checks that the model counted the visual tokens the frames fed make
	// (visualtokens.go); nil without frames, and in records written before the check.
	VisualTokens *VisualTokens `json:"visual_tokens,omitempty"`
	Harness      *Harness      `json:"harness,omitempty"` // imported logs: the harness's own aggregate
	Error        string        `json:"error,omitempty"`
	// ErrorKind classifies an error record's error (ErrorTransient, ErrorInput, ErrorRuntime): what
	// asking again can change. Records written before it existed have none (not transient).
	ErrorKind string `json:"error_kind,omitempty"`
	// Cascade is an online cascade's step (`framesweep sweep --cascade`); nil otherwise.
	Cascade *CascadeStep `json:"cascade,omitempty"`

	// The model that answered (docs/audit.md "Several models"). Model is its name: a sweep writes the
	// runtime's model id, `import --model` the one given. Records of one model may leave it out; an
	// audit over several models needs it on every record, and one name means one set of weights.
	Model string `json:"model,omitempty"`
	// WeightsSHA256 digests the weights the runtime loaded: the sha256 of its one model file, or of
	// the lines "KEY SHA256\n" of every file (model_sha256), sorted by key; "" for a server.
	WeightsSHA256 string `json:"weights_sha256,omitempty"`
	// ContextTokens is the runtime's context size in tokens, when it reports one.
	ContextTokens *int `json:"context_tokens,omitempty"`
	// OverContext marks an error record whose prompt the runtime refused as longer than its context
	// (or over its image limit): the config is beyond the model's context ceiling.
	OverContext bool `json:"over_context,omitempty"`
	// Origin is what an imported table says of where its row came from (a study's source_tag and
	// protocol_note); nil otherwise. No metric reads it: it travels with the record as provenance.
	Origin *Origin `json:"origin,omitempty"`

	// Source locates the record for error messages (file:line); it is not serialised.
	Source Source `json:"-"`
	// VideoKey names the input video of the record's provenance (Full.VideoIdentity: its sha256, else
	// its name), kept by the readers beside the canonical fields so that the audit can resample the
	// items of one video together (its cluster bootstrap); not serialised.
	VideoKey string `json:"-"`
}

// Origin is an imported row's provenance as its table gives it: the study's source_tag (which run or
// file produced the answer) and protocol_note (its caveats: a fallback input size, a context cap).
type Origin struct {
	SourceTag    string `json:"source_tag,omitempty"`
	ProtocolNote string `json:"protocol_note,omitempty"`
}

// MaxOriginBytes bounds each text of an Origin.
const MaxOriginBytes = 4096

// Source is where a record was read from.
type Source struct {
	Path string
	Line int
}

// ConfigMeta describes a configuration. Any record of the config may carry it; missing fields are
// unknown. Indices (the frame indices fed for this record's video) is per record, used for the cascade's
// shared frame cost; every other field must agree across the records of one config.
type ConfigMeta struct {
	Frames   *int   `json:"frames,omitempty"`
	TextOnly *bool  `json:"text_only,omitempty"`
	Width    *int   `json:"width,omitempty"`
	Height   *int   `json:"height,omitempty"`
	Policy   string `json:"policy,omitempty"`
	Preset   string `json:"preset,omitempty"`
	Seed     *int64 `json:"seed,omitempty"`
	Pipeline string `json:"pipeline,omitempty"`
	Indices  []int  `json:"indices,omitempty"`
	// Loader is the harness loader whose reader made the frames (lmms-eval, qwen-vl-utils, …; absent:
	// framesweep's own exact reading).
	Loader string `json:"loader,omitempty"`
	// MaxPixels is the per-frame pixel budget of a config whose size depends on the video (Qwen's
	// max_pixels, given on import): with no width and height, the config costs frames × max_pixels.
	MaxPixels *int `json:"max_pixels,omitempty"`
}

// CascadeStep is the cascade part of an online-cascade record (`framesweep sweep --cascade`): the
// record's step in the ladder and, on an item's final record, where it stopped.
type CascadeStep struct {
	Threshold float64 `json:"threshold"`
	Budgets   []int   `json:"budgets"`
	Step      int     `json:"step"`  // 1-based position of this record's budget in the ladder
	Final     bool    `json:"final"` // the item's answer: confident enough, the top budget, or an error
	// StoppedAt is the budget (frames) the item stopped at, on its final record.
	StoppedAt int `json:"stopped_at,omitempty"`
	// FramesFed is the frames fed to the item over every step so far; FramesDistinct the distinct
	// frames of the index sets tried so far (what decoding them once costs).
	FramesFed      int `json:"frames_fed_total"`
	FramesDistinct int `json:"frames_distinct"`
	// StepBuildS is the wall-clock of building this step's input for the video (decoding the frames
	// not decoded before, resizing), shared by every item asked at the step; StepWallS is this item's
	// wall-clock at the step: the build plus its answer.
	StepBuildS float64 `json:"step_build_s"`
	StepWallS  float64 `json:"step_wall_s"`
}

// Harness is what the evaluation harness that wrote an imported log reported for that log (its own
// aggregate, which the importer computes with the harness's rule from the harness's own per-item
// verdicts) and how this record enters it. Importers put the same metric, kind, value and counts on
// every record of one file, so the audit can show the harness's number beside the item-level accuracy
// and notice when the records were filtered or merged afterwards.
type Harness struct {
	Metric  string  `json:"metric"`             // e.g. "lmms-eval mlvu_dev mlvu_percetion_score (M-avg over 7 task types)"
	Kind    string  `json:"kind"`               // HarnessMicro, HarnessMacro, HarnessGrouped or HarnessOther
	Value   float64 `json:"value"`              // the aggregate over the imported file, in points (0–100)
	Counted int     `json:"counted"`            // records the aggregate counts
	LeftOut int     `json:"left_out,omitempty"` // records of the file the aggregate leaves out
	Skip    bool    `json:"skip,omitempty"`     // this record is one of those left out
	Flipped bool    `json:"flipped,omitempty"`  // this record's verdict is not the harness's (an opt-in rescore changed it)
}

// Harness aggregate kinds. Only a micro aggregate can be recomputed from the records alone (and split by
// duration); the others need the harness's own grouping, so the audit carries their value as imported.
const (
	HarnessMicro   = "micro"   // 100 · mean of the harness's verdicts (or scores) over the counted records
	HarnessMacro   = "macro"   // mean over a fixed list of categories of the per-category accuracy
	HarnessGrouped = "grouped" // a non-linear score per group of questions (Video-MME-v2), averaged
	HarnessOther   = "other"   // any other rule (VLMEvalKit MVBench counts any non-zero score as a hit)
)

// Record statuses.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Failed reports whether r is an error record (a pair that got no answer).
func (r *Record) Failed() bool { return r.Status == StatusError }

// RunIndex is the record's run number (0 when the field is absent).
func (r *Record) RunIndex() int {
	if r.Run == nil {
		return 0
	}
	return *r.Run
}

// Validate checks one record against METRICS.md "Records".
func (r *Record) Validate() error {
	p, l := r.Source.Path, r.Source.Line
	if err := r.validStrings(); err != nil {
		return err
	}
	if err := r.checkErrorKind(); err != nil {
		return err
	}
	switch {
	case r.ItemID == "":
		return Errorf(p, l, "validate", ErrInvalid, "missing item_id")
	case r.Config == "":
		return Errorf(p, l, "validate", ErrInvalid, "item %q: missing config", r.ItemID)
	case r.Status != "" && r.Status != StatusOK && r.Status != StatusError:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: status %q (want ok or error)", r.ItemID, r.Config, r.Status)
	case r.Status == StatusError:
		if r.Correct != nil || r.Score != nil || r.Unparsed {
			return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: an error record has a verdict", r.ItemID, r.Config)
		}
		if why := r.VisualTokens.validate(); why != "" {
			return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: visual_tokens: %s", r.ItemID, r.Config, why)
		}
		return r.validateModel()
	case r.OverContext:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: over_context on a record that is not an error", r.ItemID, r.Config)
	case r.Correct == nil && r.Score == nil:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: needs correct (multiple choice) or score (open-ended)", r.ItemID, r.Config)
	case r.Correct != nil && r.Score != nil:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: has both correct and score", r.ItemID, r.Config)
	case r.Unparsed && (r.Correct == nil || *r.Correct):
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: unparsed marks a multiple-choice answer with no option letter, which cannot be correct", r.ItemID, r.Config)
	}
	if err := r.validateValues(); err != nil {
		return err
	}
	if err := r.validateModel(); err != nil {
		return err
	}
	if why := r.VisualTokens.validate(); why != "" {
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: visual_tokens: %s", r.ItemID, r.Config, why)
	}
	if err := r.ConfigMeta.validate(r.Config, r.Source); err != nil {
		return err
	}
	return r.validateHarness()
}

// validateValues checks the numbers' ranges.
func (r *Record) validateValues() error {
	p, l := r.Source.Path, r.Source.Line
	switch {
	case r.Score != nil && !(*r.Score >= 0 && *r.Score <= 1):
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: score %v outside [0,1]", r.ItemID, r.Config, *r.Score)
	case r.Confidence != nil && !(*r.Confidence >= 0 && *r.Confidence <= 1):
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: confidence %v outside [0,1]", r.ItemID, r.Config, *r.Confidence)
	case r.LatencyS != nil && !(*r.LatencyS >= 0 && !math.IsInf(*r.LatencyS, 1)):
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: latency_s %v is negative", r.ItemID, r.Config, *r.LatencyS)
	case r.Run != nil && *r.Run < 0:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: run %d is negative", r.ItemID, r.Config, *r.Run)
	}
	if r.Duration != "" {
		if err := CheckDuration("duration", r.Duration); err != nil {
			return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: %v", r.ItemID, r.Config, err)
		}
	}
	return nil
}

// validate checks a config_meta (nil is valid: nothing known).
func (m *ConfigMeta) validate(config string, src Source) error {
	if m == nil {
		return nil
	}
	p, l := src.Path, src.Line
	if err := m.validateRanges(config, src); err != nil {
		return err
	}
	for _, ix := range m.Indices {
		if ix < 0 {
			return Errorf(p, l, "validate", ErrInvalid, "config %q: negative frame index %d", config, ix)
		}
	}
	if m.TextOnly != nil && *m.TextOnly && m.Frames != nil && *m.Frames != 0 {
		return Errorf(p, l, "validate", ErrInvalid, "config %q: text_only with frames %d", config, *m.Frames)
	}
	return nil
}

// validateHarness checks a record's harness field (called by Validate).
func (r *Record) validateHarness() error {
	h, p, l := r.Harness, r.Source.Path, r.Source.Line
	if h == nil {
		return nil
	}
	switch {
	case h.Metric == "":
		return Errorf(p, l, "validate", ErrInvalid, "harness without a metric")
	case h.Kind != HarnessMicro && h.Kind != HarnessMacro && h.Kind != HarnessGrouped && h.Kind != HarnessOther:
		return Errorf(p, l, "validate", ErrInvalid, "harness %q: kind %q is not micro, macro, grouped or other", h.Metric, h.Kind)
	case !(h.Value >= 0 && h.Value <= 100):
		return Errorf(p, l, "validate", ErrInvalid, "harness %q: value %v outside [0,100]", h.Metric, h.Value)
	case h.Counted < 0 || h.LeftOut < 0:
		return Errorf(p, l, "validate", ErrInvalid, "harness %q: negative counts", h.Metric)
	case h.Flipped && r.Correct == nil:
		return Errorf(p, l, "validate", ErrInvalid, "harness %q: flipped needs a multiple-choice verdict", h.Metric)
	}
	return nil
}
