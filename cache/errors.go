package cache

import (
	"errors"
	"fmt"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrNotFound: the key or object is not in the store.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt: an object's bytes do not hash to its name, or its safetensors structure is invalid.
	ErrCorrupt = errors.New("corrupt object")
	// ErrHeader: a safetensors header breaks the format (sizes, offsets, dtypes, duplicates).
	ErrHeader = errors.New("invalid safetensors header")
	// ErrTooLarge: a header or object exceeds the reader's caps.
	ErrTooLarge = errors.New("exceeds size limit")
	// ErrBadSpec: a key spec or tensor description is incomplete or inconsistent.
	ErrBadSpec = errors.New("invalid spec")
)

// Error carries the path and operation of a failure; Err is one of the sentinels or an I/O error.
type Error struct {
	Path string // object path or store location
	Op   string // "read", "write", "parse", "verify", …
	Err  error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("cache: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("cache: %s %s: %v", e.Op, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// wrapf wraps a sentinel with detail text, keeping errors.Is working.
func wrapf(sentinel error, format string, a ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, a...))
}
