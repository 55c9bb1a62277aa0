package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
)

// resizeFlags are `frames`' --size, --kernel and --preset (owned by resize/; frames.go calls them
// through its frameTransform hook).
type resizeFlags struct {
	size, kernel, preset *string
}

func addResizeFlags(fs *flag.FlagSet) *resizeFlags {
	return &resizeFlags{
		size: fs.String("size", "", "resize every frame to WxH (e.g. 448x448)"),
		kernel: fs.String("kernel", resize.DefaultKernel,
			"resize kernel: "+strings.Join(resize.Kernels(), ", ")),
		preset: fs.String("preset", "", "resize with a preset's geometry (resize/geom presets, e.g. qwen2.5-vl)"),
	}
}

// transform builds the frame transform the flags ask for; an error is a usage error. nFrames is the
// number of requested frames (frame-count-dependent geometries such as Qwen's total-pixel cap use it).
func (r *resizeFlags) transform(video string, nFrames int) (frameTransform, error) {
	kernel := *r.kernel
	if err := resize.CheckKernel(kernel); err != nil {
		return nil, fmt.Errorf("--kernel %q: want one of %s", kernel, strings.Join(resize.Kernels(), ", "))
	}
	switch {
	case *r.size != "" && *r.preset != "":
		return nil, errors.New("--size and --preset are mutually exclusive")
	case *r.size != "":
		w, h, err := geom.ParseWxH(*r.size)
		if err != nil {
			return nil, fmt.Errorf("--size %q: want WxH with each side 1..%d", *r.size, geom.MaxSide)
		}
		return func(f *decode.Frame) ([]*rgb.Image, error) {
			out, err := resize.Resize(kernel, &f.Image, w, h)
			if err != nil {
				return nil, fmt.Errorf("%s: frame %d: %w", video, f.Index, err)
			}
			return []*rgb.Image{out}, nil
		}, nil
	case *r.preset != "":
		g, err := geom.ForPreset(*r.preset)
		if err != nil {
			return nil, fmt.Errorf("--preset: %v", err)
		}
		// The preset's layout exactly as the model receives it (resize.ApplyLayout, the engine's own):
		// the resize, its centre crop, or the tiles followed by the thumbnail.
		return func(f *decode.Frame) ([]*rgb.Image, error) {
			l, err := g.Layout(f.W, f.H, nFrames)
			if err == nil {
				var out []*rgb.Image
				if out, err = resize.ApplyLayout(kernel, l, &f.Image); err == nil {
					return out, nil
				}
			}
			return nil, fmt.Errorf("%s: frame %d: %w", video, f.Index, err)
		}, nil
	case *r.kernel != resize.DefaultKernel:
		return nil, errors.New("--kernel needs --size or --preset")
	}
	return sourceSize, nil
}
