package llm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Sentinel errors; wrap them in *Error so callers can test with errors.Is and read Op/Path with errors.As.
var (
	ErrBadSpec       = errors.New("bad runtime spec")
	ErrUnknownEngine = errors.New("unknown runtime engine")
	ErrModel         = errors.New("bad model file")
	ErrBadImage      = errors.New("bad image")
	ErrBadRequest    = errors.New("bad request")
	ErrTooManyImages = errors.New("too many images for the model or server")
	// ErrVideoInput: the server (or the model it serves) did not take the frames as a video item:
	// no video support, a video count limit, a frame cap, metadata it could not use.
	ErrVideoInput     = errors.New("the server cannot take the video input")
	ErrContextTooLong = errors.New("prompt longer than the context")
	ErrServer         = errors.New("server error")
	// ErrBadResponse: the server answered 2xx but the body is not what the protocol promises
	// (a proxy's HTML page, a different API). Retrying the same request would get the same body.
	ErrBadResponse = errors.New("malformed server reply")
	ErrClosed      = errors.New("runtime closed")
	// ErrDevice: the device a spec asks for (a GPU) cannot be had: its backend library, a library that
	// one needs, or the device itself is missing. Never answered on another device instead.
	ErrDevice = errors.New("device unavailable")
)

// Error carries the operation and the file or URL it concerns.
type Error struct {
	Op   string // e.g. "open", "answer", "load model"
	Path string // model file, server URL, or "" when none applies
	Err  error
}

func (e *Error) Error() string {
	var msg string
	if e.Path == "" {
		msg = fmt.Sprintf("llm: %s: %v", e.Op, e.Err)
	} else {
		msg = fmt.Sprintf("llm: %s %s: %v", e.Op, showPath(e.Path), e.Err)
	}
	return oneLine.Replace(msg)
}

// oneLine keeps an error on one line whatever its cause carries (a server's reply, a spec value
// with a line break).
var oneLine = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`)

// showPath quotes a path or URL that is not plain printable text, so it reads as one value.
func showPath(p string) string {
	for _, r := range p {
		if !unicode.IsPrint(r) {
			return strconv.Quote(p)
		}
	}
	return p
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error whose cause wraps sentinel with a formatted detail.
func Errorf(op, path string, sentinel error, format string, a ...any) error {
	if format == "" {
		return &Error{Op: op, Path: path, Err: sentinel}
	}
	return &Error{Op: op, Path: path, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, a...))}
}
