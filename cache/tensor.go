package cache

import (
	"encoding/binary"

	"github.com/framesweep/framesweep/rgb"
)

// Int64Tensor encodes a vector of ints as I64.
func Int64Tensor(name string, v []int) Tensor {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(x)))
	}
	return Tensor{Name: name, DType: I64, Shape: []int{len(v)}, Data: b}
}

// Images returns the frames of a uint8 frames tensor ([N,H,W,3], or [N,T,H,W,3] for tiled layouts,
// flattened in order) as images aliasing the tensor's data, for consumers of cached inputs.
func (f *File) Images(name string) ([]*rgb.Image, error) {
	t, ok := f.Tensors[name]
	if !ok {
		return nil, wrapf(ErrNotFound, "tensor %q", name)
	}
	if t.DType != U8 || len(t.Shape) < 4 || t.Shape[len(t.Shape)-1] != 3 {
		return nil, wrapf(ErrBadSpec, "tensor %q is %s%v, not uint8 [...,H,W,3]", name, t.DType, t.Shape)
	}
	h, w := t.Shape[len(t.Shape)-3], t.Shape[len(t.Shape)-2]
	n := 1
	for _, d := range t.Shape[:len(t.Shape)-3] {
		n *= d
	}
	per := h * w * 3
	out := make([]*rgb.Image, n)
	for i := range out {
		out[i] = &rgb.Image{W: w, H: h, Stride: 3 * w, Pix: t.Data[i*per : (i+1)*per : (i+1)*per]}
	}
	return out, nil
}
