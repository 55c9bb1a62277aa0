// Package rgb holds the packed RGB24 image type that every stage hands to the next (decode → resize →
// cache/llm). It is pure Go and has no dependencies, so pure-Go packages can use it.
package rgb

import (
	"fmt"
	"image"
	"math"
)

// Image is a packed 8-bit RGB image: pixel (x, y) starts at Pix[y*Stride+3*x].
type Image struct {
	W, H   int
	Stride int // bytes per row, ≥ 3*W
	Pix    []byte
}

// New allocates a W×H image with a tight stride.
func New(w, h int) *Image {
	return &Image{W: w, H: h, Stride: 3 * w, Pix: make([]byte, 3*w*h)}
}

// Validate reports whether the image's geometry is consistent with its buffer.
func (m *Image) Validate() error {
	switch {
	case m == nil:
		return fmt.Errorf("rgb: nil image")
	case m.W <= 0 || m.H <= 0:
		return fmt.Errorf("rgb: bad size %dx%d", m.W, m.H)
	case m.Stride < 3*m.W:
		return fmt.Errorf("rgb: stride %d < 3*width %d", m.Stride, 3*m.W)
	case len(m.Pix) < (m.H-1)*m.Stride+3*m.W:
		return fmt.Errorf("rgb: buffer of %d bytes too small for %dx%d stride %d", len(m.Pix), m.W, m.H, m.Stride)
	}
	return nil
}

// Row returns the 3*W bytes of row y.
func (m *Image) Row(y int) []byte { return m.Pix[y*m.Stride : y*m.Stride+3*m.W] }

// Packed returns the pixels as one tight H×W×3 buffer (a copy only when the stride has padding).
func (m *Image) Packed() []byte {
	if m.Stride == 3*m.W {
		return m.Pix[:3*m.W*m.H]
	}
	out := make([]byte, 0, 3*m.W*m.H)
	for y := 0; y < m.H; y++ {
		out = append(out, m.Row(y)...)
	}
	return out
}

// Clone returns a tightly packed deep copy, so it outlives a borrowed buffer.
func (m *Image) Clone() *Image {
	c := New(m.W, m.H)
	for y := 0; y < m.H; y++ {
		copy(c.Row(y), m.Row(y))
	}
	return c
}

// NRGBA copies the image into an opaque image.NRGBA, the form the standard library's encoders take
// (png writes an opaque NRGBA as 8-bit RGB, so a PNG of it has no alpha channel).
func (m *Image) NRGBA() *image.NRGBA {
	out := image.NewNRGBA(image.Rect(0, 0, m.W, m.H))
	for y := 0; y < m.H; y++ {
		row := m.Row(y)
		dst := out.Pix[y*out.Stride : y*out.Stride+4*m.W]
		for x := 0; x < m.W; x++ {
			dst[4*x], dst[4*x+1], dst[4*x+2], dst[4*x+3] = row[3*x], row[3*x+1], row[3*x+2], 255
		}
	}
	return out
}

// PSNR is the peak signal-to-noise ratio of b against a in dB over all three channels, +Inf when the
// images are equal; ok is false when their sizes differ. It is the one PSNR of the cached-pipeline
// provenance and the benchmarks' decoder comparisons.
func PSNR(a, b *Image) (db float64, ok bool) {
	if a.W != b.W || a.H != b.H {
		return 0, false
	}
	var se float64
	for y := 0; y < a.H; y++ {
		ra, rb := a.Row(y), b.Row(y)
		var s int64
		for i := range ra {
			d := int64(ra[i]) - int64(rb[i])
			s += d * d
		}
		se += float64(s)
	}
	if se == 0 {
		return math.Inf(1), true
	}
	mse := se / float64(3*a.W*a.H)
	return 10 * math.Log10(255*255/mse), true
}
