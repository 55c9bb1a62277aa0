package resize

import (
	"errors"
	"fmt"

	"gocv.io/x/gocv"

	"github.com/framesweep/framesweep/rgb"
)

// The cached pipeline's JPEG codec: what VLMEvalKit's frame cache does with Pillow's default
// Image.save(format='JPEG') — quality 75, 4:2:0 chroma subsampling, baseline, no optimisation — encoded
// and decoded here with OpenCV's libjpeg-turbo (the library Pillow links too), so the bytes and the
// decoded pixels match Pillow's (resize/jpeg_test.go checks both against /usr/bin/python3 PIL).

// PillowJPEGQuality is Pillow's default JPEG quality.
const PillowJPEGQuality = 75

// imwriteJpegSamplingFactor and its 4:2:0 value (OpenCV ≥ 4.5.5 IMWRITE_JPEG_SAMPLING_FACTOR,
// not exported by gocv v0.32.0). libjpeg already defaults to 4:2:0; saying so pins it.
const (
	imwriteJpegSamplingFactor    = 7
	imwriteJpegSamplingFactor420 = 0x221111
)

// ErrJPEG reports a JPEG that could not be encoded or decoded.
var ErrJPEG = errors.New("jpeg")

// EncodeJPEG encodes img as a baseline 4:2:0 JPEG at quality (1..100), as Pillow's save does.
func EncodeJPEG(img *rgb.Image, quality int) ([]byte, error) {
	if err := img.Validate(); err != nil {
		return nil, fmt.Errorf("%w: encode: %v", ErrJPEG, err)
	}
	if quality < 1 || quality > 100 {
		return nil, fmt.Errorf("%w: encode: quality %d outside 1..100", ErrJPEG, quality)
	}
	m := gocv.NewMatWithSize(img.H, img.W, gocv.MatTypeCV8UC3)
	defer m.Close()
	dst, err := m.DataPtrUint8()
	if err != nil {
		return nil, fmt.Errorf("%w: encode: %v", ErrJPEG, err)
	}
	// Copy into C memory (C never holds Go memory), swapping RGB → OpenCV's BGR order.
	for y := 0; y < img.H; y++ {
		src := img.Row(y)
		row := dst[y*3*img.W : (y+1)*3*img.W]
		for i := 0; i < len(src); i += 3 {
			row[i], row[i+1], row[i+2] = src[i+2], src[i+1], src[i]
		}
	}
	buf, err := gocv.IMEncodeWithParams(gocv.JPEGFileExt, m, []int{
		gocv.IMWriteJpegQuality, quality,
		imwriteJpegSamplingFactor, imwriteJpegSamplingFactor420,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: encode: %v", ErrJPEG, err)
	}
	defer buf.Close()
	out := append([]byte(nil), buf.GetBytes()...)
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: encode: OpenCV returned no bytes", ErrJPEG)
	}
	return out, nil
}

// DecodeJPEG decodes a JPEG to RGB24 (libjpeg's default fancy upsampling and integer IDCT, as Pillow).
func DecodeJPEG(b []byte) (*rgb.Image, error) {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return nil, fmt.Errorf("%w: decode: not a JPEG (no SOI marker)", ErrJPEG)
	}
	m, err := gocv.IMDecode(b, gocv.IMReadColor)
	if err != nil {
		return nil, fmt.Errorf("%w: decode: %v", ErrJPEG, err)
	}
	defer m.Close()
	if m.Empty() || m.Type() != gocv.MatTypeCV8UC3 {
		return nil, fmt.Errorf("%w: decode: OpenCV could not decode %d bytes", ErrJPEG, len(b))
	}
	src, err := m.DataPtrUint8()
	if err != nil {
		return nil, fmt.Errorf("%w: decode: %v", ErrJPEG, err)
	}
	img := rgb.New(m.Cols(), m.Rows())
	for i := 0; i+2 < len(img.Pix); i += 3 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2] = src[i+2], src[i+1], src[i]
	}
	return img, nil
}

// JPEGRoundTrip is the cached pipeline's frame step: encode at quality, then decode.
func JPEGRoundTrip(img *rgb.Image, quality int) (*rgb.Image, error) {
	b, err := EncodeJPEG(img, quality)
	if err != nil {
		return nil, err
	}
	return DecodeJPEG(b)
}
