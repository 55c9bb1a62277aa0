package resize

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/rgb"
)

// Resizer resizes src into dst; the sizes are fixed when the Resizer is made. Implementations hold only
// Go memory (C handles live for one call), so a Resizer is safe for concurrent use.
type Resizer interface {
	Resize(dst, src *rgb.Image) error
}

// Kernel names, as accepted by New and `framesweep frames --kernel`.
const (
	PILBicubic   = "pil-bicubic"
	PILBilinear  = "pil-bilinear"
	PILLanczos   = "pil-lanczos"
	TorchBicubic = "torch-bicubic"
	CVArea       = "cv-area"
	CVLinear     = "cv-linear"
	CVCubic      = "cv-cubic"
)

// DefaultKernel is Pillow's default for RGB images (what most Video LLM stacks call).
const DefaultKernel = PILBicubic

// Kernels lists every kernel name.
func Kernels() []string {
	return []string{PILBicubic, PILBilinear, PILLanczos, TorchBicubic, CVArea, CVLinear, CVCubic}
}

// CheckKernel reports whether name is a kernel New accepts: nil, or an *Error wrapping
// ErrUnknownKernel that lists the known ones. It is the one validator the CLI, grids and servers use.
func CheckKernel(name string) error {
	for _, k := range Kernels() {
		if k == name {
			return nil
		}
	}
	return &Error{Op: "check", Kernel: name, Err: ErrUnknownKernel, Msg: "want one of " + strings.Join(Kernels(), ", ")}
}

// Sentinel errors; every error from this package's resizers wraps one in an *Error.
var (
	ErrUnknownKernel = errors.New("unknown kernel")
	ErrBadSize       = errors.New("bad size")
	ErrOpenCV        = errors.New("opencv failed")
)

// Error reports a failed resize operation with its kernel and sizes.
type Error struct {
	Op     string // "new", "resize", "fanout"
	Kernel string
	Err    error
	Msg    string
}

func (e *Error) Error() string {
	s := "resize: " + e.Op
	if e.Kernel != "" {
		s += " " + e.Kernel
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// MaxSide bounds every width and height a Resizer accepts (DESIGN.md caps decoded frames at 4096²;
// outputs are allowed to be upscaled further, within reason).
const MaxSide = 1 << 14

// MaxPixels bounds the area of a source or an output (64 Mi pixels = 192 MiB of RGB24), so a bad size
// cannot make a resize allocate without bound.
const MaxPixels = 1 << 26

type key struct {
	kernel         string
	sw, sh, dw, dh int
}

// cache holds Resizers by (kernel, sizes). A sweep uses a handful of sizes per video, so the cache is
// small; it is emptied when it reaches cacheMax entries rather than growing without bound.
var cache = struct {
	sync.Mutex
	m map[key]Resizer
}{m: map[key]Resizer{}}

const cacheMax = 512

// New returns the Resizer for kernel from srcW×srcH to dstW×dstH, from the cache when it was made before.
func New(kernel string, srcW, srcH, dstW, dstH int) (Resizer, error) {
	k := key{kernel, srcW, srcH, dstW, dstH}
	cache.Lock()
	r, ok := cache.m[k]
	cache.Unlock()
	if ok {
		return r, nil
	}
	r, err := build(k)
	if err != nil {
		return nil, err
	}
	cache.Lock()
	defer cache.Unlock()
	if prev, ok := cache.m[k]; ok { // another goroutine built it meanwhile: share one
		return prev, nil
	}
	if len(cache.m) >= cacheMax {
		clear(cache.m)
	}
	cache.m[k] = r
	return r, nil
}

func build(k key) (Resizer, error) {
	for _, s := range []int{k.sw, k.sh, k.dw, k.dh} {
		if s <= 0 || s > MaxSide {
			return nil, &Error{Op: "new", Kernel: k.kernel, Err: ErrBadSize,
				Msg: fmt.Sprintf("%dx%d -> %dx%d (each side must be 1..%d)", k.sw, k.sh, k.dw, k.dh, MaxSide)}
		}
	}
	if k.sw*k.sh > MaxPixels || k.dw*k.dh > MaxPixels {
		return nil, &Error{Op: "new", Kernel: k.kernel, Err: ErrBadSize,
			Msg: fmt.Sprintf("%dx%d -> %dx%d (at most %d pixels each)", k.sw, k.sh, k.dw, k.dh, MaxPixels)}
	}
	switch k.kernel {
	case PILBicubic, PILBilinear, PILLanczos:
		f := map[string]native.Filter{PILBicubic: native.Bicubic, PILBilinear: native.Bilinear, PILLanczos: native.Lanczos}[k.kernel]
		p, err := native.NewPlan(f, k.sw, k.sh, k.dw, k.dh)
		if err != nil {
			return nil, &Error{Op: "new", Kernel: k.kernel, Err: ErrBadSize, Msg: err.Error()}
		}
		return &pilResizer{kernel: k.kernel, plan: p}, nil
	case TorchBicubic:
		r, err := newTorch(k.sw, k.sh, k.dw, k.dh)
		if err != nil {
			return nil, &Error{Op: "new", Kernel: k.kernel, Err: ErrBadSize, Msg: err.Error()}
		}
		return r, nil
	case CVArea, CVLinear, CVCubic:
		return newCV(k.kernel, k.sw, k.sh, k.dw, k.dh), nil
	}
	return nil, &Error{Op: "new", Kernel: k.kernel, Err: ErrUnknownKernel,
		Msg: fmt.Sprintf("want one of %v", Kernels())}
}

// checkSizes validates dst and src against the sizes a Resizer was made for.
func checkSizes(kernel string, sw, sh, dw, dh int, dst, src *rgb.Image) error {
	if err := src.Validate(); err != nil {
		return &Error{Op: "resize", Kernel: kernel, Err: ErrBadSize, Msg: "source: " + err.Error()}
	}
	if err := dst.Validate(); err != nil {
		return &Error{Op: "resize", Kernel: kernel, Err: ErrBadSize, Msg: "destination: " + err.Error()}
	}
	if src.W != sw || src.H != sh || dst.W != dw || dst.H != dh {
		return &Error{Op: "resize", Kernel: kernel, Err: ErrBadSize,
			Msg: fmt.Sprintf("made for %dx%d -> %dx%d, got %dx%d -> %dx%d", sw, sh, dw, dh, src.W, src.H, dst.W, dst.H)}
	}
	return nil
}

// pilResizer is a Pillow-exact resize through native's dispatched kernels.
type pilResizer struct {
	kernel string
	plan   *native.Plan
}

func (r *pilResizer) Resize(dst, src *rgb.Image) error {
	p := r.plan
	if err := checkSizes(r.kernel, p.InW, p.InH, p.OutW, p.OutH, dst, src); err != nil {
		return err
	}
	if err := p.Resample(dst, src); err != nil {
		return &Error{Op: "resize", Kernel: r.kernel, Err: ErrBadSize, Msg: err.Error()}
	}
	return nil
}

// Resize is the one-shot form: a new dstW×dstH image made from src with kernel.
func Resize(kernel string, src *rgb.Image, dstW, dstH int) (*rgb.Image, error) {
	if err := src.Validate(); err != nil {
		return nil, &Error{Op: "resize", Kernel: kernel, Err: ErrBadSize, Msg: "source: " + err.Error()}
	}
	r, err := New(kernel, src.W, src.H, dstW, dstH)
	if err != nil {
		return nil, err
	}
	dst := rgb.New(dstW, dstH)
	if err := r.Resize(dst, src); err != nil {
		return nil, err
	}
	return dst, nil
}
