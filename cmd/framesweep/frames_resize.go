package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
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

// parseResizeSize reads "WxH" with both sides in 1..resize.MaxSide.
func parseResizeSize(s string) (w, h int, err error) {
	a, b, ok := strings.Cut(strings.ToLower(s), "x")
	if ok {
		w, err = strconv.Atoi(a)
		if err == nil {
			h, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || w < 1 || h < 1 || w > resize.MaxSide || h > resize.MaxSide {
		return 0, 0, fmt.Errorf("--size %q: want WxH with each side 1..%d", s, resize.MaxSide)
	}
	return w, h, nil
}

// transform builds the frame transform the flags ask for; an error is a usage error. nFrames is the
// number of requested frames (frame-count-dependent geometries such as Qwen's total-pixel cap use it).
func (r *resizeFlags) transform(video string, nFrames int) (frameTransform, error) {
	kernel := *r.kernel
	if !strings.Contains(","+strings.Join(resize.Kernels(), ",")+",", ","+kernel+",") {
		return nil, fmt.Errorf("--kernel %q: want one of %s", kernel, strings.Join(resize.Kernels(), ", "))
	}
	switch {
	case *r.size != "" && *r.preset != "":
		return nil, errors.New("--size and --preset are mutually exclusive")
	case *r.size != "":
		w, h, err := parseResizeSize(*r.size)
		if err != nil {
			return nil, err
		}
		return func(f *decode.Frame) (*rgb.Image, error) {
			out, err := resize.Resize(kernel, &f.Image, w, h)
			if err != nil {
				return nil, fmt.Errorf("%s: frame %d: %w", video, f.Index, err)
			}
			return out, nil
		}, nil
	case *r.preset != "":
		g, err := geom.ForPreset(*r.preset)
		if err != nil {
			return nil, fmt.Errorf("--preset: %v", err)
		}
		return func(f *decode.Frame) (*rgb.Image, error) {
			out, err := applyLayout(g, kernel, &f.Image, nFrames)
			if err != nil {
				return nil, fmt.Errorf("%s: frame %d: %w", video, f.Index, err)
			}
			return out, nil
		}, nil
	case *r.kernel != resize.DefaultKernel:
		return nil, errors.New("--kernel needs --size or --preset")
	}
	return sourceSize, nil
}

// applyLayout resizes src as geometry g lays it out: the whole frame to Layout.Resize, then the centre
// crop if any. Tiled layouts (InternVL) are written as the resized image the tiles are cut from; the
// separate thumbnail is not written.
func applyLayout(g geom.Geometry, kernel string, src *rgb.Image, nFrames int) (*rgb.Image, error) {
	l, err := g.Layout(src.W, src.H, nFrames)
	if err != nil {
		return nil, err
	}
	out, err := resize.Resize(kernel, src, l.Resize.W, l.Resize.H)
	if err != nil {
		return nil, err
	}
	if c := l.Crop; c != nil {
		if c.X < 0 || c.Y < 0 || c.W < 1 || c.H < 1 || c.X+c.W > out.W || c.Y+c.H > out.H {
			return nil, fmt.Errorf("crop %+v outside the %dx%d resize", *c, out.W, out.H)
		}
		cropped := rgb.New(c.W, c.H)
		for y := 0; y < c.H; y++ {
			copy(cropped.Row(y), out.Row(c.Y + y)[3*c.X:3*(c.X+c.W)])
		}
		out = cropped
	}
	return out, nil
}
