package resize

import (
	"fmt"
	"math"

	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/rgb"
)

// TorchVision is torchvision 0.14's tensor resize with InterpolationMode.BICUBIC, antialias=True on
// a uint8 image, as qwen-vl-utils' fetch_video calls it, reproduced byte for byte against Debian 12's
// python3-torch 1.13.1 (AVX2 kernels) and python3-torchvision 0.14.1 (resize/torchvision_test.go):
// the uint8 image becomes float32, ATen's separable antialiased bicubic runs the width pass then the
// height pass (each only when that side changes) in float32 without rounding between them, then
// torchvision clamps to [0, 255], rounds half to even and casts back.
//
// What makes it exact, found by probing that build (impulse images give the weights bit for bit):
//   - weights (HelperInterpCubic::aa_filter, Keys a = −0.5, support 2·max(scale, 1), normalised by
//     their float32 sum): the x < 1 branch is evaluated in double (a is a double literal), the
//     1 ≤ x < 2 branch in float with its multiply-adds fused (GCC contracts them in the AVX2 build);
//   - each output element is t₀·w₀ then, for the remaining taps, GCC's in-order vectorised reduction:
//     the first ⌊(n−1)/4⌋·4 taps add separately rounded products, the rest are fused multiply-adds.
//
// It is the readable reference of the resize kernel torch-bicubic (native.TorchPlan: the same
// arithmetic, with SIMD kernels), which the qwen-vl-utils loader's resize also equals. Pure Go, safe
// for concurrent use.
type TorchVision struct {
	InW, InH, OutW, OutH int
	h, v                 tvAxis
}

type tvAxis struct {
	start []int
	w     [][]float32
}

// NewTorchVision precomputes the weights for inW×inH → outW×outH (each side 1..1<<15).
func NewTorchVision(inW, inH, outW, outH int) (*TorchVision, error) {
	for _, s := range []int{inW, inH, outW, outH} {
		if s <= 0 || s > 1<<15 {
			return nil, &Error{Op: "new", Kernel: "torchvision", Err: ErrBadSize, Msg: fmt.Sprintf("%dx%d -> %dx%d (each side must be 1..%d)", inW, inH, outW, outH, 1<<15)}
		}
	}
	t := &TorchVision{InW: inW, InH: inH, OutW: outW, OutH: outH}
	if outW != inW {
		t.h = tvWeights(inW, outW)
	}
	if outH != inH {
		t.v = tvWeights(inH, outH)
	}
	return t, nil
}

// tvFilter is ATen 1.13's HelperInterpCubic::aa_filter as the Debian AVX2 build computes it.
func tvFilter(x float32) float32 {
	const a = -0.5
	if x < 0 {
		x = -x
	}
	if x < 1 {
		xd := float64(x)
		return float32(math.FMA(math.FMA(a+2.0, xd, -(a+3.0))*xd, xd, 1))
	}
	if x < 2 {
		t := native.FMA32(x-5, x, 8)
		t = native.FMA32(t, x, -4)
		return float32(float64(t) * a)
	}
	return 0
}

// tvWeights is HelperInterpBase::_compute_weights_aa with scalar_t = float.
func tvWeights(in, out int) tvAxis {
	scale := float32(in) / float32(out) // area_pixel_compute_scale<float>
	support, invscale := float32(2), float32(1)
	if scale >= 1 {
		support = float32(2 * float64(scale)) // (interp_size * 0.5) * scale, in double, stored as float
		invscale = 1 / scale
	}
	a := tvAxis{start: make([]int, out), w: make([][]float32, out)}
	for i := 0; i < out; i++ {
		center := float32(float64(scale) * (float64(i) + 0.5))
		xmin := max(int(float64(center-support)+0.5), 0)
		xsize := min(int(float64(center+support)+0.5), in) - xmin
		w := make([]float32, xsize)
		var total float32
		for j := range w {
			x := float32((float64(float32(j+xmin)-center) + 0.5) * float64(invscale))
			w[j] = tvFilter(x)
			total += w[j]
		}
		if total != 0 {
			for j := range w {
				w[j] /= total
			}
		}
		a.start[i], a.w[i] = xmin, w
	}
	return a
}

// tvRows is the height pass for one output row: acc[i] = Σ_j rows[j][i]·w[j] in the order of the
// Debian build's interpolate_aa_single_dim (t₀·w₀, then ⌊(n−1)/4⌋·4 separately rounded products
// added in order, then fused multiply-adds), row by row so the loops stay on contiguous memory.
func tvRows(acc []float32, cur []float32, rb, s int, w []float32) {
	r0 := cur[s*rb : s*rb+len(acc)]
	for i := range acc {
		acc[i] = r0[i] * w[0]
	}
	vec := (len(w) - 1) / 4 * 4
	for j := 1; j < len(w); j++ {
		r, k := cur[(s+j)*rb:(s+j)*rb+len(acc)], w[j]
		if j-1 < vec {
			for i := range acc {
				acc[i] += float32(r[i] * k)
			}
		} else {
			for i := range acc {
				acc[i] = native.FMA32(r[i], k, acc[i])
			}
		}
	}
}

// tvPixel is the width pass for one output pixel (three channels) over in[3·start…].
func tvPixel(in []float32, w []float32) (float32, float32, float32) {
	k := w[0]
	o0, o1, o2 := in[0]*k, in[1]*k, in[2]*k
	vec := (len(w) - 1) / 4 * 4
	for j := 1; j < len(w); j++ {
		k, p := w[j], in[3*j:3*j+3]
		if j-1 < vec {
			o0 += float32(p[0] * k)
			o1 += float32(p[1] * k)
			o2 += float32(p[2] * k)
		} else {
			o0, o1, o2 = native.FMA32(p[0], k, o0), native.FMA32(p[1], k, o1), native.FMA32(p[2], k, o2)
		}
	}
	return o0, o1, o2
}

// Resize resizes src into dst (sizes as made).
func (t *TorchVision) Resize(dst, src *rgb.Image) error {
	if err := checkSizes("torchvision", t.InW, t.InH, t.OutW, t.OutH, dst, src); err != nil {
		return err
	}
	// The source as float32, tight rows of 3·W (torchvision's uint8 → float cast).
	w := t.InW
	cur := make([]float32, 3*t.InW*t.InH)
	for y := 0; y < t.InH; y++ {
		row := src.Row(y)
		for i, b := range row {
			cur[y*3*w+i] = float32(b)
		}
	}
	if t.h.w != nil {
		next := make([]float32, 3*t.OutW*t.InH)
		for y := 0; y < t.InH; y++ {
			in, out := cur[y*3*w:(y+1)*3*w], next[y*3*t.OutW:(y+1)*3*t.OutW]
			for x, k := range t.h.w {
				out[3*x], out[3*x+1], out[3*x+2] = tvPixel(in[3*t.h.start[x]:], k)
			}
		}
		cur, w = next, t.OutW
	}
	rb := 3 * w
	acc := make([]float32, rb)
	for yy := 0; yy < t.OutH; yy++ {
		o := dst.Row(yy)
		if t.v.w == nil {
			copy(acc, cur[yy*rb:(yy+1)*rb])
		} else {
			tvRows(acc, cur, rb, t.v.start[yy], t.v.w[yy])
		}
		for i := range o {
			o[i] = native.TorchRound(acc[i])
		}
	}
	return nil
}
