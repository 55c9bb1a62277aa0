package llm

import (
	"context"
	"fmt"
)

// ErrStopped is returned by a runtime for an answer it did not send because the caller is stopping
// (WithStop): nothing reached the model, so the pair is left to do. It is a cancellation
// (errors.Is(ErrStopped, context.Canceled)).
var ErrStopped = fmt.Errorf("stopping: the request was not sent: %w", context.Canceled)

type stopKey struct{}

// WithStop returns ctx carrying stop: once stop is closed, a runtime sends no new request for an
// answer under ctx (an answer still waiting for its turn, a retry), and returns ErrStopped or the
// error of its last attempt instead. A request already sent goes on until ctx ends: the caller
// bounds that (a sweep's grace period).
func WithStop(ctx context.Context, stop <-chan struct{}) context.Context {
	if stop == nil {
		return ctx
	}
	return context.WithValue(ctx, stopKey{}, stop)
}

// StopOf is the stop channel WithStop put in ctx (nil when none: never closed).
func StopOf(ctx context.Context) <-chan struct{} {
	s, _ := ctx.Value(stopKey{}).(<-chan struct{})
	return s
}

// Stopping reports whether ctx's stop channel is closed.
func Stopping(ctx context.Context) bool {
	select {
	case <-StopOf(ctx):
		return true
	default:
		return false
	}
}
