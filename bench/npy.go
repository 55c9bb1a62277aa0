package bench

import (
	"fmt"

	"github.com/framesweep/framesweep/internal/npy"
)

// ErrNPY reports a .npy file the peers comparison does not take (internal/npy's ErrFormat: the peers
// scripts dump C-order uint8 arrays with numpy.save).
var ErrNPY = npy.ErrFormat

// parseNPY returns the shape and data of a C-order uint8 array in numpy's .npy format (versions 1–3).
func parseNPY(b []byte) ([]int, []byte, error) {
	a, err := npy.Read(b)
	if err != nil {
		return nil, nil, err
	}
	if a.Descr != "|u1" {
		return nil, nil, fmt.Errorf("%w: dtype %s is not uint8", ErrNPY, a.Descr)
	}
	return a.Shape, a.Data, nil
}
