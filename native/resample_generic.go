package native

import "github.com/framesweep/framesweep/rgb"

// clip8 is Pillow's clip8: drop the 22 fractional bits and saturate to 0..255.
func clip8(v int32) byte {
	v >>= precisionBits
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return byte(v)
}

// horizontalGeneric is Pillow's ImagingResampleHorizontal_8bpc for 3 bands: dst row y is source row
// firstRow+y filtered along x. int32 arithmetic as in Pillow (wrapping is identical to C's in practice).
func horizontalGeneric(a *axis, dst, src *rgb.Image, firstRow, rows int) {
	const half = 1 << (precisionBits - 1)
	for y := 0; y < rows; y++ {
		in := src.Row(firstRow + y)
		out := dst.Row(y)
		for xx := 0; xx < dst.W; xx++ {
			xmin, n := int(a.start[xx]), int(a.n[xx])
			k := a.k[xx*a.ksize : xx*a.ksize+n]
			s0, s1, s2 := int32(half), int32(half), int32(half)
			px := in[3*xmin : 3*(xmin+n)]
			for x, w := range k {
				s0 += int32(px[3*x]) * w
				s1 += int32(px[3*x+1]) * w
				s2 += int32(px[3*x+2]) * w
			}
			out[3*xx], out[3*xx+1], out[3*xx+2] = clip8(s0), clip8(s1), clip8(s2)
		}
	}
}

// verticalGeneric is Pillow's ImagingResampleVertical_8bpc: dst row yy mixes src rows start[yy]…
func verticalGeneric(start, nn, kk []int32, ksize int, dst, src *rgb.Image) {
	const half = 1 << (precisionBits - 1)
	rowBytes := 3 * dst.W
	acc := make([]int32, rowBytes)
	for yy := 0; yy < dst.H; yy++ {
		ymin, n := int(start[yy]), int(nn[yy])
		k := kk[yy*ksize : yy*ksize+n]
		for i := range acc {
			acc[i] = half
		}
		for y, w := range k {
			in := src.Row(ymin + y)
			for i, v := range in {
				acc[i] += int32(v) * w
			}
		}
		out := dst.Row(yy)
		for i, v := range acc {
			out[i] = clip8(v)
		}
	}
}
