package geom

import (
	"errors"
	"fmt"
)

// Sentinel errors; test with errors.Is. Every error returned by this package is an *Error wrapping one.
var (
	// ErrBadSpec: the spec string does not parse or holds an out-of-range value.
	ErrBadSpec = errors.New("bad geometry spec")
	// ErrUnknownPreset: ForPreset was given a name it does not know.
	ErrUnknownPreset = errors.New("unknown preset")
	// ErrSize: the source size is not positive or exceeds MaxSide.
	ErrSize = errors.New("bad source size")
	// ErrFrames: a frame-count-dependent policy was given a frame count it cannot use.
	ErrFrames = errors.New("bad frame count")
	// ErrAspect: the source aspect ratio exceeds 200 (qwen-vl-utils and HF raise ValueError there).
	ErrAspect = errors.New("aspect ratio above 200")
	// ErrPixels: min_pixels > max_pixels (qwen-vl-utils 0.0.14 asserts this).
	ErrPixels = errors.New("max_pixels below min_pixels")
	// ErrEmpty: the policy yields a zero-sized image (upstream would fail later, in the resize).
	ErrEmpty = errors.New("policy yields an empty image")
	// ErrTooLarge: the output would exceed MaxOutputPixels (bounds memory on hostile inputs or specs).
	ErrTooLarge = errors.New("output too large")
	// ErrTolerance: no iso-compute size is within the requested tolerance of the budget.
	ErrTolerance = errors.New("no size within tolerance")
	// ErrLayout: a layout whose images cannot share one tensor.
	ErrLayout = errors.New("layout images of different sizes")
)

// Error carries the operation and the spec (or geometry) it concerns.
type Error struct {
	Op     string // "parse", "layout", "preset", "iso"
	Spec   string // the spec string or the geometry's String()
	Detail string // human detail, may be empty
	Err    error  // one of the sentinels above
}

func (e *Error) Error() string {
	s := fmt.Sprintf("geom: %s %q: %v", e.Op, e.Spec, e.Err)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func errf(op, spec string, sentinel error, format string, args ...any) error {
	return &Error{Op: op, Spec: spec, Err: sentinel, Detail: fmt.Sprintf(format, args...)}
}
