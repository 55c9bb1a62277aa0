//go:build !amd64 || !cgo || noasm

package native

import "github.com/framesweep/framesweep/internal/rgb"

// Without the C kernels every level is Generic (detect never selects another).
const haveAsm = false

func horizontalAsm(l Level, p *Plan, dst, src *rgb.Image, firstRow, rows int) {
	horizontalGeneric(&p.h, dst, src, firstRow, rows)
}

func verticalAsm(l Level, start, n, k []int32, ksize int, dst, src *rgb.Image) {
	verticalGeneric(start, n, k, ksize, dst, src)
}
