//go:build amd64 && cgo && !noasm

package native

// Fast paths of the resample kernels; reference: resample_generic.go.

/*
#include "resample_amd64.h"
*/
import "C"

import (
	"unsafe"

	"github.com/framesweep/framesweep/rgb"
)

// overread is how far past a row's last pixel the horizontal kernels may load (13 bytes).
const overread = 16

func i32p(s []int32) *C.int32_t { return (*C.int32_t)(unsafe.Pointer(&s[0])) }

func horizontalAsm(l Level, p *Plan, dst, src *rgb.Image, firstRow, rows int) {
	xmin, ng, off, co := p.h.start, p.simd.n, p.simd.off, p.simd.groups
	// Rows whose vector loads would run past the end of src.Pix (normally only the buffer's last row)
	// are copied into a padded scratch row, so C never reads memory it was not given.
	safe := rows
	for safe > 0 && (firstRow+safe-1)*src.Stride+3*src.W+overread > len(src.Pix) {
		safe--
	}
	kernel := int(l)
	if l == AVX512 && hasVNNI {
		kernel = 3 // h_avx512vnni
	}
	run := func(in []byte, stride, n int, out []byte) {
		C.native_resample_h(C.int(kernel), (*C.uint8_t)(unsafe.Pointer(&in[0])), C.ptrdiff_t(stride), C.int(n),
			(*C.uint8_t)(unsafe.Pointer(&out[0])), C.ptrdiff_t(dst.Stride), C.int(dst.W),
			i32p(xmin), i32p(ng), i32p(off), (*C.int16_t)(unsafe.Pointer(&co[0])))
	}
	if safe > 0 {
		run(src.Pix[firstRow*src.Stride:], src.Stride, safe, dst.Pix)
	}
	if safe < rows {
		pad := make([]byte, 3*src.W+overread)
		for y := safe; y < rows; y++ {
			copy(pad, src.Row(firstRow+y))
			run(pad, len(pad), 1, dst.Pix[y*dst.Stride:])
		}
	}
}

func verticalAsm(l Level, start, n, k []int32, ksize int, dst, src *rgb.Image) {
	C.native_resample_v(C.int(l), (*C.uint8_t)(unsafe.Pointer(&src.Pix[0])), C.ptrdiff_t(src.Stride),
		(*C.uint8_t)(unsafe.Pointer(&dst.Pix[0])), C.ptrdiff_t(dst.Stride), C.int(3*dst.W), C.int(dst.H),
		i32p(start), i32p(n), i32p(k), C.int(ksize))
}
