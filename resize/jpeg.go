package resize

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/framesweep/framesweep/native/opencv"
	"github.com/framesweep/framesweep/rgb"
)

// The cached pipeline's JPEG codec: what VLMEvalKit's frame cache does with Pillow's default
// Image.save(format='JPEG') — quality 75, 4:2:0 chroma subsampling, baseline, no optimisation — encoded
// and decoded with libjpeg-turbo (the library Pillow and OpenCV's imgcodecs link) with OpenCV 4.6's
// settings, through native/opencv: the bytes and the decoded pixels match Pillow's (resize/jpeg_test.go
// checks both against /usr/bin/python3 PIL) and cv2.imencode/imdecode's (resize/opencv_test.go, also
// against gocv's IMEncode/IMDecode).

// PillowJPEGQuality is Pillow's default JPEG quality.
const PillowJPEGQuality = 75

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
	out, err := opencv.EncodeJPEG(img.Pix, img.W, img.H, img.Stride, quality)
	if err != nil {
		return nil, fmt.Errorf("%w: encode: %v", ErrJPEG, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: encode: libjpeg returned no bytes", ErrJPEG)
	}
	return out, nil
}

// DecodeJPEG decodes a JPEG to RGB24 (libjpeg's default fancy upsampling and integer IDCT, as Pillow
// and cv::imdecode). It refuses what it would not decode as cv::imdecode(IMREAD_COLOR) does rather than
// return other pixels: a 4-component (CMYK) JPEG, an EXIF orientation other than "normal" (imdecode
// would rotate), a picture over MaxPixels, and corrupt or truncated data.
func DecodeJPEG(b []byte) (*rgb.Image, error) {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return nil, fmt.Errorf("%w: decode: not a JPEG (no SOI marker)", ErrJPEG)
	}
	w, h, comps, err := opencv.JPEGInfo(b)
	if err != nil {
		return nil, fmt.Errorf("%w: decode: %v", ErrJPEG, err)
	}
	if comps != 1 && comps != 3 {
		return nil, fmt.Errorf("%w: decode: %d colour components (only grey and YCbCr/RGB JPEGs are read)", ErrJPEG, comps)
	}
	if w > MaxSide || h > MaxSide || w*h > MaxPixels {
		return nil, fmt.Errorf("%w: decode: %dx%d is larger than %d pixels per side or %d in all", ErrJPEG, w, h, MaxSide, MaxPixels)
	}
	if o := exifOrientation(b); o >= 2 && o <= 8 {
		return nil, fmt.Errorf("%w: decode: EXIF orientation %d (cv::imdecode would rotate or flip the picture; not applied here)", ErrJPEG, o)
	}
	img := rgb.New(w, h)
	if err := opencv.DecodeJPEG(b, img.Pix, w, h, img.Stride); err != nil {
		return nil, fmt.Errorf("%w: decode: %v", ErrJPEG, err)
	}
	return img, nil
}

// exifOrientation returns the Orientation tag (0x0112) of IFD0 in a JPEG's Exif APP1 segment, or 0
// when there is none (or the segment cannot be read: then there is no orientation to apply either).
// Only the markers before the first scan are read.
func exifOrientation(b []byte) int {
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xFF {
			return 0
		}
		m := b[i+1]
		if m == 0xFF { // fill byte
			i++
			continue
		}
		if m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7) { // no length
			i += 2
			continue
		}
		if m == 0xDA || m == 0xD9 { // start of scan, end of image
			return 0
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return 0
		}
		if seg := b[i+4 : i+2+n]; m == 0xE1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			if o := tiffOrientation(seg[6:]); o != 0 {
				return o
			}
		}
		i += 2 + n
	}
	return 0
}

// tiffOrientation reads tag 0x0112 (a SHORT) from IFD0 of a TIFF header, or 0.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(t[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 0
	}
	off := int(bo.Uint32(t[4:]))
	if off < 8 || off+2 > len(t) {
		return 0
	}
	n := int(bo.Uint16(t[off:]))
	for k := 0; k < n; k++ {
		e := off + 2 + 12*k
		if e+12 > len(t) {
			return 0
		}
		if bo.Uint16(t[e:]) == 0x0112 && bo.Uint16(t[e+2:]) == 3 { // SHORT
			return int(bo.Uint16(t[e+8:]))
		}
	}
	return 0
}

// JPEGRoundTrip is the cached pipeline's frame step: encode at quality, then decode.
func JPEGRoundTrip(img *rgb.Image, quality int) (*rgb.Image, error) {
	b, err := EncodeJPEG(img, quality)
	if err != nil {
		return nil, err
	}
	return DecodeJPEG(b)
}
