package sweep

import (
	"context"
	"errors"
	"fmt"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
)

// What becomes a pair's error record, and what does not. A pair's record says something about the
// pair: its video, its config, the model's reply. A cancellation, a full disk or a failing store say
// nothing about the pair: they stop the session and leave the pair to do (no record), so --resume
// asks it. The decision is made on the error's type (and the context's state), never on its text:
//
//	interrupted (the session's context ended, or a context.Canceled)  → no record; the pair is left to do
//	*StoreError, *pipeline.SinkError, a records write                  → no record; the session stops
//	cache.ErrCorrupt / cache.ErrNotFound on reading an input           → the input is built again
//	llm.ErrServer (unreachable, 5xx or timeouts after its retries)     → record, error_kind transient
//	any other runtime error                                            → record, error_kind runtime
//	the video cannot be opened, planned or decoded                     → record, error_kind input

// StoreError is a failure of the input store (the --cache or the RUN's scratch store): a full disk,
// an I/O error, a store that cannot be listed. It stops the session; no pair records it.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return "input store: " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// interrupted reports whether err only says that the work was cancelled: ctx (the session's) ended,
// or err is a cancellation.
func interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.Canceled)
}

// runtimeErrorKind classifies a runtime's error: transient when the runtime could not answer for a
// reason of its own side (llm.ErrServer: unreachable, 5xx, timeouts after its retries), else runtime.
func runtimeErrorKind(err error) string {
	if errors.Is(err, llm.ErrServer) || errors.Is(err, context.DeadlineExceeded) {
		return record.ErrorTransient
	}
	return record.ErrorRuntime
}

// rebuildable reports whether a stored input that could not be read is to be built again: its
// object is corrupt or gone. Any other read error is the store failing.
func rebuildable(err error) bool {
	return errors.Is(err, cache.ErrCorrupt) || errors.Is(err, cache.ErrNotFound)
}

// storeFailure wraps an error of the pass or of the store as the session's *StoreError (a
// *pipeline.SinkError's cause, or err itself).
func storeFailure(err error) error {
	var se *pipeline.SinkError
	if errors.As(err, &se) {
		err = se.Err
	}
	return &StoreError{Err: err}
}

// badRecord reports whether the records writer refused r itself (the validator), not the file.
func badRecord(err error) bool {
	return errors.Is(err, record.ErrInvalid) || errors.Is(err, record.ErrTooLong) || errors.Is(err, record.ErrSyntax)
}

// unwritable is the error record of a pair whose record the validator refused: the pair, its item's
// fields and its input, without anything the runtime told (the reply's text, probabilities, counts,
// how it says the frames reached the model; its model's name), which may be what was refused.
func unwritable(r *record.Full, err error) *record.Full {
	e := &record.Full{
		Record: record.Record{ItemID: r.ItemID, Config: r.Config, Answer: r.Answer, Category: r.Category, Duration: r.Duration,
			Task: r.Task, ConfigMeta: r.ConfigMeta, Status: record.StatusError, ErrorKind: record.ErrorRuntime,
			Error: "the record of this answer is not one readers accept: " + pipeline.OneLine(err)},
		Provenance: r.Provenance,
	}
	p := &e.Provenance
	p.Response, p.Probs, p.RequestSHA256, p.ImageFormat = "", nil, "", ""
	p.PromptTokens, p.CompletionTokens = 0, 0
	p.InputMode, p.VideoFPS, p.VideoFPSSource, p.VideoTimestampsS = "", 0, "", nil
	p.VisualGroups = nil
	return e
}

// noteInterrupted keeps the first interruption that neither a stop nor the session's context
// explains (a cancellation from inside a runtime): the session then ends with it, so the pairs it
// left are not taken for done.
func (s *session) noteInterrupted(err error) {
	if s.stopped() || s.ctx.Err() != nil {
		return
	}
	s.leftMu.Lock()
	if s.left == nil {
		s.left = err
	}
	s.leftMu.Unlock()
}

// leftErr is the error a session ends with when pairs were left without a stop asking for it: the
// session's context ended (cancelled by its caller), or a runtime cancelled an answer on its own.
func (s *session) leftErr() error {
	if err := s.ctx.Err(); err != nil && !s.stopped() {
		return fmt.Errorf("%w: the pairs not answered are left to --resume", err)
	}
	s.leftMu.Lock()
	defer s.leftMu.Unlock()
	if s.left != nil {
		return fmt.Errorf("an answer was cancelled (%v): the pairs not answered are left to --resume", s.left)
	}
	return nil
}
