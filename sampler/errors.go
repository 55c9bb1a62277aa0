package sampler

import (
	"errors"
	"strconv"
)

// Sentinel errors; match them with errors.Is. Every error returned by this package is an *Error
// that wraps exactly one of them.
var (
	// ErrUnknown: the preset or policy name is not known.
	ErrUnknown = errors.New("unknown preset or policy")
	// ErrBudget: the request cannot be satisfied by this video (e.g. qwen nframes > total frames).
	ErrBudget = errors.New("frame budget cannot be satisfied by the video")
	// ErrVideo: the video description is unusable (no frames, fps not positive).
	ErrVideo = errors.New("invalid video description")
	// ErrRequest: the request's parameters are invalid for this sampler.
	ErrRequest = errors.New("invalid sampling request")
)

// Error carries the context of a failure: the file (grid or video) if any, the line in it when known
// (grid values), the operation (a sampler name, "grid", a config id …) and a human-readable detail.
// Err is one of the sentinels above, or package grid's (grid.ErrGrid, grid.ErrLoader): grids report
// their errors with this type too, so a config's sampling error and its grid's read alike.
type Error struct {
	Path   string
	Line   int
	Op     string
	Detail string
	Err    error
}

func (e *Error) Error() string {
	s := ""
	switch {
	case e.Path != "" && e.Line > 0:
		s = e.Path + ":" + strconv.Itoa(e.Line) + ": "
	case e.Path != "":
		s = e.Path + ": "
	case e.Line > 0:
		s = "line " + strconv.Itoa(e.Line) + ": "
	}
	if e.Op != "" {
		s += e.Op + ": "
	}
	if e.Detail != "" {
		s += e.Detail
	} else if e.Err != nil {
		s += e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func errf(sentinel error, op, detail string) error {
	return &Error{Op: op, Detail: detail, Err: sentinel}
}

// WithPath returns err with Path set when err is an *Error without a path; other errors are
// returned unchanged. Callers that know the file (a video, a grid) use it to name it.
func WithPath(err error, path string) error {
	var e *Error
	if errors.As(err, &e) && e.Path == "" {
		c := *e
		c.Path = path
		return &c
	}
	return err
}
