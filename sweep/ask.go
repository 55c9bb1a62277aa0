package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/score"
	"github.com/framesweep/framesweep/resize/geom"
)

// ask asks the runtime one pair and returns its record (not yet written): the answer and its verdict,
// or status error with the runtime's reason and its kind. An answer cancelled with the session (or by
// the runtime) is no record: ask returns nil and the pair is left to --resume.
func (s *session) ask(ctx context.Context, it *items.Item, c *grid.Config, v *pipeline.Video, in *input) *record.Full {
	var job *pipeline.Job
	if in != nil {
		job = in.Job
	}
	r := s.baseRecord(it, c, v, job)
	req := s.request(it)
	if job != nil {
		in.Fill(req, v)
		r.InputSHA256, r.Damaged = in.SHA256, in.Damaged
	}
	if p, tpl, err := llm.Render(req); err == nil {
		b, _ := json.Marshal(p)
		sum := sha256.Sum256(b)
		r.PromptSHA256, r.Template = hex.EncodeToString(sum[:]), tpl.ID
	}
	resp, err := s.o.Runtime.Answer(ctx, req)
	if err == nil {
		// Nothing of a reply is copied into the record before it is checked: a bad count or
		// probability is this pair's bad reply, not a record no reader accepts.
		err = resp.Check(req)
	}
	s.model.stamp(r, err)
	if err != nil {
		if interrupted(ctx, err) {
			s.noteInterrupted(err)
			return nil
		}
		r.Status, r.Error, r.ErrorKind = record.StatusError, pipeline.OneLine(err), runtimeErrorKind(err)
		return r
	}
	r.Status = record.StatusOK
	r.Response, r.Prediction, r.Probs = resp.Text, resp.Choice, resp.Probs
	r.Template = resp.Template
	r.PromptTokens, r.CompletionTokens, r.RequestSHA256, r.ImageFormat = resp.PromptTokens, resp.CompletionTokens, resp.RequestSHA256, resp.ImageFormat
	inputForm(&r.Provenance, resp)
	lat := resp.LatencyS
	r.LatencyS = &lat
	s.addLatency(lat)
	verdict(r, it, resp)
	s.tokens.measure(ctx, r, it, req, resp.VisualCheck)
	return r
}

// verdict scores an answer with the audit's rules (record/score): a multiple-choice item by its parsed
// letter, with the confidence of the option probabilities (a reply that names no letter is marked
// unparsed: wrong, and counted apart); an open-ended one by Token-F1 of the text.
func verdict(r *record.Full, it *items.Item, resp *llm.Response) {
	if it.MultipleChoice() {
		ok := score.Choice(resp.Choice, it.Answer)
		r.Correct, r.Confidence = &ok, score.Confidence(resp.Probs)
		r.Unparsed = strings.TrimSpace(resp.Choice) == "" && !ok
		return
	}
	sc := score.TokenF1(resp.Text, append([]string{it.Answer}, it.References...)...)
	r.Score, r.Prediction = &sc, resp.Text
}

// request is the item's question under the sweep's generation settings (frames added by the caller).
func (s *session) request(it *items.Item) *llm.Request {
	req := &llm.Request{Question: it.Question, Options: it.Options, Subtitles: it.Subtitles,
		Template: it.Template, Temperature: s.o.Temperature, MaxTokens: s.o.MaxTokens, Seed: s.o.Seed}
	for _, t := range it.History {
		req.History = append(req.History, llm.Turn{Question: t.Question, Answer: t.Answer})
	}
	if req.Template == "" {
		req.Template = s.o.Template
	}
	return req
}

// errorRecord is the record of a pair that got no answer because of its input (the video cannot be
// read, the config cannot be planned for it, a frame does not decode), and why.
func (s *session) errorRecord(it *items.Item, c *grid.Config, v *pipeline.Video, err error) *record.Full {
	r := s.baseRecord(it, c, v, nil)
	// The message names the video as the record does (not by this machine's path).
	r.Status, r.Error, r.ErrorKind = record.StatusError, strings.ReplaceAll(pipeline.OneLine(err), it.Video, r.Video), record.ErrorInput
	s.model.stamp(r, nil) // not the runtime's refusal: the pair never reached it
	return r
}

// baseRecord is the part of a record known before the answer.
func (s *session) baseRecord(it *items.Item, c *grid.Config, v *pipeline.Video, j *pipeline.Job) *record.Full {
	r := &record.Full{
		Record: record.Record{ItemID: it.ItemID, Config: c.ID, Answer: it.Answer, Category: it.Category, Duration: it.Duration,
			Task: it.Task, ConfigMeta: configMeta(c)},
		Provenance: record.Provenance{Video: s.videos.name(it.Video), Runtime: s.runtime.Spec, ModelSHA256: s.runtime.ModelSHA256, Decoding: s.decoding},
	}
	if v != nil {
		r.VideoSHA256 = v.SHA256
		si := v.Info.StreamIndex
		r.StreamIndex = &si
	}
	if j != nil {
		r.ConfigMeta.Indices = j.Selection.Indices
		r.TimestampsS = j.Selection.TimestampsS
		r.Geometry, r.Kernel, r.Images, r.InputKey = j.Geometry, j.Spec.Kernel, j.Images, j.Key
		r.Width, r.Height, r.FramesFed = j.Width, j.Height, j.Frames()
	}
	return r
}

// configMeta is a config's config_meta: what is the same on every record of the config (the audit
// requires that). frames is the budget (absent in fps mode, where it depends on the video); width
// and height are the fixed size, or for geometries that depend on the source the size a 1920×1080
// source gets at the budget (nominal: a cost for ordering configs; each record's own size is in its
// width/height fields).
func configMeta(c *grid.Config) *record.ConfigMeta {
	m := &record.ConfigMeta{Policy: c.Policy, Preset: c.Preset, Pipeline: c.Pipeline, Loader: c.Loader}
	tt := c.TextOnly
	m.TextOnly = &tt
	if c.TextOnly {
		zero := 0
		m.Frames = &zero
		m.Pipeline = ""
		return m
	}
	if c.Frames > 0 {
		n := c.Frames
		m.Frames = &n
	}
	if strings.HasPrefix(c.Policy, "random") {
		sd := int64(c.Seed)
		m.Seed = &sd
	}
	if g := c.Geometry(); g != nil && c.Frames > 0 {
		w, h := 1920, 1080
		if fx, ok := g.(geom.Fixed); ok {
			w, h = fx.W, fx.H
		}
		if l, err := g.Layout(w, h, c.Frames); err == nil {
			if iw, ih, images, err := l.ImageSize(); err == nil {
				iw2, ih2 := iw, ih*images // tiles count as pixels fed
				m.Width, m.Height = &iw2, &ih2
			}
		}
	}
	return m
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// VideoTiming is when the frames of job were shown, for a runtime that feeds them as the model's
// video (llm.VideoTiming): their source indices and timestamps from the plan, the video's frame rate
// and count, and the sampling rate the preset reports (qwen-vl-utils' sample_fps); one entry per
// frame when each frame is several images (tiles: llm.Request.ImagesPerFrame = j.Images). nil when
// the images fed are not the plan's frames.
func VideoTiming(v *pipeline.Video, j *pipeline.Job, images int) *llm.VideoTiming {
	if j == nil || v == nil || j.Images < 1 || len(j.Selection.TimestampsS)*j.Images != images {
		return nil
	}
	return &llm.VideoTiming{TimestampsS: j.Selection.TimestampsS, Indices: j.Selection.Indices,
		SourceFPS: v.Info.FPS, TotalFrames: v.Info.Frames, SampleFPS: j.Selection.SampleFPS}
}

// inputForm copies how the frames reached the model from the runtime's response into the record.
func inputForm(p *record.Provenance, resp *llm.Response) {
	p.InputMode, p.InputForm, p.VideoFPS, p.VideoFPSSource = resp.InputMode, resp.InputForm, resp.VideoFPS, resp.VideoFPSSource
	p.VideoTimestampsS, p.VideoWarnings = resp.VideoTimestampsS, resp.VideoWarnings
	p.VisualGroups = nil
	for _, g := range resp.VisualGroups {
		p.VisualGroups = append(p.VisualGroups, record.VisualGroup{Frames: g.Frames, Tokens: g.Tokens,
			GridH: g.GridH, GridW: g.GridW, PosStart: g.PosStart, PosT: g.PosT, Prefix: g.Prefix})
	}
}
