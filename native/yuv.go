package native

import "github.com/framesweep/framesweep/rgb"

// YUV420 is a borrowed view of an 8-bit planar 4:2:0 frame (yuv420p): a W×H luma plane and two
// ⌈W/2⌉×⌈H/2⌉ chroma planes.
type YUV420 struct {
	W, H                      int
	Y, U, V                   []byte
	YStride, UStride, VStride int
}

func (f *YUV420) check() error {
	if f == nil || f.W <= 0 || f.H <= 0 || f.W > 1<<15 || f.H > 1<<15 {
		return errf("yuv420", ErrBadSize, "bad frame size")
	}
	cw, ch := (f.W+1)/2, (f.H+1)/2
	if f.YStride < f.W || f.UStride < cw || f.VStride < cw {
		return errf("yuv420", ErrBadSize, "strides %d/%d/%d too small for %dx%d", f.YStride, f.UStride, f.VStride, f.W, f.H)
	}
	if len(f.Y) < (f.H-1)*f.YStride+f.W || len(f.U) < (ch-1)*f.UStride+cw || len(f.V) < (ch-1)*f.VStride+cw {
		return errf("yuv420", ErrShortBuffer, "planes of %d/%d/%d bytes for %dx%d", len(f.Y), len(f.U), len(f.V), f.W, f.H)
	}
	return nil
}

// YUV420ToRGB converts an 8-bit 4:2:0 BT.601 limited-range frame to packed RGB24 with the classic
// 8-bit fixed-point formula (C = Y−16, D = U−128, E = V−128; R = (298C + 409E + 128) >> 8,
// G = (298C − 100D − 208E + 128) >> 8, B = (298C + 516D + 128) >> 8, each clipped to 0..255) and
// nearest-neighbour chroma (each chroma sample covers its 2×2 luma block). It is NOT bit-identical to
// swscale's default yuv420p→rgb24 (which decode/ uses for the exact path); against it, it differs by a
// few levels (see TestYUVAgainstFFmpeg). Reference: yuv_generic.go.
func YUV420ToRGB(dst *rgb.Image, src *YUV420) error {
	if err := src.check(); err != nil {
		return err
	}
	if err := dst.Validate(); err != nil {
		return errf("yuv420", ErrBadSize, "destination: %v", err)
	}
	if dst.W != src.W || dst.H != src.H {
		return errf("yuv420", ErrBadSize, "destination %dx%d for a %dx%d frame", dst.W, dst.H, src.W, src.H)
	}
	if l := CurrentLevel(); l != Generic && haveAsm {
		yuvAsm(l, dst, src)
		return nil
	}
	yuvGeneric(dst, src)
	return nil
}
