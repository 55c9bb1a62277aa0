package worker

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/framesweep/framesweep/decode"
)

// Sentinels for the ways a supervised worker can fail. Every error returned by Probe/Read that comes from
// the process itself (not from decoding) is a *Error whose Kind is one of these; test with errors.Is.
var (
	// ErrWorkerCrashed: the worker died from a signal or exited non-zero without a protocol answer.
	ErrWorkerCrashed = errors.New("worker crashed")
	// ErrWorkerTimeout: the deadline passed and the worker's process group was killed.
	ErrWorkerTimeout = errors.New("worker timed out")
	// ErrWorkerMemory: the worker's resident memory went over the limit (killed by the watchdog, or its
	// peak RSS was over the limit when it died).
	ErrWorkerMemory = errors.New("worker over memory limit")
	// ErrProtocol: the worker's stdout did not follow the protocol (a bug, or a foreign binary).
	ErrProtocol = errors.New("worker protocol error")
	// ErrStart: the worker binary could not be started.
	ErrStart = errors.New("worker could not start")
)

// Error describes a failed worker process for one video.
type Error struct {
	Path     string         // the video the job was about
	Op       string         // the job's op ("probe", "read", …)
	Kind     error          // one of the sentinels above
	ExitCode int            // exit status, -1 when killed by a signal
	Signal   syscall.Signal // the signal that ended it, 0 if none
	PeakRSS  int64          // highest resident set size seen, bytes (0 if unknown)
	Limit    int64          // the memory limit in force, bytes (0: none)
	Stderr   string         // the last non-empty line the worker wrote to stderr
	Err      error          // an underlying cause (I/O, exec), may be nil
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: worker %s: %v", e.Path, e.Op, e.Kind)
	switch {
	case e.Signal != 0:
		fmt.Fprintf(&b, " (signal %s)", e.Signal)
	case e.ExitCode > 0:
		fmt.Fprintf(&b, " (exit status %d)", e.ExitCode)
	}
	if errors.Is(e.Kind, ErrWorkerMemory) {
		fmt.Fprintf(&b, " (peak RSS %d MiB, limit %d MiB)", e.PeakRSS>>20, e.Limit>>20)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "; last stderr: %s", e.Stderr)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrWorkerCrashed) (etc.) match on Kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap exposes the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// RemoteError is a handled error the worker reported through the protocol: the job ran to completion but
// the op failed (a broken video, a bad index). Code is the stable name of the decode sentinel it matched,
// so errors.Is with decode's sentinels (decode.ErrCorrupt, decode.ErrOutOfRange, …) keeps working
// across the process boundary.
type RemoteError struct {
	Path    string
	Op      string
	Code    string // a key of remoteCodes, or "" when the error matched no known sentinel
	Message string // the worker's one-line message (already names the file)
	Failed  []int  // frames the decoder did not produce (decode.FailedFrames works on the error too)
	// Damaged are the frames refused as damaged (Options.OnDamaged fail; decode.DamagedFrames works
	// on the error too), DamageCause what FFmpeg flagged on the first of them.
	Damaged     []int
	DamageCause string
}

func (e *RemoteError) Error() string { return e.Message }

// Unwrap exposes one *decode.FrameError per failed frame and a *decode.DamagedError for the refused
// damaged ones, so decode.FailedFrames, decode.DamagedFrames and errors.Is(err, decode.ErrFrameFailed /
// decode.ErrDamaged) work as they do in process.
func (e *RemoteError) Unwrap() []error {
	var errs []error
	for _, idx := range e.Failed {
		errs = append(errs, &decode.FrameError{Index: idx})
	}
	if len(e.Damaged) > 0 {
		errs = append(errs, &decode.DamagedError{Frames: e.Damaged, Cause: e.DamageCause})
	}
	return errs
}

// Is matches the decode sentinel named by Code.
func (e *RemoteError) Is(target error) bool {
	s, ok := codeSentinel(e.Code)
	return ok && s == target
}
