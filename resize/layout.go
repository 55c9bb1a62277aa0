package resize

import (
	"fmt"

	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
)

// LayoutTargets lists the resizes one source frame needs for layout l: the whole-frame resize and,
// for tiled layouts with a thumbnail, the thumbnail's own resize of the source.
func LayoutTargets(l geom.Layout, kernel string) []Target {
	t := []Target{{W: l.Resize.W, H: l.Resize.H, Kernel: kernel}}
	if l.Thumb != nil {
		t = append(t, Target{W: l.Thumb.W, H: l.Thumb.H, Kernel: kernel})
	}
	return t
}

// AppendLayout appends to dst, packed RGB24, the images one frame contributes under layout l, cut
// from resized (the frame at l.Resize) and thumb (the frame at *l.Thumb, nil when l has none): the
// resized frame itself, its centre crop, its tiles in row-major order followed by the thumbnail, or
// the resized frame at the top left of the zero-filled padding canvas. This is what the model sees;
// resized and thumb are only read, so they can be shared.
func AppendLayout(dst []byte, l geom.Layout, resized, thumb *rgb.Image) ([]byte, error) {
	if resized.W != l.Resize.W || resized.H != l.Resize.H {
		return dst, &Error{Op: "layout", Err: ErrBadSize, Msg: fmt.Sprintf("frame is %dx%d, layout resizes to %dx%d", resized.W, resized.H, l.Resize.W, l.Resize.H)}
	}
	inside := func(r geom.Rect) error {
		if r.X < 0 || r.Y < 0 || r.W < 1 || r.H < 1 || r.X+r.W > resized.W || r.Y+r.H > resized.H {
			return &Error{Op: "layout", Err: ErrBadSize, Msg: fmt.Sprintf("rectangle %+v outside the %dx%d resize", r, resized.W, resized.H)}
		}
		return nil
	}
	switch {
	case len(l.Tiles) > 0:
		for _, t := range l.Tiles {
			if err := inside(t); err != nil {
				return dst, err
			}
			dst = appendRect(dst, resized, t)
		}
		if l.Thumb != nil {
			if thumb == nil || thumb.W != l.Thumb.W || thumb.H != l.Thumb.H {
				return dst, &Error{Op: "layout", Err: ErrBadSize, Msg: fmt.Sprintf("thumbnail %v missing or of the wrong size", *l.Thumb)}
			}
			dst = appendRect(dst, thumb, geom.Rect{W: thumb.W, H: thumb.H})
		}
		return dst, nil
	case l.Crop != nil:
		if err := inside(*l.Crop); err != nil {
			return dst, err
		}
		return appendRect(dst, resized, *l.Crop), nil
	case l.Pad != nil:
		return appendPadded(dst, resized, *l.Pad)
	}
	return appendRect(dst, resized, geom.Rect{W: resized.W, H: resized.H}), nil
}

// ApplyLayout resizes src with kernel as l lays it out and returns the images the model sees, in
// AppendLayout's order.
func ApplyLayout(kernel string, l geom.Layout, src *rgb.Image) ([]*rgb.Image, error) {
	outs, err := FanOut(src, LayoutTargets(l, kernel))
	if err != nil {
		return nil, err
	}
	var thumb *rgb.Image
	if l.Thumb != nil {
		thumb = outs[1]
	}
	buf, err := AppendLayout(nil, l, outs[0], thumb)
	if err != nil {
		return nil, err
	}
	w, h, images, err := l.ImageSize()
	if err != nil {
		return nil, err
	}
	per := 3 * w * h
	out := make([]*rgb.Image, images)
	for i := range out {
		out[i] = &rgb.Image{W: w, H: h, Stride: 3 * w, Pix: buf[i*per : (i+1)*per : (i+1)*per]}
	}
	return out, nil
}

// appendPadded appends m at the top left of a canvas of size c whose other pixels are 0.
func appendPadded(out []byte, m *rgb.Image, c geom.Size) ([]byte, error) {
	if m.W > c.W || m.H > c.H {
		return out, &Error{Op: "layout", Err: ErrBadSize, Msg: fmt.Sprintf("a %dx%d image does not fit the %v padding canvas", m.W, m.H, c)}
	}
	for y := 0; y < c.H; y++ {
		n := 0
		if y < m.H {
			out = append(out, m.Pix[y*m.Stride:y*m.Stride+3*m.W]...)
			n = m.W
		}
		for x := n; x < c.W; x++ {
			out = append(out, 0, 0, 0)
		}
	}
	return out, nil
}

func appendRect(out []byte, m *rgb.Image, r geom.Rect) []byte {
	for y := r.Y; y < r.Y+r.H; y++ {
		out = append(out, m.Pix[y*m.Stride+3*r.X:y*m.Stride+3*(r.X+r.W)]...)
	}
	return out
}
