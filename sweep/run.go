package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// Progress follows a sweep: Start with the pairs to do, Pair after each.
type Progress interface {
	Start(total int)
	Pair(r *record.Full)
	Finish()
}

// Summary is a sweep's closing report (`framesweep sweep`'s JSON).
type Summary struct {
	Run            string  `json:"run"`
	Records        string  `json:"records"`
	Items          int     `json:"items"`
	Configs        int     `json:"configs"`
	Videos         int     `json:"videos"` // videos with items in this shard
	VideosOther    int     `json:"videos_other_shards,omitempty"`
	Pairs          int     `json:"pairs"`           // items × configs in this shard
	PairsRecorded  int     `json:"pairs_recorded"`  // already in RUN before this session (and not asked again)
	PairsRetried   int     `json:"pairs_retried"`   // failed pairs asked again (transient errors; all with --retry-errors)
	PairsDone      int     `json:"pairs_done"`      // answered this session
	PairsFailed    int     `json:"pairs_failed"`    // error records written this session
	PairsRemaining int     `json:"pairs_remaining"` // not recorded (an interrupted session)
	TornBytes      int64   `json:"torn_bytes_cut"`  // an interrupted line cut on resume
	FramesDecoded  int     `json:"frames_decoded"`  // over all videos (= the unions: decoded once)
	FramesUnion    int     `json:"frames_union"`    // distinct frames the built inputs needed
	InputsBuilt    int     `json:"inputs_built"`    // objects decoded this session
	InputsCached   int     `json:"inputs_cached"`   // objects found in the store (decoded nothing)
	InputsRebuilt  int     `json:"inputs_rebuilt"`  // objects found corrupt or gone when read, built again
	RuntimeSeconds float64 `json:"runtime_seconds"` // the runtime's own time, summed over pairs
	Seconds        float64 `json:"seconds"`
	Stopped        string  `json:"stopped,omitempty"` // what ended the session early: "signal", or "error" (the store, the records)
	// Cascade: an online cascade's outcome (pairs_* then count records, one per item and step asked).
	Cascade  *CascadeSummary `json:"cascade,omitempty"`
	PerVideo []VideoSummary  `json:"per_video"`
	// VisualTokenWarnings: one line per config whose visual tokens the model counted otherwise than
	// its frames make (visualtokens.go), in the order they were warned about.
	VisualTokenWarnings []string `json:"visual_token_warnings,omitempty"`
}

// VideoSummary is one video's part of a sweep session.
type VideoSummary struct {
	Video         string `json:"video"`
	SHA256        string `json:"sha256,omitempty"`
	Items         int    `json:"items"`
	PairsDone     int    `json:"pairs_done"`
	PairsFailed   int    `json:"pairs_failed"`
	FramesUnion   int    `json:"frames_union"`
	FramesDecoded int    `json:"frames_decoded"`
	InputsBuilt   int    `json:"inputs_built"`
	InputsCached  int    `json:"inputs_cached"`
	InputsRebuilt int    `json:"inputs_rebuilt,omitempty"`
	// FramesHeld: an online cascade's most source-size frames kept at once for later steps.
	FramesHeld int     `json:"frames_held,omitempty"`
	Seconds    float64 `json:"seconds"`
}

// ErrInterrupted is returned (with the summary) when a signal stopped the session: the RUN is
// consistent and `--resume` continues it.
var ErrInterrupted = errors.New("interrupted")

// Run performs the sweep. stop ends the session gracefully when closed: nothing more is sent (no new
// pair starts, a pair queued is not asked, the runtime sends no retry: llm.WithStop), and the answers
// in flight have Options.StopGrace to finish and be recorded before they are cancelled and left to
// --resume. ctx cancels everything at once (in-flight answers too,
// and they are left to --resume, never recorded). It returns the summary also when pairs failed
// (Summary.PairsFailed); the error is for the session itself: the RUN cannot be written or belongs to
// another sweep, the input store failed (*StoreError: a full disk, an I/O error), or
// ErrInterrupted. Such an error stops every video; the pairs it leaves unanswered get no record.
func Run(ctx context.Context, stop <-chan struct{}, o Options) (*Summary, error) {
	start := time.Now()
	o.withDefaults()
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Grid == nil || o.Items == nil || o.Runtime == nil {
		return nil, optErr("a sweep needs a grid, items and a runtime")
	}
	if err := o.adoptTensorInput(); err != nil {
		return nil, err
	}
	if err := checkTemplates(o.Items); err != nil {
		return nil, err
	}
	// Options a config cannot be built under (a loader config with worker isolation, say) fail the
	// sweep once here, not every video's pairs.
	if err := pipeline.CheckConfigs(o.Grid.Configs, o.Input); err != nil {
		return nil, &OptionsError{Msg: err.Error()}
	}
	// With --worker, one pool of at most Jobs worker processes decodes every video.
	var endWorkers func()
	o.Input, endWorkers = o.Input.WithWorkerPool(o.Jobs)
	defer endWorkers()
	var steps []*grid.Config
	if o.Cascade != nil {
		var err error
		if steps, err = cascadeSteps(o.Grid, o.Cascade); err != nil {
			return nil, err
		}
	}
	w, err := runs.OpenWriter(ctx, runs.WriterOptions{Loc: o.Out, Info: o.runInfo(), Resume: o.Resume,
		Session: runs.Session{Command: o.Command, Limit: o.Limit}, ChunkRecords: o.ChunkRecords, ChunkInterval: o.ChunkInterval})
	if err != nil {
		return nil, err
	}
	defer w.Close(ctx, runs.SessionEnd{}) // a session that failed early; nothing after the Close below
	for _, msg := range w.Warnings() {
		o.Log.Warn("this session differs from the RUN's first", "what", msg)
	}
	if cut := w.TornBytes(); cut > 0 {
		o.Log.Warn("cut a torn last record (an interrupted write)", "file", w.Records(), "bytes", cut)
	}
	s, err := newSession(ctx, &o, w, stop, steps)
	if err != nil {
		return nil, err
	}
	defer s.close()
	groups, err := s.groups(ctx)
	if err != nil {
		return nil, err
	}
	todo := s.prepare(groups)
	if err := s.newTokenCheck(ctx, groups, todo); err != nil {
		return nil, err
	}
	if o.Progress != nil {
		o.Progress.Start(todo)
	}
	o.Log.Info("sweep", "run", o.Out, "items", s.sum.Items, "configs", s.sum.Configs, "videos", len(groups), "pairs", s.sum.Pairs, "recorded", s.sum.PairsRecorded, "to_do", todo)
	results, werr := s.runVideos(ctx, groups)
	if o.Progress != nil {
		o.Progress.Finish()
	}
	if werr == nil {
		werr = s.leftErr() // an interruption the session did not ask for
	}
	s.summarise(results, start)
	if werr != nil && s.sum.Stopped == "" {
		s.sum.Stopped = "error"
	}
	end := runs.SessionEnd{Pairs: s.sum.PairsDone, Failed: s.sum.PairsFailed, Stopped: s.sum.Stopped}
	if cerr := w.Close(ctx, end); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return s.sum, werr
	}
	if s.stopped() && s.sum.PairsRemaining > 0 {
		return s.sum, fmt.Errorf("%w: %d pairs left; rerun with --resume to finish %s", ErrInterrupted, s.sum.PairsRemaining, o.Out)
	}
	return s.sum, nil
}

// runVideos runs every group's video, Jobs at a time, until the work or a stop ends; the first
// error (a RUN that cannot be written) stops the rest.
func (s *session) runVideos(ctx context.Context, groups []*group) ([]VideoSummary, error) {
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(s.o.Jobs)
	results := make([]VideoSummary, len(groups))
	for i, g := range groups {
		if s.stopped() || gctx.Err() != nil {
			break // a stop, or a video's error: the rest is left to --resume
		}
		eg.Go(func() error {
			vs, err := s.video(gctx, g)
			results[i] = vs
			return err
		})
	}
	return results, eg.Wait()
}

// summarise folds the videos' summaries and the session's counters into the summary.
func (s *session) summarise(results []VideoSummary, start time.Time) {
	for _, vs := range results {
		if vs.Video != "" {
			s.sum.PerVideo = append(s.sum.PerVideo, vs)
			s.sum.FramesDecoded += vs.FramesDecoded
			s.sum.FramesUnion += vs.FramesUnion
			s.sum.InputsBuilt += vs.InputsBuilt
			s.sum.InputsCached += vs.InputsCached
			s.sum.InputsRebuilt += vs.InputsRebuilt
		}
	}
	s.sum.PairsDone = int(s.answered.Load())
	s.sum.PairsFailed = int(s.failed.Load())
	s.sum.RuntimeSeconds = round3(s.latency())
	s.sum.PairsRemaining = max(s.sum.Pairs-s.sum.PairsRecorded-s.sum.PairsDone-s.sum.PairsFailed, 0)
	if s.ladder != nil {
		s.sum.Cascade = s.ladder.summary(s.sum)
		s.sum.PairsRemaining = s.sum.Items - s.sum.Cascade.Final
	}
	if s.stopped() {
		s.sum.Stopped = "signal"
	}
	s.sum.VisualTokenWarnings = s.tokens.lines()
	s.sum.Seconds = round3(time.Since(start).Seconds())
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
