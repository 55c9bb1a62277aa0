package resize

import (
	"fmt"
	"image"

	"gocv.io/x/gocv"

	"github.com/framesweep/framesweep/rgb"
)

// cvResizer is OpenCV 4.6's cv::resize through gocv v0.32.0 (INTER_AREA, INTER_LINEAR, INTER_CUBIC).
// Channel order does not matter to resize, so RGB bytes go in as a CV_8UC3 Mat unchanged. Mats are
// allocated by OpenCV (never over Go memory) and each is closed exactly once, inside the call.
type cvResizer struct {
	kernel         string
	interp         gocv.InterpolationFlags
	sw, sh, dw, dh int
}

func newCV(kernel string, sw, sh, dw, dh int) *cvResizer {
	in := map[string]gocv.InterpolationFlags{CVArea: gocv.InterpolationArea, CVLinear: gocv.InterpolationLinear,
		CVCubic: gocv.InterpolationCubic}[kernel]
	return &cvResizer{kernel: kernel, interp: in, sw: sw, sh: sh, dw: dw, dh: dh}
}

func (r *cvResizer) Resize(dst, src *rgb.Image) error {
	if err := checkSizes(r.kernel, r.sw, r.sh, r.dw, r.dh, dst, src); err != nil {
		return err
	}
	m, err := newCVMat(src)
	if err != nil {
		return &Error{Op: "resize", Kernel: r.kernel, Err: ErrOpenCV, Msg: err.Error()}
	}
	defer m.Close()
	return r.resizeMat(dst, m)
}

// resizeMat resizes an already converted source (shared by FanOut across cv targets).
func (r *cvResizer) resizeMat(dst *rgb.Image, m *cvMat) error {
	out := gocv.NewMat()
	defer out.Close()
	gocv.Resize(m.mat, &out, image.Pt(r.dw, r.dh), 0, 0, r.interp)
	if out.Rows() != r.dh || out.Cols() != r.dw || out.Type() != gocv.MatTypeCV8UC3 {
		return &Error{Op: "resize", Kernel: r.kernel, Err: ErrOpenCV,
			Msg: fmt.Sprintf("cv::resize returned %dx%d type %v", out.Cols(), out.Rows(), out.Type())}
	}
	b, err := out.DataPtrUint8()
	if err != nil {
		return &Error{Op: "resize", Kernel: r.kernel, Err: ErrOpenCV, Msg: err.Error()}
	}
	rb := 3 * r.dw
	for y := 0; y < r.dh; y++ {
		copy(dst.Row(y), b[y*rb:(y+1)*rb])
	}
	return nil
}

// cvMat owns one OpenCV Mat holding a copy of an RGB image. Close is idempotent.
type cvMat struct {
	mat    gocv.Mat
	closed bool
}

func newCVMat(src *rgb.Image) (*cvMat, error) {
	mat := gocv.NewMatWithSize(src.H, src.W, gocv.MatTypeCV8UC3)
	b, err := mat.DataPtrUint8()
	if err != nil {
		mat.Close()
		return nil, err
	}
	rb := 3 * src.W
	for y := 0; y < src.H; y++ {
		copy(b[y*rb:(y+1)*rb], src.Row(y))
	}
	return &cvMat{mat: mat}, nil
}

func (m *cvMat) Close() error {
	if m == nil || m.closed {
		return nil
	}
	m.closed = true
	return m.mat.Close()
}

// CVBench times bare cv::resize on Mats prepared once (no copies in or out): the OpenCV baseline of
// `framesweep bench resize`. It owns two Mats; Close releases them and is idempotent.
type CVBench struct {
	src    *cvMat
	dst    gocv.Mat
	interp gocv.InterpolationFlags
	size   image.Point
	closed bool
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
	m, err := newCVMat(src)
	if err != nil {
		return nil, &Error{Op: "new", Kernel: kernel, Err: ErrOpenCV, Msg: err.Error()}
	}
	return &CVBench{src: m, dst: gocv.NewMat(), interp: cr.interp, size: image.Pt(dstW, dstH)}, nil
}

// Run performs one cv::resize.
func (b *CVBench) Run() { gocv.Resize(b.src.mat, &b.dst, b.size, 0, 0, b.interp) }

// Close releases both Mats.
func (b *CVBench) Close() error {
	if b == nil || b.closed {
		return nil
	}
	b.closed = true
	err := b.dst.Close()
	if e := b.src.Close(); err == nil {
		err = e
	}
	return err
}
