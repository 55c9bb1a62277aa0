package native

import "github.com/framesweep/framesweep/rgb"

func clampByte(v int32) byte {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return byte(v)
}

// yuvGeneric is the reference for YUV420ToRGB.
func yuvGeneric(dst *rgb.Image, src *YUV420) {
	for y := 0; y < src.H; y++ {
		yr := src.Y[y*src.YStride:]
		ur := src.U[(y/2)*src.UStride:]
		vr := src.V[(y/2)*src.VStride:]
		out := dst.Row(y)
		for x := 0; x < src.W; x++ {
			c := 298 * (int32(yr[x]) - 16)
			d := int32(ur[x/2]) - 128
			e := int32(vr[x/2]) - 128
			out[3*x] = clampByte((c + 409*e + 128) >> 8)
			out[3*x+1] = clampByte((c - 100*d - 208*e + 128) >> 8)
			out[3*x+2] = clampByte((c + 516*d + 128) >> 8)
		}
	}
}
