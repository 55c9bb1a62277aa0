package native

import (
	"math"

	"github.com/framesweep/framesweep/rgb"
)

// Layout is a tensor's memory order for one image.
type Layout int

const (
	NHWC Layout = iota // H×W×3, channels interleaved (the RGB24 order)
	NCHW               // 3×H×W, one plane per channel (PyTorch's order)
)

// Norm is the float path's per-channel transform, rounded as the NumPy code of Hugging Face's image
// processors rounds it: transformers image_transforms.rescale multiplies in float64 and casts to float32
// ("always upcast first"), then normalize subtracts and divides in float32:
//
//	x      = float32(float64(v) * Scale)
//	out[c] = (x - Mean[c]) / Std[c]         // float32, each operation rounded
//
// Scale is usually 1/255 (the configs' rescale_factor, a Python float); Mean 0 and Std 1 give the plain
// rescale.
type Norm struct {
	Scale     float64
	Mean, Std [3]float32
}

// Common normalisations (values as the processors' configs give them, rounded to float32).
var (
	// Rescale only: v * (1/255).
	NormRescale = Norm{Scale: 1.0 / 255, Std: [3]float32{1, 1, 1}}
	// CLIP (Qwen2-VL/2.5-VL image processors).
	NormCLIP = Norm{Scale: 1.0 / 255, Mean: [3]float32{0.48145466, 0.4578275, 0.40821073}, Std: [3]float32{0.26862954, 0.26130258, 0.27577711}}
	// ImageNet (InternVL's build_transform).
	NormImageNet = Norm{Scale: 1.0 / 255, Mean: [3]float32{0.485, 0.456, 0.406}, Std: [3]float32{0.229, 0.224, 0.225}}
	// SigLIP (mean = std = 0.5).
	NormSigLIP = Norm{Scale: 1.0 / 255, Mean: [3]float32{0.5, 0.5, 0.5}, Std: [3]float32{0.5, 0.5, 0.5}}
)

func (n Norm) check() error {
	ok := !math.IsNaN(float64(n.Scale)) && !math.IsInf(float64(n.Scale), 0)
	for c := 0; c < 3; c++ {
		m, s := float64(n.Mean[c]), float64(n.Std[c])
		ok = ok && s != 0 && !math.IsNaN(m) && !math.IsInf(m, 0) && !math.IsNaN(s) && !math.IsInf(s, 0)
	}
	if !ok {
		return errf("tensor", ErrBadArgument, "normalisation %+v: scale, mean and std must be finite and std non-zero", n)
	}
	return nil
}

func checkTensor(n int, src *rgb.Image, norm Norm, l Layout) error {
	if err := src.Validate(); err != nil {
		return errf("tensor", ErrBadSize, "source: %v", err)
	}
	if l != NHWC && l != NCHW {
		return errf("tensor", ErrBadArgument, "unknown layout %d", int(l))
	}
	if err := norm.check(); err != nil {
		return err
	}
	if n < 3*src.W*src.H {
		return errf("tensor", ErrShortBuffer, "%d elements for a %dx%dx3 tensor", n, src.W, src.H)
	}
	return nil
}

// ToFloat32 writes src as a normalised float32 tensor (3·W·H elements) in layout l.
// Reference: tensor_generic.go.
func ToFloat32(dst []float32, src *rgb.Image, norm Norm, l Layout) error {
	if err := checkTensor(len(dst), src, norm, l); err != nil {
		return err
	}
	if lv := CurrentLevel(); lv != Generic && haveAsm {
		tensorAsm(lv, dst, nil, src, norm, l)
		return nil
	}
	tensorGeneric(dst, nil, src, norm, l)
	return nil
}

// ToFloat16 is ToFloat32 followed by IEEE 754 binary16 conversion, rounding to nearest even (with
// subnormals, overflow to ±Inf). Elements are the half-precision bit patterns.
func ToFloat16(dst []uint16, src *rgb.Image, norm Norm, l Layout) error {
	if err := checkTensor(len(dst), src, norm, l); err != nil {
		return err
	}
	if lv := CurrentLevel(); lv != Generic && haveAsm {
		tensorAsm(lv, nil, dst, src, norm, l)
		return nil
	}
	tensorGeneric(nil, dst, src, norm, l)
	return nil
}

// Float16s converts src to IEEE binary16 bit patterns in dst (len(dst) ≥ len(src)), as Float16Bits.
func Float16s(dst []uint16, src []float32) error {
	if len(dst) < len(src) {
		return errf("float16", ErrShortBuffer, "%d elements for %d values", len(dst), len(src))
	}
	if len(src) == 0 {
		return nil
	}
	if CurrentLevel() != Generic && haveAsm {
		f16Asm(dst, src)
		return nil
	}
	float16sGeneric(dst, src)
	return nil
}
