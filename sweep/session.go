package sweep

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/portable"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// session is one Run in progress.
type session struct {
	o        *Options
	w        *runs.Writer
	store    *cache.Store // --cache, or the RUN's scratch store (inputs over the memory budget)
	scratch  string       // the scratch store's directory ("" with --cache)
	sum      *Summary
	stop     <-chan struct{}
	runtime  runs.Runtime     // the runtime as records name it: model files by name, their digests beside
	videos   videoNames       // how records name videos
	model    modelFields      // the model every record names
	decoding *record.Decoding // the sampling settings every record names (run.json's)
	ladder   *ladder          // online cascade: the steps and where each item stands; nil for a fixed grid
	tokens   *tokenCheck      // the visual-token check (visualtokens.go)
	ctx      context.Context  // the session's: its end leaves the pairs in flight to --resume
	answered atomic.Int64
	failed   atomic.Int64
	leftMu   sync.Mutex
	left     error // an answer cancelled without a stop (noteInterrupted)
	latMu    sync.Mutex
	latSum   float64
}

// newSession prepares a session on an open RUN: its input store (the --cache, or a scratch store the
// session clears at its start and removes at its end) and, for an online cascade, every item's
// position from the records already in the RUN.
func newSession(ctx context.Context, o *Options, w *runs.Writer, stop <-chan struct{}, steps []*grid.Config) (*session, error) {
	// A stop ends the question to the runtime too (a server that does not answer GET /v1/models).
	dctx, cancel := untilStop(ctx, stop)
	model := describeModel(dctx, o, w.Info().Runtime.ModelSHA256)
	cancel()
	rt := w.Info().Runtime
	rt.Spec = portable.Spec(rt.Spec, rt.ModelSHA256) // a RUN begun before names replaced paths
	s := &session{o: o, w: w, ctx: ctx, store: o.Cache, stop: stop, runtime: rt, videos: videoNames{w.Info().VideoRoot},
		model: model, decoding: o.decoding(),
		sum: &Summary{Run: o.Out, Records: w.Records(), Configs: len(o.Grid.Configs), TornBytes: w.TornBytes(), PerVideo: []VideoSummary{}}}
	if s.store == nil {
		// A crash leaves the scratch inputs to the next session, which clears the directory.
		dir, err := w.ScratchDir()
		if err != nil {
			return nil, err
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if s.store, err = cache.Open(ctx, dir); err != nil {
			return nil, err
		}
		s.scratch = dir
	}
	if steps != nil {
		var err error
		if s.ladder, err = newLadder(ctx, w, o.Cascade, steps, s.keepsError); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// close removes the scratch store.
func (s *session) close() {
	if s.scratch != "" {
		s.store.Close()
		os.RemoveAll(s.scratch)
		s.scratch = ""
	}
}

// skip reports whether pair p needs nothing this session: it is answered, or it failed and the
// session does not ask failed pairs again (a transient error is always asked again; --retry-errors
// asks every failed pair again).
func (s *session) skip(p record.Pair) bool {
	switch s.w.State(p) {
	case runs.Answered:
		return true
	case runs.Failed:
		return !s.o.RetryErrors
	}
	return false
}

// keepsError reports whether an error record of p stands as p's record in this session: the pair
// failed and is not asked again (an answer supersedes it; a pair asked again has no record yet).
func (s *session) keepsError(p record.Pair) bool {
	return s.w.State(p) == runs.Failed && !s.o.RetryErrors
}

func (s *session) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

func (s *session) addLatency(x float64) {
	s.latMu.Lock()
	s.latSum += x
	s.latMu.Unlock()
}

func (s *session) latency() float64 {
	s.latMu.Lock()
	defer s.latMu.Unlock()
	return s.latSum
}

// write appends r to the records and counts it in vs (the caller serialises calls for one vs). A
// record the validator refuses (a reply over the line limit) is not written: an error record of the
// pair saying so is, so that what the sweep writes is what every reader accepts.
func (s *session) write(r *record.Full, g *group, vs *VideoSummary) error {
	r.At = now()
	if r.VideoSHA256 == "" {
		r.VideoSHA256 = g.sha
	}
	if r.VisualTokens != nil && r.VisualTokens.How == "" {
		r.VisualTokens.How = record.VisualUnknown // not settled (no check): never written as pending
	}
	if err := s.w.Write(r); err != nil {
		if !badRecord(err) {
			return err
		}
		r = unwritable(r, err)
		if err := s.w.Write(r); err != nil {
			return err
		}
	}
	if r.Status == record.StatusError {
		s.failed.Add(1)
		vs.PairsFailed++
	} else {
		s.answered.Add(1)
		vs.PairsDone++
	}
	if s.o.Progress != nil && (r.Cascade == nil || r.Cascade.Final) {
		s.o.Progress.Pair(r)
	}
	return nil
}

// passContext is ctx, also cancelled by a stop: a stop ends decoding (what is decoded and written is
// kept; the rest is left to --resume).
func (s *session) passContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return untilStop(ctx, s.stop)
}

// untilStop is ctx, also cancelled when stop is closed.
func untilStop(ctx context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-sctx.Done():
		}
	}()
	return sctx, cancel
}

// answerContext is ctx for the runtime's answers. A stop lets the answers in flight go on for
// Options.StopGrace and then cancels them (no record: --resume asks them again); the runtime is told
// of the stop at once (llm.WithStop), so that it sends nothing more (an answer waiting for a
// connection, a retry). cancel releases it.
func (s *session) answerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	actx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.stop:
		case <-actx.Done():
			return
		}
		grace := time.NewTimer(max(s.o.StopGrace, 0))
		defer grace.Stop()
		select {
		case <-grace.C:
			cancel()
		case <-actx.Done():
		}
	}()
	return llm.WithStop(actx, s.stop), cancel
}

// dropScratch removes a finished video's inputs from the scratch store.
func (s *session) dropScratch(ctx context.Context, keys []string) {
	if s.scratch == "" {
		return
	}
	for _, k := range keys {
		if err := s.store.Remove(ctx, k); err != nil {
			s.o.Log.Warn("scratch input not removed", "key", k, "err", err)
		}
	}
}

// videoNames names an item's video in its records: relative to the video root (run.json's), as an
// items file names it relative to itself; as the items file resolved it in a RUN begun before roots
// existed (root "").
type videoNames struct{ root string }

// name is how records name video v (an items file's resolved path).
func (vn videoNames) name(v string) string {
	if vn.root == "" {
		return v
	}
	rel, _ := portable.Rel(vn.root, v)
	return rel
}
