package native

import "github.com/framesweep/framesweep/rgb"

// torchHGeneric is the width pass over source rows firstRow … firstRow+rows−1: into tmp (tight
// float32 rows of 3·OutW) when tmp is non-nil, else rounded into dst. Each element is t = p₀·w₀,
// then for tap j ≥ 1 t += pⱼ·wⱼ with the product rounded to float32 while j ≤ torchSplit(n), fused
// (one rounding) after.
func torchHGeneric(a *torchAxis, src *rgb.Image, firstRow, rows int, tmp []float32, dst *rgb.Image) {
	outW := len(a.n)
	for y := 0; y < rows; y++ {
		in := src.Row(firstRow + y)
		for x := 0; x < outW; x++ {
			s, n := int(a.start[x]), int(a.n[x])
			k := a.w[x*a.ksize : x*a.ksize+n]
			p := in[3*s:]
			t0, t1, t2 := float32(p[0])*k[0], float32(p[1])*k[0], float32(p[2])*k[0]
			split := torchSplit(n)
			for j := 1; j < n; j++ {
				p0, p1, p2 := float32(p[3*j]), float32(p[3*j+1]), float32(p[3*j+2])
				if j <= split {
					t0 += float32(p0 * k[j])
					t1 += float32(p1 * k[j])
					t2 += float32(p2 * k[j])
				} else {
					t0, t1, t2 = FMA32(p0, k[j], t0), FMA32(p1, k[j], t1), FMA32(p2, k[j], t2)
				}
			}
			if tmp != nil {
				o := tmp[(y*outW+x)*3:]
				o[0], o[1], o[2] = t0, t1, t2
			} else {
				o := dst.Row(y)
				o[3*x], o[3*x+1], o[3*x+2] = TorchRound(t0), TorchRound(t1), TorchRound(t2)
			}
		}
	}
}

// torchVGeneric is the height pass: from srcF (tight float32 rows of rb elements) or, when srcF is
// nil, from the bytes of src8; output row yy mixes rows start[yy] … with the width pass's order of
// operations.
func torchVGeneric(a *torchAxis, start []int32, srcF []float32, src8 *rgb.Image, rb int, dst *rgb.Image) {
	at := func(r, i int) float32 {
		if srcF != nil {
			return srcF[r*rb+i]
		}
		return float32(src8.Pix[r*src8.Stride+i])
	}
	for yy := 0; yy < dst.H; yy++ {
		s, n := int(start[yy]), int(a.n[yy])
		k := a.w[yy*a.ksize : yy*a.ksize+n]
		split := torchSplit(n)
		o := dst.Row(yy)
		for i := 0; i < rb; i++ {
			t := at(s, i) * k[0]
			for j := 1; j < n; j++ {
				if j <= split {
					t += float32(at(s+j, i) * k[j])
				} else {
					t = FMA32(at(s+j, i), k[j], t)
				}
			}
			o[i] = TorchRound(t)
		}
	}
}
