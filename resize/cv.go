package resize

import (
	"github.com/framesweep/framesweep/native/opencv"
	"github.com/framesweep/framesweep/rgb"
)

// cvResizer is OpenCV 4.6's cv::resize (INTER_AREA, INTER_LINEAR, INTER_CUBIC), called through
// native/opencv, which links libopencv_core and libopencv_imgproc only (docs/resize.md, "OpenCV"). Channel
// order does not matter to resize, so RGB bytes go in unchanged; cv::resize reads and writes the
// images' own buffers for the duration of the call.
type cvResizer struct {
	kernel         string
	interp         opencv.Interp
	sw, sh, dw, dh int
}

var cvInterp = map[string]opencv.Interp{CVArea: opencv.Area, CVLinear: opencv.Linear, CVCubic: opencv.Cubic}

func newCV(kernel string, sw, sh, dw, dh int) *cvResizer {
	return &cvResizer{kernel: kernel, interp: cvInterp[kernel], sw: sw, sh: sh, dw: dw, dh: dh}
}

func (r *cvResizer) Resize(dst, src *rgb.Image) error {
	if err := checkSizes(r.kernel, r.sw, r.sh, r.dw, r.dh, dst, src); err != nil {
		return err
	}
	if err := opencv.Resize(dst.Pix, dst.W, dst.H, dst.Stride, src.Pix, src.W, src.H, src.Stride, r.interp); err != nil {
		return &Error{Op: "resize", Kernel: r.kernel, Err: ErrOpenCV, Msg: err.Error()}
	}
	return nil
}

// CVBench times bare cv::resize between two images prepared once (no copies in or out): the OpenCV
// baseline of `framesweep bench resize`. It holds only Go memory; Close is idempotent.
type CVBench struct {
	r        *cvResizer
	src, dst *rgb.Image
	closed   bool
}

// NewCVBench prepares src for repeated resizes to dstW×dstH with a cv-* kernel.
func NewCVBench(kernel string, src *rgb.Image, dstW, dstH int) (*CVBench, error) {
	r, err := New(kernel, src.W, src.H, dstW, dstH)
	if err != nil {
		return nil, err
	}
	cr, ok := r.(*cvResizer)
	if !ok {
		return nil, &Error{Op: "new", Kernel: kernel, Err: ErrUnknownKernel, Msg: "not an OpenCV kernel"}
	}
	if err := src.Validate(); err != nil {
		return nil, &Error{Op: "new", Kernel: kernel, Err: ErrBadSize, Msg: "source: " + err.Error()}
	}
	return &CVBench{r: cr, src: src, dst: rgb.New(dstW, dstH)}, nil
}

// Run performs one cv::resize. Its error is dropped: the sizes and buffers were checked when the bench
// was made, and a timing loop has nothing to do with one.
func (b *CVBench) Run() {
	_ = opencv.Resize(b.dst.Pix, b.dst.W, b.dst.H, b.dst.Stride, b.src.Pix, b.src.W, b.src.H, b.src.Stride, b.r.interp)
}

// Close releases the images; it is idempotent.
func (b *CVBench) Close() error {
	if b == nil || b.closed {
		return nil
	}
	b.closed = true
	b.src, b.dst = nil, nil
	return nil
}
