package record

import (
	"errors"
	"fmt"
)

// Sentinel errors: every error about records wraps one of them inside an *Error.
var (
	// ErrSyntax: a line or file is not valid JSON (or not the expected shape).
	ErrSyntax = errors.New("syntax error")
	// ErrInvalid: a record breaks a rule of METRICS.md "Records" (missing field, value out of range).
	ErrInvalid = errors.New("invalid record")
	// ErrDuplicate: two records for one (item, config, run).
	ErrDuplicate = errors.New("duplicate record")
	// ErrConflict: two records disagree about one config's metadata.
	ErrConflict = errors.New("conflicting config_meta")
	// ErrTooLong: a line is longer than MaxLineBytes.
	ErrTooLong = errors.New("line too long")
	// ErrEmpty: no records (or no paired items) to analyse.
	ErrEmpty = errors.New("no records")
	// ErrFormat: an input file is of a kind the reader does not recognise.
	ErrFormat = errors.New("unrecognised format")
)

// Error carries the file, the 1-based line (0 when not line-specific) and the operation.
type Error struct {
	Path string
	Line int
	Op   string
	Err  error
}

func (e *Error) Error() string {
	loc := e.Path
	if loc == "" {
		loc = "<input>"
	}
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	if e.Op != "" {
		return fmt.Sprintf("%s: %s: %v", loc, e.Op, e.Err)
	}
	return fmt.Sprintf("%s: %v", loc, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error wrapping sentinel with a formatted detail.
func Errorf(path string, line int, op string, sentinel error, format string, a ...any) *Error {
	return &Error{Path: path, Line: line, Op: op, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, a...))}
}
