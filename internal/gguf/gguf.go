// Package gguf reads and writes GGUF files (llama.cpp's model format, version 2 and 3) in pure Go:
// the reader checks a header before llama.cpp sees the file (llm/llamacpp), bounded so that hostile
// counts and lengths are errors, not allocations or panics; the writer makes the tiny test models
// (llm/testmodel). Format: ggml-org/llama.cpp docs/gguf.md and ggml/src/gguf.cpp.
package gguf

import (
	"fmt"
	"sort"
)

// Value types of a key/value pair (gguf_type).
const (
	typeUint8   = 0
	typeInt8    = 1
	typeUint16  = 2
	typeInt16   = 3
	typeUint32  = 4
	typeInt32   = 5
	typeFloat32 = 6
	typeBool    = 7
	typeString  = 8
	typeArray   = 9
	typeUint64  = 10
	typeInt64   = 11
	typeFloat64 = 12
)

// FormatError is an error about a file's content (as opposed to an I/O error); Msg says what is wrong
// and where.
type FormatError struct{ Msg string }

func (e *FormatError) Error() string { return "gguf: " + e.Msg }

func formatErr(format string, args ...any) error {
	return &FormatError{Msg: fmt.Sprintf(format, args...)}
}

// KV holds a file's key/value pairs. Values are uint8, int8, uint16, int16, uint32, int32, float32,
// bool, string, uint64, int64, float64, or a slice of one of those (a GGUF array).
type KV map[string]any

// Architecture is general.architecture ("" when absent or not a string).
func (kv KV) Architecture() string { return kv.String("general.architecture") }

// String returns key k's string value ("" when absent or of another type).
func (kv KV) String(k string) string {
	s, _ := kv[k].(string)
	return s
}

// Bool returns key k's bool value (false when absent or of another type).
func (kv KV) Bool(k string) bool {
	b, _ := kv[k].(bool)
	return b
}

// Uint returns key k's value as an unsigned integer when it is one of the integer types and not
// negative; ok is false otherwise.
func (kv KV) Uint(k string) (v uint64, ok bool) {
	switch x := kv[k].(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// Floats returns key k's float32 array (nil when absent or of another type).
func (kv KV) Floats(k string) []float32 {
	f, _ := kv[k].([]float32)
	return f
}

// Ints returns key k's int32 or uint32 array as int64s (nil when absent or of another type).
func (kv KV) Ints(k string) []int64 {
	switch x := kv[k].(type) {
	case []int32:
		out := make([]int64, len(x))
		for i, v := range x {
			out[i] = int64(v)
		}
		return out
	case []uint32:
		out := make([]int64, len(x))
		for i, v := range x {
			out[i] = int64(v)
		}
		return out
	}
	return nil
}

// TypeName is the GGUF type of a value as llama.cpp's typed getters name it: "u32", "i32", "f32",
// "bool", "string", "[]f32", … ("" for a type GGUF has not).
func TypeName(v any) string {
	switch v.(type) {
	case uint8:
		return "u8"
	case int8:
		return "i8"
	case uint16:
		return "u16"
	case int16:
		return "i16"
	case uint32:
		return "u32"
	case int32:
		return "i32"
	case float32:
		return "f32"
	case bool:
		return "bool"
	case string:
		return "string"
	case uint64:
		return "u64"
	case int64:
		return "i64"
	case float64:
		return "f64"
	case []uint8:
		return "[]u8"
	case []int8:
		return "[]i8"
	case []uint16:
		return "[]u16"
	case []int16:
		return "[]i16"
	case []uint32:
		return "[]u32"
	case []int32:
		return "[]i32"
	case []float32:
		return "[]f32"
	case []bool:
		return "[]bool"
	case []string:
		return "[]string"
	case []uint64:
		return "[]u64"
	case []int64:
		return "[]i64"
	case []float64:
		return "[]f64"
	}
	return ""
}

// Keys returns the keys in sorted order.
func (kv KV) Keys() []string {
	out := make([]string, 0, len(kv))
	for k := range kv {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A ggml tensor type's storage: elements per block and bytes per block (ggml.c type_traits).
type typeSize struct{ block, bytes uint64 }

// typeSizes lists every type a GGUF file may hold (ggml.h enum ggml_type; removed numbers absent).
var typeSizes = map[uint32]typeSize{
	0: {1, 4}, 1: {1, 2}, // F32, F16
	2: {32, 18}, 3: {32, 20}, 6: {32, 22}, 7: {32, 24}, 8: {32, 34}, 9: {32, 36}, // Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q8_1
	10: {256, 84}, 11: {256, 110}, 12: {256, 144}, 13: {256, 176}, 14: {256, 210}, 15: {256, 292}, // Q2_K..Q8_K
	16: {256, 66}, 17: {256, 74}, 18: {256, 98}, 19: {256, 50}, 20: {32, 18}, 21: {256, 110}, 22: {256, 82}, // IQ*
	23: {256, 136}, 24: {1, 1}, 25: {1, 2}, 26: {1, 4}, 27: {1, 8}, 28: {1, 8}, 29: {256, 56}, 30: {1, 2}, // IQ4_XS I8 I16 I32 I64 F64 IQ1_M BF16
	34: {256, 54}, 35: {256, 66}, 39: {32, 17}, 40: {64, 36}, 41: {128, 18}, 42: {64, 18}, // TQ1_0 TQ2_0 MXFP4 NVFP4 Q1_0 Q2_0
}

// F32 is the ggml type of 32-bit float tensors (the only type the writer's callers use).
const F32 = 0

// Tensor describes one tensor of a file: its name, ggml type, shape in ggml order (fastest dimension
// first) and the offset of its data from the start of the data section.
type Tensor struct {
	Name   string
	Type   uint32
	Shape  []uint64
	Offset uint64
}

// Size returns the tensor's data size in bytes, or an error for an unknown type, a row length that
// is not a whole number of blocks, or a size that overflows.
func (t Tensor) Size() (uint64, error) {
	ts, ok := typeSizes[t.Type]
	if !ok {
		return 0, formatErr("tensor %s: unknown ggml type %d", t.Name, t.Type)
	}
	n := uint64(1)
	for _, d := range t.Shape {
		if d != 0 && n > (1<<62)/d {
			return 0, formatErr("tensor %s: shape %v overflows", t.Name, t.Shape)
		}
		n *= d
	}
	if len(t.Shape) > 0 && t.Shape[0]%ts.block != 0 {
		return 0, formatErr("tensor %s: row of %d elements is not a whole number of %d-element blocks", t.Name, t.Shape[0], ts.block)
	}
	blocks := n / ts.block
	if blocks > (1<<62)/ts.bytes {
		return 0, formatErr("tensor %s: shape %v overflows", t.Name, t.Shape)
	}
	return blocks * ts.bytes, nil
}

// Shape returns the named tensor's shape (nil when absent).
func (f *File) Shape(name string) []uint64 {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t.Shape
		}
	}
	return nil
}

// File is a decoded GGUF header.
type File struct {
	Version uint32
	KV      KV
	Tensors []Tensor
	// DataOffset is where the tensor data begins (the header's end, aligned); Alignment the data
	// alignment (general.alignment, default 32).
	DataOffset uint64
	Alignment  uint64
}
