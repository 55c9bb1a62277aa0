package native

import (
	"math"

	"github.com/framesweep/framesweep/rgb"
)

// normValue is one element of the float path: the rescale in float64 rounded once to float32 (HF
// rescale), then float32 operations each rounded (no fused multiply-add), as NumPy computes them.
func normValue(v byte, c int, n Norm) float32 {
	x := float32(float64(v) * n.Scale)
	x = float32(x - n.Mean[c])
	return x / n.Std[c]
}

// tensorGeneric is the reference for ToFloat32 (f32 != nil) and ToFloat16 (f16 != nil).
func tensorGeneric(f32 []float32, f16 []uint16, src *rgb.Image, n Norm, l Layout) {
	// Each output depends only on (channel, byte): a 3×256 table gives the same values at any level.
	var lut [3][256]float32
	for c := 0; c < 3; c++ {
		for v := 0; v < 256; v++ {
			lut[c][v] = normValue(byte(v), c, n)
		}
	}
	plane := src.W * src.H
	for y := 0; y < src.H; y++ {
		row := src.Row(y)
		for x := 0; x < src.W; x++ {
			for c := 0; c < 3; c++ {
				i := (y*src.W+x)*3 + c
				if l == NCHW {
					i = c*plane + y*src.W + x
				}
				v := lut[c][row[3*x+c]]
				if f32 != nil {
					f32[i] = v
				} else {
					f16[i] = Float16Bits(v)
				}
			}
		}
	}
}

// Float16Bits converts f to IEEE 754 binary16, rounding to nearest even; NaNs stay (quiet) NaNs.
func Float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // half subnormal (or zero): m = full · 2^(e-14), rounded
		if exp == 0 {
			return sign // float32 subnormals are far below half's range
		}
		shift := uint(14 - e)
		if shift > 24 {
			return sign
		}
		full := mant | 0x800000
		m := full >> shift
		rem := full & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && m&1 == 1) {
			m++ // may carry into the smallest normal, which is the right encoding
		}
		return sign | uint16(m)
	}
	h := sign | uint16(e)<<10 | uint16(mant>>13)
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is correct, up to +Inf
	}
	return h
}

func float16sGeneric(dst []uint16, src []float32) {
	for i, v := range src {
		dst[i] = Float16Bits(v)
	}
}
