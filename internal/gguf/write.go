package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// WTensor is a tensor to write: its description (Offset is computed) and its data, which must be
// exactly Size bytes.
type WTensor struct {
	Name  string
	Type  uint32
	Shape []uint64
	Data  []byte
}

// F32Tensor makes an F32 tensor of data; shape is in ggml order (fastest dimension first).
func F32Tensor(name string, data []float32, shape ...uint64) WTensor {
	b := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return WTensor{Name: name, Type: F32, Shape: shape, Data: b}
}

// Write writes a version 3 GGUF file: the key/values in sorted key order, then the tensor infos and
// data in the order given, each tensor's data aligned to general.alignment (32 unless kv sets it).
// The same arguments give the same bytes.
func Write(w io.Writer, kv KV, ts []WTensor) error {
	align := uint64(32)
	if a, ok := kv["general.alignment"].(uint32); ok && a > 0 && a&(a-1) == 0 {
		align = uint64(a)
	}
	bw := bufio.NewWriter(w)
	e := &encoder{w: bw}
	e.bytes([]byte("GGUF"))
	e.u32(3)
	e.u64(uint64(len(ts)))
	e.u64(uint64(len(kv)))
	for _, k := range kv.Keys() {
		e.str(k)
		if err := e.value(kv[k]); err != nil {
			return fmt.Errorf("gguf: key %s: %w", k, err)
		}
	}
	var off uint64
	offsets := make([]uint64, len(ts))
	for i, t := range ts {
		n, err := Tensor{Name: t.Name, Type: t.Type, Shape: t.Shape}.Size()
		if err != nil {
			return err
		}
		if uint64(len(t.Data)) != n {
			return fmt.Errorf("gguf: tensor %s: %d bytes of data for a %d-byte tensor", t.Name, len(t.Data), n)
		}
		offsets[i] = off
		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			e.u64(d)
		}
		e.u32(t.Type)
		e.u64(off)
		off += n
		off += (align - off%align) % align
	}
	e.pad(align)
	start := e.n
	for i, t := range ts {
		e.zeros(start + offsets[i] - e.n)
		e.bytes(t.Data)
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

type encoder struct {
	w   io.Writer
	n   uint64
	err error
	b   [8]byte
}

func (e *encoder) bytes(b []byte) {
	if e.err != nil {
		return
	}
	var k int
	k, e.err = e.w.Write(b)
	e.n += uint64(k)
}

func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.b[:4], v); e.bytes(e.b[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.b[:8], v); e.bytes(e.b[:8]) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.bytes([]byte(s)) }
func (e *encoder) zeros(n uint64) {
	for ; n > 0; n-- {
		e.bytes([]byte{0})
	}
}
func (e *encoder) pad(align uint64) { e.zeros((align - e.n%align) % align) }

// value writes a value's type and encoding.
func (e *encoder) value(v any) error {
	switch x := v.(type) {
	case uint8:
		e.u32(typeUint8)
		e.bytes([]byte{x})
	case int8:
		e.u32(typeInt8)
		e.bytes([]byte{byte(x)})
	case bool:
		e.u32(typeBool)
		e.bytes([]byte{boolByte(x)})
	case uint16:
		e.u32(typeUint16)
		e.bytes(binary.LittleEndian.AppendUint16(nil, x))
	case int16:
		e.u32(typeInt16)
		e.bytes(binary.LittleEndian.AppendUint16(nil, uint16(x)))
	case uint32:
		e.u32(typeUint32)
		e.u32(x)
	case int32:
		e.u32(typeInt32)
		e.u32(uint32(x))
	case float32:
		e.u32(typeFloat32)
		e.u32(math.Float32bits(x))
	case uint64:
		e.u32(typeUint64)
		e.u64(x)
	case int64:
		e.u32(typeInt64)
		e.u64(uint64(x))
	case float64:
		e.u32(typeFloat64)
		e.u64(math.Float64bits(x))
	case string:
		e.u32(typeString)
		e.str(x)
	case []string:
		e.u32(typeArray)
		e.u32(typeString)
		e.u64(uint64(len(x)))
		for _, s := range x {
			e.str(s)
		}
	case []float32:
		writeArray(e, typeFloat32, x, func(v float32) { e.u32(math.Float32bits(v)) })
	case []int32:
		writeArray(e, typeInt32, x, func(v int32) { e.u32(uint32(v)) })
	case []uint32:
		writeArray(e, typeUint32, x, func(v uint32) { e.u32(v) })
	case []bool:
		writeArray(e, typeBool, x, func(v bool) { e.bytes([]byte{boolByte(v)}) })
	default:
		return fmt.Errorf("value of type %T has no GGUF encoding here", v)
	}
	return nil
}

func writeArray[T any](e *encoder, typ uint32, xs []T, put func(T)) {
	e.u32(typeArray)
	e.u32(typ)
	e.u64(uint64(len(xs)))
	for _, x := range xs {
		put(x)
	}
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
