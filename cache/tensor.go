package cache

import (
	"encoding/binary"
	"math"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/rgb"
)

// Norm is a per-channel normalisation ((x/255 − mean) / std) applied when the dtype is a float.
type Norm struct {
	Name      string
	Mean, Std [3]float32
}

// norms are the normalisations harnesses use, by name.
var norms = map[string]Norm{
	"unit":     {Name: "unit", Mean: [3]float32{0, 0, 0}, Std: [3]float32{1, 1, 1}},
	"half":     {Name: "half", Mean: [3]float32{0.5, 0.5, 0.5}, Std: [3]float32{0.5, 0.5, 0.5}}, // SigLIP
	"imagenet": {Name: "imagenet", Mean: [3]float32{0.485, 0.456, 0.406}, Std: [3]float32{0.229, 0.224, 0.225}},
	"clip":     {Name: "clip", Mean: [3]float32{0.48145466, 0.4578275, 0.40821073}, Std: [3]float32{0.26862954, 0.26130258, 0.27577711}}, // Qwen-VL, CLIP
}

// NormNames lists the normalisations LookupNorm knows, sorted.
func NormNames() []string {
	out := make([]string, 0, len(norms))
	for n := range norms {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LookupNorm returns the named normalisation.
func LookupNorm(name string) (Norm, error) {
	n, ok := norms[name]
	if !ok {
		return Norm{}, wrapf(ErrBadSpec, "normalisation %q (known: %s)", name, strings.Join(NormNames(), ", "))
	}
	return n, nil
}

// table returns the 3×256 normalised values; a table keeps the float math identical on every
// machine (explicit float32 conversions forbid fused multiply-add).
func (n Norm) table() [3][256]float32 {
	var t [3][256]float32
	for c := 0; c < 3; c++ {
		for v := 0; v < 256; v++ {
			x := float32(float32(v) / 255)
			t[c][v] = float32(float32(x-n.Mean[c]) / n.Std[c])
		}
	}
	return t
}

// FrameEncoder appends RGB frames to one [N,H,W,3] tensor of a fixed dtype.
type FrameEncoder struct {
	dtype DType
	w, h  int
	tab   [3][256]float32
	data  []byte
	n     int
}

// NewFrameEncoder prepares a tensor of up to n frames of w×h; norm is ignored for U8.
func NewFrameEncoder(dtype DType, norm Norm, w, h, n int) (*FrameEncoder, error) {
	if dtype != U8 && dtype != F32 && dtype != F16 {
		return nil, wrapf(ErrBadSpec, "frame dtype %q", dtype)
	}
	if w <= 0 || h <= 0 || n <= 0 {
		return nil, wrapf(ErrBadSpec, "frames %dx%d ×%d", w, h, n)
	}
	e := &FrameEncoder{dtype: dtype, w: w, h: h}
	if dtype != U8 {
		e.tab = norm.table()
	}
	e.data = make([]byte, 0, n*w*h*3*dtype.Size())
	return e, nil
}

// Add appends one frame, which must be w×h.
func (e *FrameEncoder) Add(img *rgb.Image) error {
	if err := img.Validate(); err != nil {
		return wrapf(ErrBadSpec, "%v", err)
	}
	if img.W != e.w || img.H != e.h {
		return wrapf(ErrBadSpec, "frame %dx%d in a %dx%d tensor", img.W, img.H, e.w, e.h)
	}
	for y := 0; y < img.H; y++ {
		row := img.Row(y)
		switch e.dtype {
		case U8:
			e.data = append(e.data, row...)
		case F32:
			for i, v := range row {
				e.data = binary.LittleEndian.AppendUint32(e.data, math.Float32bits(e.tab[i%3][v]))
			}
		case F16:
			for i, v := range row {
				e.data = binary.LittleEndian.AppendUint16(e.data, Float16(e.tab[i%3][v]))
			}
		}
	}
	e.n++
	return nil
}

// Tensor returns the frames added so far as tensor name.
func (e *FrameEncoder) Tensor(name string) Tensor {
	return Tensor{Name: name, DType: e.dtype, Shape: []int{e.n, e.h, e.w, 3}, Data: e.data}
}

// Int64Tensor encodes a vector of ints as I64.
func Int64Tensor(name string, v []int) Tensor {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(x)))
	}
	return Tensor{Name: name, DType: I64, Shape: []int{len(v)}, Data: b}
}

// Float16 converts f to IEEE half precision, rounding to nearest even (as numpy's astype does).
func Float16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	man := b & 0x7fffff
	if exp == 0xff { // Inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := man >> shift
		rem := man & ((1 << shift) - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, which is the correct rounding up to Inf
	}
	return sign | uint16(r)
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
