package native

import "math"

// FMA32 is C's fmaf: a·b + c rounded once to float32. a·b is exact in float64; the sum is rounded
// to float64 once, and rounding that to float32 could round twice when it lands exactly half-way
// between two float32 values: the sum's exact error (TwoSum) then says which way to go.
func FMA32(a, b, c float32) float32 {
	p, q := float64(a)*float64(b), float64(c)
	s := p + q
	if bits := math.Float64bits(s); bits&(1<<29-1) == 1<<28 && math.Abs(s) >= 0x1p-126 {
		bv := s - p
		// s+e would round back to s: step towards the error's sign.
		if e := (p - (s - bv)) + (q - bv); e != 0 {
			s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
		}
	}
	return float32(s)
}
