//go:build amd64 && cgo && !noasm

package native

// #cgo CFLAGS: -O3 -fno-strict-aliasing
import "C"

// cgo.go is the one place this package's cgo flags live. The float kernels turn FMA contraction off
// with a pragma (cgo refuses -ffp-contract); ISA variants use __attribute__((target(...))).

const haveAsm = true
