package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/resize"
)

// Probe runs decode.Open + Info in a fresh worker; detail adds per-frame timestamps and keyframe flags.
func (r *Runner) Probe(ctx context.Context, path string, opts decode.Options, detail bool) (decode.Info, error) {
	return r.probe(ctx, &Request{Op: "probe", Path: path, Options: opts, Detail: detail})
}

// ProbeFile is Probe of an open file: the worker inherits f's descriptor and describes the file it
// holds, not whatever name now leads elsewhere; name names it in errors and Info.Path.
func (r *Runner) ProbeFile(ctx context.Context, f *os.File, name string, opts decode.Options, detail bool) (decode.Info, error) {
	return r.probe(ctx, &Request{Op: "probe", Path: name, FD: childFD, file: f, Options: opts, Detail: detail})
}

func (r *Runner) probe(ctx context.Context, req *Request) (decode.Info, error) {
	var info decode.Info
	got := false
	err := r.run(ctx, req, func(h *header, _ []byte) error {
		if h.Type == msgInfo {
			got = true
			return json.Unmarshal(h.Info, &info)
		}
		return nil
	})
	if err == nil && !got {
		err = &Error{Path: req.Path, Op: "probe", Kind: ErrProtocol, Err: fmt.Errorf("no info message")}
	}
	return info, err
}

// Read decodes indices (any order, duplicates allowed) in a fresh worker with decode's decode-once pass
// and calls fn once per distinct index, in ascending order, exactly like decode.Video.Read. The frame is
// borrowed: valid only during fn (Clone it to keep it). Frames the worker delivered before a failure have
// been handed to fn; the error says what ended the job (*RemoteError for a handled decode error, *Error
// for a crash, timeout or memory kill). An error returned by fn stops the worker and is returned as is.
func (r *Runner) Read(ctx context.Context, path string, indices []int, opts decode.Options, fn func(*decode.Frame) error) (decode.Stats, error) {
	return r.read(ctx, &Request{Op: "read", Path: path, Indices: indices, Options: opts}, fn)
}

// ReadFile is Read of an open file: the worker inherits f's descriptor and decodes the file it holds;
// name names it in errors.
func (r *Runner) ReadFile(ctx context.Context, f *os.File, name string, indices []int, opts decode.Options, fn func(*decode.Frame) error) (decode.Stats, error) {
	return r.read(ctx, &Request{Op: "read", Path: name, FD: childFD, file: f, Indices: indices, Options: opts}, fn)
}

// childFD is the number of the first descriptor exec.Cmd.ExtraFiles passes.
const childFD = 3

// ReadResized is Read with every frame resized to size inside the worker (fn receives size.W×size.H
// frames), so neither the pipe nor the parent ever carries a source-size frame.
func (r *Runner) ReadResized(ctx context.Context, path string, indices []int, opts decode.Options, size Size, fn func(*decode.Frame) error) (decode.Stats, error) {
	if size.W <= 0 || size.H <= 0 {
		return decode.Stats{}, &RemoteError{Path: path, Op: "read", Code: "resize_bad_size",
			Message: fmt.Sprintf("%s: read: resize to %dx%d: %v", path, size.W, size.H, resize.ErrBadSize)}
	}
	return r.read(ctx, &Request{Op: "read", Path: path, Indices: indices, Options: opts, Size: &size}, fn)
}

func (r *Runner) read(ctx context.Context, req *Request, fn func(*decode.Frame) error) (decode.Stats, error) {
	var st decode.Stats
	var frame decode.Frame
	err := r.run(ctx, req, func(h *header, payload []byte) error {
		switch h.Type {
		case msgInfo:
			var info decode.Info
			if err := json.Unmarshal(h.Info, &info); err != nil {
				return err
			}
			frame.Orientation = info.Orientation
		case msgFrame:
			frame.Index, frame.PTS, frame.Seconds, frame.Key, frame.Damaged = h.Index, h.PTS, h.Seconds, h.Key, h.Damaged
			frame.W, frame.H, frame.Stride, frame.Pix = h.W, h.H, 3*h.W, payload
			return fn(&frame)
		}
		if len(h.Stats) > 0 {
			return json.Unmarshal(h.Stats, &st)
		}
		return nil
	})
	return st, err
}

// Probe runs a probe in a worker started from this binary (`<os.Executable()> worker`).
func Probe(ctx context.Context, path string, opts decode.Options, limits Limits) (decode.Info, error) {
	return (&Runner{Limits: limits}).Probe(ctx, path, opts, false)
}

// Read runs a read in a worker started from this binary; see Runner.Read.
func Read(ctx context.Context, path string, indices []int, opts decode.Options, limits Limits, fn func(*decode.Frame) error) (decode.Stats, error) {
	return (&Runner{Limits: limits}).Read(ctx, path, indices, opts, fn)
}
