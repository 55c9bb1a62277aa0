package resize

import (
	"math"
	"sync"

	"github.com/framesweep/framesweep/internal/rgb"
)

// torchResizer reproduces torchvision's tensor resize with InterpolationMode.BICUBIC, antialias=True
// (qwen-vl-utils' path; SAMPLING.md §1): uint8 → float32, ATen's separable antialiased bicubic
// (Keys a = -0.5, support 2·max(scale,1), weights normalised to sum 1), the width pass first and then
// the height pass, each skipped when that side is unchanged, float32 throughout with no rounding
// between the passes, then clamp to [0,255] and round half to even. Weights follow ATen's
// _compute_weights_aa, including where it mixes float and double. Tolerance against real torch: ±1
// level (torch is not installed here; the tests compare with a float64 reference within ±1).
type torchResizer struct {
	sw, sh, dw, dh int
	h, v           torchAxis
	pool           sync.Pool // *[]float32 scratch for the intermediate and the float source
}

type torchAxis struct {
	start, n []int
	w        []float32 // ksize weights per output
	ksize    int
}

func torchFilter(x float32) float32 {
	const a = float32(-0.5)
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return float32(float32(float32((a+2)*x)-(a+3))*x*x) + 1
	}
	if x < 2 {
		return float32(float32(float32(float32(a*x)-5*a)*x)+8*a)*x - 4*a
	}
	return 0
}

func torchWeights(in, out int) torchAxis {
	scale := float32(in) / float32(out)
	support := float32(2)
	invscale := float32(1)
	if scale >= 1 {
		support = 2 * scale
		invscale = 1 / scale
	}
	ksize := int(math.Ceil(float64(support)))*2 + 1
	a := torchAxis{start: make([]int, out), n: make([]int, out), w: make([]float32, out*ksize), ksize: ksize}
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
		a.start[i], a.n[i] = xmin, xsize
	}
	return a
}

func newTorch(sw, sh, dw, dh int) *torchResizer {
	r := &torchResizer{sw: sw, sh: sh, dw: dw, dh: dh}
	if dw != sw {
		r.h = torchWeights(sw, dw)
	}
	if dh != sh {
		r.v = torchWeights(sh, dh)
	}
	return r
}

func (r *torchResizer) Resize(dst, src *rgb.Image) error {
	if err := checkSizes(TorchBicubic, r.sw, r.sh, r.dw, r.dh, dst, src); err != nil {
		return err
	}
	f := toFloat(src, r.scratch(3*r.sw*r.sh))
	r.resizeShared(dst, f)
	r.pool.Put(&f)
	return nil
}

func (r *torchResizer) scratch(n int) []float32 {
	if p, ok := r.pool.Get().(*[]float32); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]float32, n)
}

// toFloat is torchvision's uint8 → float32 cast, into buf (tight H×W×3).
func toFloat(src *rgb.Image, buf []float32) []float32 {
	for y := 0; y < src.H; y++ {
		row := src.Row(y)
		o := buf[3*src.W*y : 3*src.W*(y+1)]
		for i, v := range row {
			o[i] = float32(v)
		}
	}
	return buf
}

// resizeShared runs the passes on a float32 source (tight, sw×sh×3, not modified, so FanOut can share
// it) and writes rounded bytes to dst.
func (r *torchResizer) resizeShared(dst *rgb.Image, f []float32) {
	cur, w := f, r.sw
	var tmp []float32
	if r.dw != r.sw {
		tmp = r.scratch(3 * r.dw * r.sh)
		for y := 0; y < r.sh; y++ {
			in := cur[3*w*y : 3*w*(y+1)]
			out := tmp[3*r.dw*y : 3*r.dw*(y+1)]
			for x := 0; x < r.dw; x++ {
				s, n := r.h.start[x], r.h.n[x]
				k := r.h.w[x*r.h.ksize : x*r.h.ksize+n]
				p := in[3*s:]
				t0, t1, t2 := p[0]*k[0], p[1]*k[0], p[2]*k[0]
				for j := 1; j < n; j++ {
					t0 += float32(p[3*j] * k[j])
					t1 += float32(p[3*j+1] * k[j])
					t2 += float32(p[3*j+2] * k[j])
				}
				out[3*x], out[3*x+1], out[3*x+2] = t0, t1, t2
			}
		}
		cur, w = tmp, r.dw
	}
	rb := 3 * w
	for yy := 0; yy < r.dh; yy++ {
		o := dst.Row(yy)
		if r.dh == r.sh {
			for i, v := range cur[rb*yy : rb*(yy+1)] {
				o[i] = roundByte(v)
			}
			continue
		}
		s, n := r.v.start[yy], r.v.n[yy]
		k := r.v.w[yy*r.v.ksize : yy*r.v.ksize+n]
		for i := 0; i < rb; i++ {
			t := cur[rb*s+i] * k[0]
			for j := 1; j < n; j++ {
				t += float32(cur[rb*(s+j)+i] * k[j])
			}
			o[i] = roundByte(t)
		}
	}
	if tmp != nil {
		r.pool.Put(&tmp)
	}
}

// roundByte is torchvision's clamp(0, 255) then torch.round (half to even) then the uint8 cast.
func roundByte(v float32) byte {
	if !(v > 0) { // also NaN, which cannot arise from finite inputs
		return 0
	}
	if v >= 255 {
		return 255
	}
	return byte(math.RoundToEven(float64(v)))
}
