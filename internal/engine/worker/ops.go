package worker

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/engine/procfd"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/rgb"
)

// ops are the production ops.
var ops = map[string]opFunc{
	"probe": opProbe,
	"read":  opRead,
}

// openVideo opens the request's video: the inherited descriptor FD when set (the file the parent
// opened, by /proc/self/fd), else Path. Errors name Path either way.
func openVideo(req *Request) (v *decode.Video, name func(error) error, err error) {
	if req.FD <= 0 {
		v, err = decode.Open(req.Path, req.Options)
		return v, func(err error) error { return err }, err
	}
	fdp := procfd.Path(req.FD)
	name = func(err error) error { return procfd.Rename(err, fdp, req.Path) }
	v, err = decode.Open(fdp, req.Options)
	return v, name, name(err)
}

// opProbe opens the video, sends its Info (with per-frame detail when Detail is set) and closes it.
func opProbe(req *Request, w io.Writer) (any, error) {
	v, _, err := openVideo(req)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	info := v.Info()
	if req.Detail {
		info = v.WithFramesDetail()
	}
	info.Path = req.Path
	if err := sendInfo(w, info); err != nil {
		return nil, err
	}
	return nil, v.Close()
}

// opRead sends the video's Info, then each requested frame (distinct indices, ascending) as it is
// decoded, and the decode.Stats in "done".
func opRead(req *Request, w io.Writer) (any, error) {
	v, name, err := openVideo(req)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	info := v.Info()
	info.Path = req.Path
	if err := sendInfo(w, info); err != nil {
		return nil, err
	}
	var h header
	var rz resize.Resizer
	var dst *rgb.Image
	var srcW, srcH int
	st, err := v.Read(req.Indices, func(f *decode.Frame) error {
		img := &f.Image
		if req.Size != nil {
			// A stream may change resolution mid-way (decode returns each frame at its own size): the
			// plan follows the source size (resize.New caches plans, so this is a lookup).
			if rz == nil || f.W != srcW || f.H != srcH {
				kernel := req.Size.Kernel
				if kernel == "" {
					kernel = resize.DefaultKernel
				}
				var err error
				if rz, err = resize.New(kernel, f.W, f.H, req.Size.W, req.Size.H); err != nil {
					return fmt.Errorf("%s: frame %d: %w", req.Path, f.Index, err) // resize's errors do not name the file
				}
				srcW, srcH = f.W, f.H
			}
			if dst == nil {
				dst = rgb.New(req.Size.W, req.Size.H) // reused: each frame is written out before the next
			}
			if err := rz.Resize(dst, img); err != nil {
				return fmt.Errorf("%s: frame %d: %w", req.Path, f.Index, err)
			}
			img = dst
		}
		pix := img.Packed()
		h = header{Type: msgFrame, Index: f.Index, PTS: f.PTS, Seconds: f.Seconds, Key: f.Key, Damaged: f.Damaged, W: img.W, H: img.H, Bytes: len(pix)}
		return writeMsg(w, &h, pix)
	})
	if err != nil {
		return st, &readError{err: name(err), stats: st}
	}
	return st, v.Close()
}

// readError carries a failed Read's statistics to finish, which sends them with the error.
type readError struct {
	err   error
	stats decode.Stats
}

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

func sendInfo(w io.Writer, info decode.Info) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return writeMsg(w, &header{Type: msgInfo, Info: b}, nil)
}
