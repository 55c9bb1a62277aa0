package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"unicode/utf8"
)

// Limits bound what a header may claim, so that a hostile file is an error before it is an
// allocation. Every length is also bounded by the bytes left in the file.
type Limits struct {
	MaxKV      uint64 // key/value pairs
	MaxTensors uint64
	MaxArray   uint64 // elements of one array (vocabularies reach ~260k)
	MaxString  uint64 // bytes of one string (chat templates reach tens of KiB)
}

// DefaultLimits are generous for real models and small for a header.
var DefaultLimits = Limits{MaxKV: 1 << 16, MaxTensors: 1 << 20, MaxArray: 1 << 21, MaxString: 1 << 24}

// maxDims is GGML_MAX_DIMS.
const maxDims = 4

// Read decodes the header of a GGUF file of size bytes (key/values and tensor infos; not the data)
// and checks that every tensor's data lies inside the file.
func Read(r io.Reader, size int64, lim Limits) (*File, error) {
	d := &decoder{r: bufio.NewReaderSize(r, 1<<16), left: size}
	f, err := d.file(lim)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, formatErr("truncated header at byte %d", d.pos)
		}
		return nil, err
	}
	for _, t := range f.Tensors {
		n, err := t.Size()
		if err != nil {
			return nil, err
		}
		end := f.DataOffset + t.Offset + n
		if t.Offset > uint64(size) || end < f.DataOffset || end > uint64(size) {
			return nil, formatErr("truncated: tensor %s ends at byte %d of a %d-byte file", t.Name, end, size)
		}
	}
	return f, nil
}

type decoder struct {
	r    *bufio.Reader
	pos  int64 // bytes read
	left int64 // bytes of the file not read yet
	buf  [8]byte
}

func (d *decoder) read(n int) ([]byte, error) {
	if int64(n) > d.left {
		return nil, io.ErrUnexpectedEOF
	}
	b := d.buf[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		return nil, err
	}
	d.pos += int64(n)
	d.left -= int64(n)
	return b, nil
}

func (d *decoder) u32() (uint32, error) {
	b, err := d.read(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64() (uint64, error) {
	b, err := d.read(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// count reads a u64 count of items at least minBytes each, bounded by max and by the bytes left.
func (d *decoder) count(what string, max uint64, minBytes int64) (uint64, error) {
	n, err := d.u64()
	if err != nil {
		return 0, err
	}
	if n > max {
		return 0, formatErr("%s: %d (more than %d)", what, n, max)
	}
	if minBytes > 0 && n > uint64(d.left/minBytes) {
		return 0, formatErr("%s: %d does not fit in the %d bytes left", what, n, d.left)
	}
	return n, nil
}

func (d *decoder) str(lim Limits) (string, error) {
	n, err := d.count("string length", lim.MaxString, 1)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		return "", err
	}
	d.pos += int64(n)
	d.left -= int64(n)
	return string(b), nil
}

func (d *decoder) file(lim Limits) (*File, error) {
	magic, err := d.read(4)
	if err != nil {
		return nil, err
	}
	if string(magic) != "GGUF" {
		return nil, formatErr("bad magic %q", magic)
	}
	f := &File{KV: KV{}, Alignment: 32}
	if f.Version, err = d.u32(); err != nil {
		return nil, err
	}
	if f.Version != 2 && f.Version != 3 {
		return nil, formatErr("version %d (want 2 or 3)", f.Version)
	}
	nt, err := d.count("tensor count", lim.MaxTensors, 8+4+8+4+8)
	if err != nil {
		return nil, err
	}
	nkv, err := d.count("key/value count", lim.MaxKV, 8+4)
	if err != nil {
		return nil, err
	}
	for range nkv {
		k, err := d.str(lim)
		if err != nil {
			return nil, err
		}
		if !utf8.ValidString(k) || k == "" {
			return nil, formatErr("key %q is not valid UTF-8 text", k)
		}
		if _, dup := f.KV[k]; dup {
			return nil, formatErr("duplicate key %s", k)
		}
		typ, err := d.u32()
		if err != nil {
			return nil, err
		}
		v, err := d.value(typ, lim, true)
		if err != nil {
			return nil, formatErrKey(k, err)
		}
		f.KV[k] = v
	}
	if a, ok := f.KV["general.alignment"]; ok {
		n, isU32 := a.(uint32)
		if !isU32 || n == 0 || n&(n-1) != 0 {
			return nil, formatErr("general.alignment %v is not a power of two (u32)", a)
		}
		f.Alignment = uint64(n)
	}
	names := map[string]bool{}
	for range nt {
		t, err := d.tensor(lim)
		if err != nil {
			return nil, err
		}
		if names[t.Name] {
			return nil, formatErr("duplicate tensor %s", t.Name)
		}
		names[t.Name] = true
		if t.Offset%f.Alignment != 0 {
			return nil, formatErr("tensor %s: offset %d is not aligned to %d", t.Name, t.Offset, f.Alignment)
		}
		f.Tensors = append(f.Tensors, t)
	}
	end := uint64(d.pos)
	f.DataOffset = end + (f.Alignment-end%f.Alignment)%f.Alignment
	return f, nil
}

func formatErrKey(k string, err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		return formatErr("key %s: %s", k, fe.Msg)
	}
	return err
}

func (d *decoder) tensor(lim Limits) (Tensor, error) {
	var t Tensor
	var err error
	if t.Name, err = d.str(lim); err != nil {
		return t, err
	}
	if !utf8.ValidString(t.Name) || t.Name == "" {
		return t, formatErr("tensor name %q is not valid UTF-8 text", t.Name)
	}
	nd, err := d.u32()
	if err != nil {
		return t, err
	}
	if nd == 0 || nd > maxDims {
		return t, formatErr("tensor %s: %d dimensions (want 1 to %d)", t.Name, nd, maxDims)
	}
	t.Shape = make([]uint64, nd)
	for i := range t.Shape {
		if t.Shape[i], err = d.u64(); err != nil {
			return t, err
		}
		if t.Shape[i] == 0 || t.Shape[i] > math.MaxInt64 {
			return t, formatErr("tensor %s: dimension %d is %d", t.Name, i, t.Shape[i])
		}
	}
	if t.Type, err = d.u32(); err != nil {
		return t, err
	}
	if _, ok := typeSizes[t.Type]; !ok {
		return t, formatErr("tensor %s: unknown ggml type %d", t.Name, t.Type)
	}
	if t.Offset, err = d.u64(); err != nil {
		return t, err
	}
	return t, nil
}

// value reads one value of type typ; arrays may not nest.
func (d *decoder) value(typ uint32, lim Limits, top bool) (any, error) {
	switch typ {
	case typeUint8, typeInt8, typeBool:
		b, err := d.read(1)
		if err != nil {
			return nil, err
		}
		switch typ {
		case typeUint8:
			return b[0], nil
		case typeInt8:
			return int8(b[0]), nil
		}
		if b[0] > 1 {
			return nil, formatErr("bool byte %d", b[0])
		}
		return b[0] == 1, nil
	case typeUint16, typeInt16:
		b, err := d.read(2)
		if err != nil {
			return nil, err
		}
		v := binary.LittleEndian.Uint16(b)
		if typ == typeInt16 {
			return int16(v), nil
		}
		return v, nil
	case typeUint32, typeInt32, typeFloat32:
		v, err := d.u32()
		if err != nil {
			return nil, err
		}
		switch typ {
		case typeInt32:
			return int32(v), nil
		case typeFloat32:
			return math.Float32frombits(v), nil
		}
		return v, nil
	case typeUint64, typeInt64, typeFloat64:
		v, err := d.u64()
		if err != nil {
			return nil, err
		}
		switch typ {
		case typeInt64:
			return int64(v), nil
		case typeFloat64:
			return math.Float64frombits(v), nil
		}
		return v, nil
	case typeString:
		return d.str(lim)
	case typeArray:
		if !top {
			return nil, formatErr("nested array")
		}
		return d.array(lim)
	}
	return nil, formatErr("unknown value type %d", typ)
}

// elemBytes is the smallest encoding of one element of type typ (a string: its 8-byte length).
var elemBytes = map[uint32]int64{typeUint8: 1, typeInt8: 1, typeBool: 1, typeUint16: 2, typeInt16: 2,
	typeUint32: 4, typeInt32: 4, typeFloat32: 4, typeUint64: 8, typeInt64: 8, typeFloat64: 8, typeString: 8}

func (d *decoder) array(lim Limits) (any, error) {
	et, err := d.u32()
	if err != nil {
		return nil, err
	}
	eb, ok := elemBytes[et]
	if !ok {
		if et == typeArray {
			return nil, formatErr("nested array")
		}
		return nil, formatErr("array of unknown type %d", et)
	}
	n, err := d.count("array length", lim.MaxArray, eb)
	if err != nil {
		return nil, err
	}
	switch et {
	case typeUint8:
		return readArray[uint8](d, n, et, lim)
	case typeInt8:
		return readArray[int8](d, n, et, lim)
	case typeBool:
		return readArray[bool](d, n, et, lim)
	case typeUint16:
		return readArray[uint16](d, n, et, lim)
	case typeInt16:
		return readArray[int16](d, n, et, lim)
	case typeUint32:
		return readArray[uint32](d, n, et, lim)
	case typeInt32:
		return readArray[int32](d, n, et, lim)
	case typeFloat32:
		return readArray[float32](d, n, et, lim)
	case typeUint64:
		return readArray[uint64](d, n, et, lim)
	case typeInt64:
		return readArray[int64](d, n, et, lim)
	case typeFloat64:
		return readArray[float64](d, n, et, lim)
	}
	return readArray[string](d, n, et, lim)
}

func readArray[T any](d *decoder, n uint64, et uint32, lim Limits) ([]T, error) {
	out := make([]T, n)
	for i := range out {
		v, err := d.value(et, lim, false)
		if err != nil {
			return nil, err
		}
		out[i] = v.(T)
	}
	return out, nil
}
