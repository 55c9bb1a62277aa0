package decode

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel causes. Every error returned by this package wraps one of them (errors.Is), inside an *Error
// that names the file and the operation.
var (
	ErrNoVideoStream    = errors.New("no video stream")
	ErrUnsupportedCodec = errors.New("unsupported codec (no decoder in this FFmpeg)")
	ErrTooLarge         = errors.New("frame area exceeds the limit")
	ErrTooManyStreams   = errors.New("stream count exceeds the limit")
	ErrOutOfRange       = errors.New("frame index out of range")
	ErrCorrupt          = errors.New("corrupt or unreadable data")
	ErrNetworkProtocol  = errors.New("only local files are accepted (no URLs or protocols)")
	ErrEmpty            = errors.New("empty file")
	ErrNoFrames         = errors.New("video stream has no frames")
	ErrNotFound         = errors.New("file not found or not readable")
	ErrClosed           = errors.New("video is closed")
	ErrBadOption        = errors.New("bad option")
	ErrFrameFailed      = errors.New("frame failed to decode")
	// ErrDamaged: a requested frame came out of the decoder concealed (FFmpeg flagged it: part of the
	// picture is a substitute for corrupt data). With Options.OnDamaged = DamagedFail (the default)
	// such frames are refused and the error is a *DamagedError, which also matches ErrFrameFailed.
	ErrDamaged = errors.New("frame damaged: the decoder concealed corrupt data")
	// ErrNotMediaFile: the input is a playlist, list, pattern or other non-media file whose demuxer
	// would open further files or is not a media container; it is refused (*RefusedError).
	ErrNotMediaFile = errors.New("not a media file: refused")
	// ErrTruncated: the file is cut short (e.g. inside its MP4 moov box) or was never finished.
	ErrTruncated = errors.New("truncated or incomplete file")
	// ErrNoSuchStream: Options.Stream names a stream the file does not have, or one that is not video.
	ErrNoSuchStream = errors.New("no such video stream")
)

// Error is the error type of this package: the file, the operation and the cause, in one line.
type Error struct {
	Path string
	Op   string // "open", "index", "read", "decode", "convert", "hwaccel"
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s: %v", e.Path, e.Op, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// RangeError reports a requested index outside [0, NumFrames). It matches ErrOutOfRange.
type RangeError struct {
	Index, NumFrames int
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("frame index %d out of range: the video has %d frames (0..%d)", e.Index, e.NumFrames, e.NumFrames-1)
}
func (e *RangeError) Is(target error) bool { return target == ErrOutOfRange }

// FrameError reports one requested frame that the decoder did not produce (corrupt data, a decoder
// error). The frame is never replaced by a neighbour. It matches ErrFrameFailed.
type FrameError struct {
	Index int
	PTS   int64
	Err   error // the decoder's cause when known
}

func (e *FrameError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("frame %d (pts %d) failed to decode: %v", e.Index, e.PTS, e.Err)
	}
	return fmt.Sprintf("frame %d (pts %d) failed to decode: the decoder produced no picture for it", e.Index, e.PTS)
}
func (e *FrameError) Is(target error) bool { return target == ErrFrameFailed }
func (e *FrameError) Unwrap() error        { return e.Err }

// FramesError gathers the FrameErrors of one Read in a single one-line error; errors.As finds each
// *FrameError through Unwrap.
type FramesError struct {
	Frames []*FrameError
}

func (e *FramesError) Error() string {
	const show = 8
	var b strings.Builder
	fmt.Fprintf(&b, "%d frame(s) failed to decode: ", len(e.Frames))
	for i, f := range e.Frames {
		if i == show {
			fmt.Fprintf(&b, ", … (%d more)", len(e.Frames)-show)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", f.Index)
	}
	if c := e.Frames[0].Err; c != nil {
		fmt.Fprintf(&b, " (first cause: %v)", c)
	} else {
		b.WriteString(" (the decoder produced no picture for them)")
	}
	return b.String()
}

func (e *FramesError) Unwrap() []error {
	out := make([]error, len(e.Frames))
	for i, f := range e.Frames {
		out[i] = f
	}
	return out
}

// FailedFrames returns the indices of every *FrameError inside err (as returned by Read), ascending.
func FailedFrames(err error) []int {
	var out []int
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if fe, ok := e.(*FrameError); ok {
			out = append(out, fe.Index)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

func wrap(path, op string, err error) error {
	if err == nil {
		return nil
	}
	var de *Error
	if errors.As(err, &de) {
		return err
	}
	return &Error{Path: path, Op: op, Err: err}
}

// RefusedError reports an input whose demuxer framesweep does not allow (see ErrNotMediaFile): what it
// is and why it is refused, e.g. "an HLS playlist, not a media file: refused (its demuxer opens the
// media files it names)". It matches ErrNotMediaFile.
type RefusedError struct {
	Format string // FFmpeg's demuxer name, e.g. "hls", "concat", "image2"
	What   string // "an HLS playlist"
	Why    string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s, not a media file: refused (%s)", e.What, e.Why)
}
func (e *RefusedError) Is(target error) bool { return target == ErrNotMediaFile }

// DamagedError reports the requested frames the decoder produced only by concealing corrupt data,
// refused because Options.OnDamaged is DamagedFail (the default). The other frames were delivered.
// It matches ErrDamaged and ErrFrameFailed (the frames were not delivered), so code that tolerates
// per-frame failures tolerates it too. Inside an *Error, it names the file.
type DamagedError struct {
	Frames []int  // ascending frame indices
	Cause  string // what FFmpeg flagged on the first of them, e.g. "concealment active, slices failed"
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("%d damaged frame(s) refused: %s (the decoder concealed corrupt data: %s; OnDamaged keep / --on-damaged keep delivers them, flagged)",
		len(e.Frames), listIndices(e.Frames), e.Cause)
}
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged || target == ErrFrameFailed }

// listIndices writes up to 8 indices, then how many more.
func listIndices(idx []int) string {
	const show = 8
	var b strings.Builder
	for i, x := range idx {
		if i == show {
			fmt.Fprintf(&b, ", … (%d more)", len(idx)-show)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", x)
	}
	return b.String()
}

// DamagedFrames returns the indices of every *DamagedError inside err (as returned by Read), ascending.
func DamagedFrames(err error) []int {
	var out []int
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if de, ok := e.(*DamagedError); ok {
			out = append(out, de.Frames...)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	sort.Ints(out)
	return out
}
