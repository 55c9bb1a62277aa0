package native

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestFMA32: a·b + c rounded once, against big.Float's exact sum rounded to float32 (nearest even),
// on random operands and on sums that land half-way between two float32s in float64.
func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	var cases [][3]float32
	for range 200000 {
		cases = append(cases, [3]float32{float32(r.NormFloat64() * 300), float32(r.Float64()), float32(r.NormFloat64() * 1e3)})
	}
	// (1+2⁻²³)·2⁻²⁴(1−2⁻²³) = 2⁻²⁴ − 2⁻⁷⁰: added to c = 1+2⁻²³ the float64 sum rounds to the exact
	// half-way point c + 2⁻²⁴, where rounding again to float32 would go up (to even); the true sum is
	// below it. A plain float32(math.FMA(…)) gets these wrong.
	a, b := float32(1+0x1p-23), float32(0x1p-24*(1-0x1p-23))
	for _, c := range [][3]float32{{a, b, 1 + 0x1p-23}, {-a, b, -(1 + 0x1p-23)}, {a, -b, 1 + 0x1p-23}, {a, b, 3 + 0x1p-22}} {
		cases = append(cases, c)
		if c == [3]float32{a, b, 1 + 0x1p-23} && float32(math.FMA(float64(c[0]), float64(c[1]), float64(c[2]))) == exact(c[0], c[1], c[2]) {
			t.Fatalf("the half-way case does not exercise double rounding")
		}
	}
	bad := 0
	for _, c := range cases {
		if got, want := FMA32(c[0], c[1], c[2]), exact(c[0], c[1], c[2]); got != want && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
			if bad++; bad < 5 {
				t.Errorf("FMA32(%g, %g, %g) = %g, want %g", c[0], c[1], c[2], got, want)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d differ", bad, len(cases))
	}
}
