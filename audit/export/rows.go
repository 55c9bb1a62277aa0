package export

import (
	"encoding/json"
	"math"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/record"
)

// RecordRow is one answer (item × config × model × run) flat, for Parquet: records.jsonl holds the
// same rows as record.Full lines. Nested values (model_sha256, probs) are JSON text; a missing
// number is null.
type RecordRow struct {
	Model         string    `parquet:"model"`
	ItemID        string    `parquet:"item_id"`
	Config        string    `parquet:"config"`
	Run           int64     `parquet:"run"`
	Status        string    `parquet:"status"`
	Correct       *bool     `parquet:"correct,optional"`
	Score         *float64  `parquet:"score,optional"`
	Prediction    string    `parquet:"prediction"`
	Unparsed      bool      `parquet:"unparsed"`
	Answer        string    `parquet:"answer"`
	Confidence    *float64  `parquet:"confidence,optional"`
	LatencyS      *float64  `parquet:"latency_s,optional"`
	Error         string    `parquet:"error"`
	OverContext   bool      `parquet:"over_context"`
	Category      string    `parquet:"category"`
	Duration      string    `parquet:"duration"`
	Task          string    `parquet:"task"`
	QuestionID    string    `parquet:"question_id"`
	Frames        *int64    `parquet:"frames,optional"`
	TextOnly      *bool     `parquet:"text_only,optional"`
	Width         *int64    `parquet:"config_width,optional"`
	Height        *int64    `parquet:"config_height,optional"`
	Policy        string    `parquet:"policy"`
	Preset        string    `parquet:"preset"`
	Seed          *int64    `parquet:"seed,optional"`
	Pipeline      string    `parquet:"pipeline"`
	MaxPixels     *int64    `parquet:"max_pixels,optional"`
	Indices       []int64   `parquet:"indices,list"`
	Video         string    `parquet:"video"`
	VideoSHA256   string    `parquet:"video_sha256"`
	TimestampsS   []float64 `parquet:"timestamps_s,list"`
	Geometry      string    `parquet:"geometry"`
	Kernel        string    `parquet:"kernel"`
	InputWidth    int64     `parquet:"width"`
	InputHeight   int64     `parquet:"height"`
	InputKey      string    `parquet:"input_key"`
	InputSHA256   string    `parquet:"input_sha256"`
	Runtime       string    `parquet:"runtime"`
	WeightsSHA256 string    `parquet:"weights_sha256"`
	ModelSHA256   string    `parquet:"model_sha256"` // JSON object: spec key → sha256
	ContextTokens *int64    `parquet:"context_tokens,optional"`
	Template      string    `parquet:"template"`
	PromptSHA256  string    `parquet:"prompt_sha256"`
	Response      string    `parquet:"response"`
	Probs         string    `parquet:"probs"` // JSON object: option letter → probability
	PromptTokens  int64     `parquet:"prompt_tokens"`
	CompletionTok int64     `parquet:"completion_tokens"`
	RequestSHA256 string    `parquet:"request_sha256"`
	ImageFormat   string    `parquet:"image_format"`
	VisualTokens  string    `parquet:"visual_tokens"` // JSON object: the visual-token check ("" without one)
	At            string    `parquet:"at"`
	Source        int64     `parquet:"source"` // index into export.json "sources"
}

func i64p(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

func jsonText(v any) string {
	switch m := v.(type) {
	case map[string]string:
		if len(m) == 0 {
			return ""
		}
	case map[string]float64:
		if len(m) == 0 {
			return ""
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// recordRow flattens one full record.
func recordRow(f *record.Full, source int) RecordRow {
	r := RecordRow{Model: f.Model, ItemID: f.ItemID, Config: f.Config, Run: int64(f.RunIndex()), Status: f.Status, Correct: f.Correct, Score: f.Score,
		Prediction: f.Prediction, Unparsed: f.Unparsed, Answer: f.Answer, Confidence: f.Confidence, LatencyS: f.LatencyS, Error: f.Error, OverContext: f.OverContext,
		Category: f.Category, Duration: f.Duration, Task: f.Task, QuestionID: f.QuestionID, Video: f.Video, VideoSHA256: f.VideoSHA256,
		TimestampsS: f.TimestampsS, Geometry: f.Geometry, Kernel: f.Kernel, InputWidth: int64(f.Provenance.Width), InputHeight: int64(f.Provenance.Height),
		InputKey: f.InputKey, InputSHA256: f.InputSHA256, Runtime: f.Runtime, WeightsSHA256: f.WeightsSHA256, ModelSHA256: jsonText(f.ModelSHA256),
		ContextTokens: i64p(f.ContextTokens), Template: f.Template, PromptSHA256: f.PromptSHA256, Response: f.Response, Probs: jsonText(f.Probs),
		PromptTokens: int64(f.PromptTokens), CompletionTok: int64(f.CompletionTokens), RequestSHA256: f.RequestSHA256, ImageFormat: f.ImageFormat,
		At: f.At, Source: int64(source)}
	if r.Status == "" {
		r.Status = record.StatusOK
	}
	if f.VisualTokens != nil {
		r.VisualTokens = jsonText(f.VisualTokens)
	}
	if m := f.ConfigMeta; m != nil {
		r.Frames, r.TextOnly, r.Width, r.Height = i64p(m.Frames), m.TextOnly, i64p(m.Width), i64p(m.Height)
		r.Policy, r.Preset, r.Seed, r.Pipeline, r.MaxPixels = m.Policy, m.Preset, m.Seed, m.Pipeline, i64p(m.MaxPixels)
		for _, ix := range m.Indices {
			r.Indices = append(r.Indices, int64(ix))
		}
	}
	return r
}

// TrajectoryRow is one item of one model: its verdict in every multiple-choice config of the model's
// grid (Trajectory: one character per config of export.json models[].mc_configs, '1' correct, '0'
// wrong, '.' no answer), its scores in the open-ended configs, and the tags the audit derives. Tags
// are null for an item outside the audit's paired items.
type TrajectoryRow struct {
	Model                  string     `parquet:"model" json:"model"`
	ItemID                 string     `parquet:"item_id" json:"item_id"`
	Task                   string     `parquet:"task" json:"task"`
	Category               string     `parquet:"category" json:"category"`
	Duration               string     `parquet:"duration" json:"duration"`
	Trajectory             string     `parquet:"trajectory" json:"trajectory"`
	Scores                 []float64  `parquet:"scores,list" json:"-"` // NaN: no score (JSON: null)
	ScoresJSON             []*float64 `parquet:"-" json:"scores"`
	Paired                 bool       `parquet:"paired" json:"paired"`
	Confused               *bool      `parquet:"confused,optional" json:"confused"`
	ConfusedVisualOnly     *bool      `parquet:"confused_visual_only,optional" json:"confused_visual_only"`
	TextCorrect            *bool      `parquet:"text_correct,optional" json:"text_correct"`
	TextOverwrite          *bool      `parquet:"text_overwrite,optional" json:"text_overwrite"`
	TextOverwriteAllVisual *bool      `parquet:"text_overwrite_all_visual,optional" json:"text_overwrite_all_visual"`
	TerminalRegression     *bool      `parquet:"terminal_regression,optional" json:"terminal_regression"`
	Unstable               *bool      `parquet:"unstable,optional" json:"unstable"`
	OracleCorrect          *bool      `parquet:"oracle_correct,optional" json:"oracle_correct"`
	Rescued                []int64    `parquet:"rescued,list" json:"rescued"`
	Harmed                 []int64    `parquet:"harmed,list" json:"harmed"`
	OracleBest             []string   `parquet:"oracle_best,list" json:"oracle_best"`
	ConfusedInModels       *int64     `parquet:"confused_in_models,optional" json:"confused_in_models"`
}

// trajectoryRows turns every model's trajectories into rows; with several models each paired item
// (task and id) also says in how many models it is confused, unless some model's confusion is
// undefined (its configs have no order).
func trajectoryRows(sets []audit.ModelTrajectories) []TrajectoryRow {
	type key struct{ task, id string }
	inK := map[key]int64{}
	paired := map[key]int{}
	models := map[string]bool{}
	countK := true
	for _, s := range sets {
		models[s.Model] = true
		if _, undef := s.Set.Undefined["confused"]; undef {
			countK = false
		}
		for _, t := range s.Set.Items {
			if t.Paired {
				paired[key{t.Task, t.ItemID}]++
				if t.Tags.Confused {
					inK[key{t.Task, t.ItemID}]++
				}
			}
		}
	}
	var out []TrajectoryRow
	for _, s := range sets {
		for _, t := range s.Set.Items {
			row := trajectoryRow(s.Model, &t, s.Set.Undefined)
			k := key{t.Task, t.ItemID}
			if n := len(models); countK && n > 1 && t.Paired && paired[k] == n {
				c := inK[k]
				row.ConfusedInModels = &c
			}
			out = append(out, row)
		}
	}
	return out
}

func trajectoryRow(model string, t *audit.Trajectory, undefined map[string]string) TrajectoryRow {
	row := TrajectoryRow{Model: model, ItemID: t.ItemID, Task: t.Task, Category: t.Category, Duration: t.Duration, Paired: t.Paired,
		OracleBest: t.OracleBest, ScoresJSON: t.Scores, Rescued: []int64{}, Harmed: []int64{}}
	traj := make([]byte, len(t.Correct))
	for j, c := range t.Correct {
		switch {
		case c == nil:
			traj[j] = '.'
		case *c:
			traj[j] = '1'
		default:
			traj[j] = '0'
		}
	}
	row.Trajectory = string(traj)
	for _, s := range t.Scores {
		v := math.NaN()
		if s != nil {
			v = *s
		}
		row.Scores = append(row.Scores, v)
	}
	if !t.Paired {
		return row
	}
	tg := t.Tags
	b := func(key string, v bool) *bool {
		if _, undef := undefined[key]; undef {
			return nil // undefined for every item (no order over the configs), not false
		}
		return &v
	}
	row.Confused, row.ConfusedVisualOnly, row.TextCorrect, row.TextOverwrite = b("confused", tg.Confused), b("confused_visual_only", tg.ConfusedVisualOnly), b("text_correct", tg.TextCorrect), b("text_overwrite", tg.TextOverwrite)
	row.TextOverwriteAllVisual, row.TerminalRegression, row.Unstable, row.OracleCorrect = b("text_overwrite_all_visual", tg.TextOverwriteAllVisual), b("terminal_regression", tg.TerminalRegression), b("unstable", tg.Unstable), b("oracle_correct", tg.OracleCorrect)
	for _, i := range t.Rescued {
		row.Rescued = append(row.Rescued, int64(i))
	}
	for _, i := range t.Harmed {
		row.Harmed = append(row.Harmed, int64(i))
	}
	return row
}
