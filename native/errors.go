package native

import (
	"errors"
	"fmt"
)

// Sentinels; errors returned by this package wrap one of them in an *Error.
var (
	ErrBadSize          = errors.New("bad image size")
	ErrShortBuffer      = errors.New("buffer too small")
	ErrBadArgument      = errors.New("bad argument")
	ErrUnsupportedLevel = errors.New("unsupported dispatch level")
)

// Error carries the operation that failed; errors.Is matches its Err sentinel.
type Error struct {
	Op  string // "resample", "tensor", …
	Err error
	Msg string
}

func (e *Error) Error() string {
	if e.Msg == "" {
		return "native: " + e.Op + ": " + e.Err.Error()
	}
	return "native: " + e.Op + ": " + e.Msg + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

func errf(op string, sentinel error, format string, a ...any) error {
	return &Error{Op: op, Err: sentinel, Msg: fmt.Sprintf(format, a...)}
}
