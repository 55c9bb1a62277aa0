package native

import (
	"math"
	"sync"

	"github.com/framesweep/framesweep/rgb"
)

// TorchPlan is torchvision's antialiased bicubic resize of a uint8 image (F.resize on a tensor with
// InterpolationMode.BICUBIC, antialias=True: what qwen-vl-utils calls), byte for byte as Debian 12's
// torch 1.13.1 (AVX2 build) computes it: uint8 → float32, ATen's separable antialiased bicubic (Keys
// a = −0.5, support 2·max(scale,1), weights normalised by their float32 sum), the width pass then the
// height pass, each skipped when that side is unchanged, float32 with no rounding between passes,
// then clamp to [0,255] and round half to even. Two details of that build decide the last bit (found
// by probing it; resize/torchvision_test.go compares every level with torch itself): the weight filter's |x| < 1 branch is evaluated in double and its
// 1 ≤ |x| < 2 branch in float with fused multiply-adds; and each output element is t₀·w₀, then the
// first ⌊(n−1)/4⌋·4 further taps added as separately rounded products and the remaining ones fused
// (GCC's vectorised reduction). Every level computes each element with the same operations in the
// same order, so all levels give identical bytes (the C kernels need FMA3, else Generic runs).
// Reference: torch_generic.go. Safe for concurrent use.
type TorchPlan struct {
	InW, InH, OutW, OutH int
	needH, needV         bool
	h, v                 torchAxis
	rowFirst, rowLast    int     // source rows the height pass reads
	vStartShift          []int32 // v.start − rowFirst
	pool                 sync.Pool
}

type torchAxis struct {
	ksize int
	start []int32
	n     []int32
	w     []float32
}

// torchFilter is ATen 1.13's HelperInterpCubic::aa_filter as the Debian AVX2 build evaluates it: the
// |x| < 1 branch in double (a is a double literal), the 1 ≤ |x| < 2 branch in float with its
// multiply-adds fused.
func torchFilter(x float32) float32 {
	const a = -0.5
	if x < 0 {
		x = -x
	}
	if x < 1 {
		xd := float64(x)
		return float32(math.FMA(math.FMA(a+2.0, xd, -(a+3.0))*xd, xd, 1))
	}
	if x < 2 {
		t := FMA32(x-5, x, 8)
		t = FMA32(t, x, -4)
		return float32(float64(t) * a)
	}
	return 0
}

// torchSplit is how many taps after the first are added as separately rounded products; the rest
// are fused multiply-adds (GCC's vectorised reduction in the Debian build: groups of four).
func torchSplit(n int) int { return (n - 1) / 4 * 4 }

func torchWeights(in, out int) torchAxis {
	scale := float32(in) / float32(out) // area_pixel_compute_scale<float>
	support, invscale := float32(2), float32(1)
	if scale >= 1 {
		support = float32(2 * float64(scale)) // (interp_size · 0.5) · scale, in double, stored as float
		invscale = 1 / scale
	}
	ksize := int(math.Ceil(float64(support)))*2 + 1
	a := torchAxis{ksize: ksize, start: make([]int32, out), n: make([]int32, out), w: make([]float32, out*ksize)}
	for i := 0; i < out; i++ {
		center := float32(float64(scale) * (float64(i) + 0.5))
		xmin := max(int(float64(center-support)+0.5), 0)
		xsize := min(int(float64(center+support)+0.5), in) - xmin
		w := a.w[i*ksize : i*ksize+ksize]
		var total float32
		for j := 0; j < xsize; j++ {
			x := float32((float64(float32(j+xmin)-center) + 0.5) * float64(invscale))
			w[j] = torchFilter(x)
			total += w[j]
		}
		if total != 0 {
			for j := 0; j < xsize; j++ {
				w[j] /= total
			}
		}
		a.start[i], a.n[i] = int32(xmin), int32(xsize)
	}
	return a
}

// NewTorchPlan precomputes the weights for inW×inH → outW×outH (each side 1..1<<15).
func NewTorchPlan(inW, inH, outW, outH int) (*TorchPlan, error) {
	for _, s := range []int{inW, inH, outW, outH} {
		if s <= 0 || s > 1<<15 {
			return nil, errf("torch", ErrBadSize, "%dx%d -> %dx%d (each side must be 1..%d)", inW, inH, outW, outH, 1<<15)
		}
	}
	p := &TorchPlan{InW: inW, InH: inH, OutW: outW, OutH: outH, needH: outW != inW, needV: outH != inH}
	p.rowFirst, p.rowLast = 0, inH
	if p.needH {
		p.h = torchWeights(inW, outW)
	}
	if p.needV {
		p.v = torchWeights(inH, outH)
		p.rowFirst = int(p.v.start[0])
		p.rowLast = int(p.v.start[outH-1] + p.v.n[outH-1])
		p.vStartShift = make([]int32, outH)
		for i := range p.vStartShift {
			p.vStartShift[i] = p.v.start[i] - int32(p.rowFirst)
		}
	}
	return p, nil
}

// Resize resizes src into dst at the current dispatch level.
func (p *TorchPlan) Resize(dst, src *rgb.Image) error { return p.ResizeLevel(CurrentLevel(), dst, src) }

// ResizeLevel is Resize at an explicit level (a level above Best falls back to Generic).
func (p *TorchPlan) ResizeLevel(l Level, dst, src *rgb.Image) error {
	if err := src.Validate(); err != nil {
		return errf("torch", ErrBadSize, "source: %v", err)
	}
	if err := dst.Validate(); err != nil {
		return errf("torch", ErrBadSize, "destination: %v", err)
	}
	if src.W != p.InW || src.H != p.InH || dst.W != p.OutW || dst.H != p.OutH {
		return errf("torch", ErrBadSize, "plan is %dx%d -> %dx%d, got %dx%d -> %dx%d",
			p.InW, p.InH, p.OutW, p.OutH, src.W, src.H, dst.W, dst.H)
	}
	asm := l != Generic && l <= best && haveAsm && hasFMA
	switch {
	case !p.needH && !p.needV:
		for y := 0; y < src.H; y++ {
			copy(dst.Row(y), src.Row(y))
		}
	case !p.needV: // width only: round straight from the width pass
		if asm {
			torchHAsm(p, src, 0, src.H, nil, dst)
		} else {
			torchHGeneric(&p.h, src, 0, src.H, nil, dst)
		}
	case !p.needH: // height only, from the bytes
		if asm {
			torchVAsm(&p.v, p.v.start, nil, src, 3*src.W, dst)
		} else {
			torchVGeneric(&p.v, p.v.start, nil, src, 3*src.W, dst)
		}
	default:
		rows := p.rowLast - p.rowFirst
		n := rows * 3 * p.OutW
		bp, _ := p.pool.Get().(*[]float32)
		if bp == nil || cap(*bp) < n {
			b := make([]float32, n)
			bp = &b
		}
		tmp := (*bp)[:n]
		if asm {
			torchHAsm(p, src, p.rowFirst, rows, tmp, nil)
			torchVAsm(&p.v, p.vStartShift, tmp, nil, 3*p.OutW, dst)
		} else {
			torchHGeneric(&p.h, src, p.rowFirst, rows, tmp, nil)
			torchVGeneric(&p.v, p.vStartShift, tmp, nil, 3*p.OutW, dst)
		}
		p.pool.Put(bp)
	}
	return nil
}

// TorchRound is torchvision's clamp(0, 255), torch.round (half to even) and uint8 cast.
func TorchRound(v float32) byte {
	if !(v > 0) { // also NaN
		return 0
	}
	if v >= 255 {
		return 255
	}
	return byte(math.RoundToEven(float64(v)))
}
