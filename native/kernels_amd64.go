//go:build amd64 && cgo && !noasm

package native

// Fast paths of the tensor and torch-bicubic kernels (AVX2 + F16C; the AVX512 level uses them too, as the work
// is bound by memory and conversion, not vector width). References: tensor_generic.go, torch_generic.go.

/*
#include "kernels_amd64.h"
*/
import "C"

import (
	"unsafe"

	"github.com/framesweep/framesweep/rgb"
)

func u8p(b []byte) *C.uint8_t { return (*C.uint8_t)(unsafe.Pointer(&b[0])) }

func tensorAsm(_ Level, f32 []float32, f16 []uint16, src *rgb.Image, n Norm, l Layout) {
	norm := [6]C.float{C.float(n.Mean[0]), C.float(n.Mean[1]), C.float(n.Mean[2]),
		C.float(n.Std[0]), C.float(n.Std[1]), C.float(n.Std[2])}
	var p32 *C.float
	var p16 *C.uint16_t
	if f32 != nil {
		p32 = (*C.float)(unsafe.Pointer(&f32[0]))
	} else {
		p16 = (*C.uint16_t)(unsafe.Pointer(&f16[0]))
	}
	nchw := 0
	if l == NCHW {
		nchw = 1
	}
	C.native_tensor(u8p(src.Pix), C.ptrdiff_t(src.Stride), C.int(src.W), C.int(src.H), p32, p16,
		C.int(nchw), C.double(n.Scale), &norm[0])
}

func f16Asm(dst []uint16, src []float32) {
	C.native_f32_to_f16((*C.float)(unsafe.Pointer(&src[0])), (*C.uint16_t)(unsafe.Pointer(&dst[0])), C.ptrdiff_t(len(src)))
}

// torchHAsm runs the width pass in C; rows whose 4-byte pixel loads would pass the end of src.Pix are
// done from a padded copy (normally only the buffer's last row).
func torchHAsm(p *TorchPlan, src *rgb.Image, firstRow, rows int, tmp []float32, dst *rgb.Image) {
	a := &p.h
	safe := rows
	for safe > 0 && (firstRow+safe-1)*src.Stride+3*src.W+1 > len(src.Pix) {
		safe--
	}
	run := func(in []byte, stride, y0, n int) {
		var tp *C.float
		var dp *C.uint8_t
		ds := 0
		if tmp != nil {
			tp = (*C.float)(unsafe.Pointer(&tmp[y0*3*p.OutW]))
		} else {
			dp, ds = u8p(dst.Pix[y0*dst.Stride:]), dst.Stride
		}
		C.native_torch_h(u8p(in), C.ptrdiff_t(stride), C.int(n), tp, dp, C.ptrdiff_t(ds), C.int(p.OutW),
			i32p(a.start), i32p(a.n), (*C.float)(unsafe.Pointer(&a.w[0])), C.int(a.ksize))
	}
	if safe > 0 {
		run(src.Pix[firstRow*src.Stride:], src.Stride, 0, safe)
	}
	if safe < rows {
		pad := make([]byte, 3*src.W+4)
		for y := safe; y < rows; y++ {
			copy(pad, src.Row(firstRow+y))
			run(pad, len(pad), y, 1)
		}
	}
}

func torchVAsm(a *torchAxis, start []int32, srcF []float32, src8 *rgb.Image, rb int, dst *rgb.Image) {
	var fp *C.float
	var bp *C.uint8_t
	ss := rb
	if srcF != nil {
		fp = (*C.float)(unsafe.Pointer(&srcF[0]))
	} else {
		bp, ss = u8p(src8.Pix), src8.Stride
	}
	C.native_torch_v(fp, bp, C.ptrdiff_t(ss), C.int(rb), u8p(dst.Pix), C.ptrdiff_t(dst.Stride), C.int(dst.H),
		i32p(start), i32p(a.n), (*C.float)(unsafe.Pointer(&a.w[0])), C.int(a.ksize))
}
