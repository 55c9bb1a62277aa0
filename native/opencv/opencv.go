//go:build cgo

package opencv

// #include <stdlib.h>
// #include "opencv.h"
import "C"

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// Interp is a cv::InterpolationFlags value.
type Interp int

// The interpolations the cv-* kernels use (OpenCV's values).
const (
	Linear Interp = 1 // cv::INTER_LINEAR
	Cubic  Interp = 2 // cv::INTER_CUBIC
	Area   Interp = 3 // cv::INTER_AREA
)

// Sentinels; errors returned by this package are *Error wrapping one of them.
var (
	ErrOpenCV   = errors.New("opencv")
	ErrJPEG     = errors.New("jpeg")
	ErrArgument = errors.New("bad argument")
)

// Error carries the operation that failed and what OpenCV or libjpeg said.
type Error struct {
	Op  string // "resize", "jpeg encode", "jpeg decode", …
	Err error
	Msg string
}

func (e *Error) Error() string { return "opencv: " + e.Op + ": " + e.Msg + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

const errLen = 256

// call runs f with a C message buffer and turns a non-zero return into an *Error.
func call(op string, sentinel error, f func(err *C.char, errn C.int) C.int) error {
	buf := (*C.char)(C.calloc(errLen, 1))
	defer C.free(unsafe.Pointer(buf))
	if rc := f(buf, errLen); rc != C.NATIVE_CV_OK {
		msg := C.GoString(buf)
		if msg == "" {
			msg = fmt.Sprintf("code %d", int(rc))
		}
		return &Error{Op: op, Err: sentinel, Msg: msg}
	}
	return nil
}

var version = sync.OnceValue(func() string {
	buf := (*C.char)(C.calloc(64, 1))
	defer C.free(unsafe.Pointer(buf))
	C.native_cv_version(buf, 64)
	return C.GoString(buf)
})

// Version is cv::getVersionString of the libopencv_core this process runs with ("4.6.0").
func Version() string { return version() }

// checkImage validates a packed 3-channel 8-bit image of w×h in buf with stride bytes per row.
func checkImage(op, what string, buf []byte, w, h, stride int) error {
	if w <= 0 || h <= 0 || w > math.MaxInt32/3 || h > math.MaxInt32 || stride < 3*w || stride > math.MaxInt32 {
		return &Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("%s %dx%d, stride %d", what, w, h, stride)}
	}
	if need := (h-1)*stride + 3*w; len(buf) < need {
		return &Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("%s %dx%d needs %d bytes, has %d", what, w, h, need, len(buf))}
	}
	return nil
}

// Resize is cv::resize(src, dst, Size(dw, dh), 0, 0, in) on packed 8-bit 3-channel images (channel
// order does not matter to it). The caller's buffers are used in place.
func Resize(dst []byte, dw, dh, dstride int, src []byte, sw, sh, sstride int, in Interp) error {
	if err := checkImage("resize", "source", src, sw, sh, sstride); err != nil {
		return err
	}
	if err := checkImage("resize", "destination", dst, dw, dh, dstride); err != nil {
		return err
	}
	if in != Linear && in != Cubic && in != Area {
		return &Error{Op: "resize", Err: ErrArgument, Msg: fmt.Sprintf("interpolation %d", in)}
	}
	return call("resize", ErrOpenCV, func(err *C.char, errn C.int) C.int {
		return C.native_cv_resize((*C.uint8_t)(&src[0]), C.int(sw), C.int(sh), C.int(sstride),
			(*C.uint8_t)(&dst[0]), C.int(dw), C.int(dh), C.int(dstride), C.int(in), err, errn)
	})
}

// EncodeJPEG encodes packed RGB24 (w×h, stride bytes per row) as cv::imencode(".jpg", BGR of it,
// {IMWRITE_JPEG_QUALITY, quality}) does: the same bytes.
func EncodeJPEG(rgb []byte, w, h, stride, quality int) ([]byte, error) {
	if err := checkImage("jpeg encode", "image", rgb, w, h, stride); err != nil {
		return nil, err
	}
	if w > 65500 || h > 65500 { // JPEG_MAX_DIMENSION
		return nil, &Error{Op: "jpeg encode", Err: ErrJPEG, Msg: fmt.Sprintf("%dx%d is larger than JPEG allows (65500)", w, h)}
	}
	if quality < 0 || quality > 100 {
		return nil, &Error{Op: "jpeg encode", Err: ErrArgument, Msg: fmt.Sprintf("quality %d outside 0..100", quality)}
	}
	var out *C.uint8_t
	var n C.size_t
	err := call("jpeg encode", ErrJPEG, func(err *C.char, errn C.int) C.int {
		return C.native_cv_jpeg_encode((*C.uint8_t)(&rgb[0]), C.int(w), C.int(h), C.int(stride), C.int(quality), &out, &n, err, errn)
	})
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(out))
	return C.GoBytes(unsafe.Pointer(out), C.int(n)), nil
}

// JPEGInfo reads a JPEG's frame header: its size and number of colour components.
func JPEGInfo(b []byte) (w, h, components int, err error) {
	if len(b) == 0 {
		return 0, 0, 0, &Error{Op: "jpeg header", Err: ErrJPEG, Msg: "no bytes"}
	}
	var cw, ch, cc C.int
	err = call("jpeg header", ErrJPEG, func(err *C.char, errn C.int) C.int {
		return C.native_cv_jpeg_info((*C.uint8_t)(&b[0]), C.size_t(len(b)), &cw, &ch, &cc, err, errn)
	})
	return int(cw), int(ch), int(cc), err
}

// DecodeJPEG decodes a 1- or 3-component JPEG of w×h (from JPEGInfo) into dst as packed RGB24, as
// cv::imdecode(IMREAD_COLOR) does before it turns RGB into BGR (and before it applies an EXIF
// orientation: the caller checks that). Corrupt or truncated data is an error.
func DecodeJPEG(b []byte, dst []byte, w, h, stride int) error {
	if len(b) == 0 {
		return &Error{Op: "jpeg decode", Err: ErrJPEG, Msg: "no bytes"}
	}
	if err := checkImage("jpeg decode", "destination", dst, w, h, stride); err != nil {
		return err
	}
	return call("jpeg decode", ErrJPEG, func(err *C.char, errn C.int) C.int {
		return C.native_cv_jpeg_decode((*C.uint8_t)(&b[0]), C.size_t(len(b)), (*C.uint8_t)(&dst[0]),
			C.int(w), C.int(h), C.int(stride), err, errn)
	})
}
