package resize

import (
	"fmt"

	"github.com/framesweep/framesweep/rgb"
)

// Target is one output of FanOut: a size and a kernel name ("" means DefaultKernel).
type Target struct {
	W, H   int
	Kernel string
}

// FanOut makes every target from one source frame. Every kernel reads the source's bytes in place (the
// Pillow and torch kernels convert on the fly, cv::resize reads the same buffer), and Resizers come
// from New's cache, so a grid of configs on the same video costs the resizes alone. A target equal to the source size comes out as
// a copy with every kernel (Pillow, torchvision and cv::resize all short-circuit it).
func FanOut(src *rgb.Image, targets []Target) ([]*rgb.Image, error) {
	return FanOutInto(src, targets, nil)
}

// FanOutInto is FanOut writing into reuse[i] when it is a tightly packed image of target i's size
// (a caller resizing frame after frame keeps its outputs and allocates nothing); other targets get
// new images. reuse may be shorter than targets or hold nils.
func FanOutInto(src *rgb.Image, targets []Target, reuse []*rgb.Image) ([]*rgb.Image, error) {
	if err := src.Validate(); err != nil {
		return nil, &Error{Op: "fanout", Err: ErrBadSize, Msg: "source: " + err.Error()}
	}
	out := make([]*rgb.Image, len(targets))
	for i, t := range targets {
		kernel := t.Kernel
		if kernel == "" {
			kernel = DefaultKernel
		}
		r, err := New(kernel, src.W, src.H, t.W, t.H)
		if err != nil {
			return nil, fmt.Errorf("target %d: %w", i, err)
		}
		var dst *rgb.Image
		if i < len(reuse) && reuse[i] != nil && reuse[i].W == t.W && reuse[i].H == t.H && reuse[i].Stride == 3*t.W && len(reuse[i].Pix) >= 3*t.W*t.H {
			dst = reuse[i]
		} else {
			dst = rgb.New(t.W, t.H)
		}
		if err := r.Resize(dst, src); err != nil {
			return nil, fmt.Errorf("target %d: %w", i, err)
		}
		out[i] = dst
	}
	return out, nil
}
