//go:build !amd64 || !cgo || noasm

package native

import "github.com/framesweep/framesweep/rgb"

// Without the C kernels every level is Generic (detect never selects another).
const haveAsm = false

func horizontalAsm(l Level, p *Plan, dst, src *rgb.Image, firstRow, rows int) {
	horizontalGeneric(&p.h, dst, src, firstRow, rows)
}

func verticalAsm(l Level, start, n, k []int32, ksize int, dst, src *rgb.Image) {
	verticalGeneric(start, n, k, ksize, dst, src)
}

func tensorAsm(_ Level, f32 []float32, f16 []uint16, src *rgb.Image, n Norm, l Layout) {
	tensorGeneric(f32, f16, src, n, l)
}

func f16Asm(dst []uint16, src []float32) { float16sGeneric(dst, src) }

func torchHAsm(p *TorchPlan, src *rgb.Image, firstRow, rows int, tmp []float32, dst *rgb.Image) {
	torchHGeneric(&p.h, src, firstRow, rows, tmp, dst)
}

func torchVAsm(a *torchAxis, start []int32, srcF []float32, src8 *rgb.Image, rb int, dst *rgb.Image) {
	torchVGeneric(a, start, srcF, src8, rb, dst)
}
