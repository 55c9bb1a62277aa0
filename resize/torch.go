package resize

import (
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/rgb"
)

// torchResizer reproduces torchvision's tensor resize with InterpolationMode.BICUBIC, antialias=True
// (qwen-vl-utils' path; SAMPLING.md §1) through native.TorchPlan: uint8 → float32, ATen's separable
// antialiased bicubic (Keys a = -0.5, support 2·max(scale,1), weights normalised to sum 1), the width
// pass first and then the height pass, each skipped when that side is unchanged, float32 throughout with
// no rounding between the passes, then clamp to [0,255] and round half to even. Tolerance against real
// torch: ±1 level (torch is not installed here; the tests compare with a float64 reference within ±1).
type torchResizer struct {
	plan *native.TorchPlan
}

func newTorch(sw, sh, dw, dh int) (*torchResizer, error) {
	p, err := native.NewTorchPlan(sw, sh, dw, dh)
	if err != nil {
		return nil, err
	}
	return &torchResizer{plan: p}, nil
}

func (r *torchResizer) Resize(dst, src *rgb.Image) error {
	p := r.plan
	if err := checkSizes(TorchBicubic, p.InW, p.InH, p.OutW, p.OutH, dst, src); err != nil {
		return err
	}
	if err := p.Resize(dst, src); err != nil {
		return &Error{Op: "resize", Kernel: TorchBicubic, Err: ErrBadSize, Msg: err.Error()}
	}
	return nil
}
