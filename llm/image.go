package llm

import (
	"bytes"
	"image/jpeg"
	"image/png"

	"github.com/framesweep/framesweep/rgb"
)

// EncodePNG encodes a frame losslessly (what llama.cpp's mtmd and servers decode).
func EncodePNG(m *rgb.Image) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, Errorf("encode png", "", ErrBadImage, "%v", err)
	}
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, m.NRGBA()); err != nil {
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
	if err := jpeg.Encode(&b, m.NRGBA(), &jpeg.Options{Quality: quality}); err != nil {
		return nil, Errorf("encode jpeg", "", ErrBadImage, "%v", err)
	}
	return b.Bytes(), nil
}
