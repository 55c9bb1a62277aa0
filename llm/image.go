package llm

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"

	"github.com/framesweep/framesweep/internal/rgb"
)

// toNRGBA copies an RGB24 frame into an opaque image.NRGBA for the standard encoders.
func toNRGBA(m *rgb.Image) *image.NRGBA {
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

// EncodePNG encodes a frame losslessly (what llama.cpp's mtmd and servers decode).
func EncodePNG(m *rgb.Image) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, Errorf("encode png", "", ErrBadImage, "%v", err)
	}
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, toNRGBA(m)); err != nil {
		return nil, Errorf("encode png", "", ErrBadImage, "%v", err)
	}
	return b.Bytes(), nil
}

// EncodeJPEG encodes a frame at the given quality (1..100).
func EncodeJPEG(m *rgb.Image, quality int) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, Errorf("encode jpeg", "", ErrBadImage, "%v", err)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, toNRGBA(m), &jpeg.Options{Quality: quality}); err != nil {
		return nil, Errorf("encode jpeg", "", ErrBadImage, "%v", err)
	}
	return b.Bytes(), nil
}
