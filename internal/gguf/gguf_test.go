package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

func sample(t testing.TB) []byte {
	t.Helper()
	kv := KV{
		"general.architecture":         "llama",
		"llama.block_count":            uint32(2),
		"llama.rope.eps":               float32(1e-5),
		"tokenizer.ggml.tokens":        []string{"<unk>", "a", "b"},
		"tokenizer.ggml.scores":        []float32{0, -1, -2},
		"tokenizer.ggml.token_type":    []int32{2, 1, 1},
		"tokenizer.ggml.add_bos_token": true,
		"x.i64":                        int64(-3), "x.u64": uint64(7), "x.f64": 2.5, "x.u8": uint8(1), "x.i16": int16(-2),
		"x.u32s": []uint32{1, 2}, "x.bools": []bool{true, false},
	}
	ts := []WTensor{
		F32Tensor("a", []float32{1, 2, 3}, 3),
		F32Tensor("b.weight", make([]float32, 8), 4, 2),
	}
	var b bytes.Buffer
	if err := Write(&b, kv, ts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	data := sample(t)
	f, err := Read(bytes.NewReader(data), int64(len(data)), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if f.KV.Architecture() != "llama" || !f.KV.Bool("tokenizer.ggml.add_bos_token") {
		t.Errorf("kv: %v", f.KV)
	}
	if n, ok := f.KV.Uint("llama.block_count"); !ok || n != 2 {
		t.Errorf("block_count %d %v", n, ok)
	}
	if !reflect.DeepEqual(f.KV["tokenizer.ggml.tokens"], []string{"<unk>", "a", "b"}) ||
		!reflect.DeepEqual(f.KV.Ints("tokenizer.ggml.token_type"), []int64{2, 1, 1}) ||
		!reflect.DeepEqual(f.KV.Floats("tokenizer.ggml.scores"), []float32{0, -1, -2}) ||
		f.KV["x.i64"] != int64(-3) || f.KV["x.f64"] != 2.5 || f.KV["x.i16"] != int16(-2) {
		t.Errorf("values: %v", f.KV)
	}
	if len(f.Tensors) != 2 || f.Tensors[1].Offset != 32 || !reflect.DeepEqual(f.Shape("b.weight"), []uint64{4, 2}) {
		t.Errorf("tensors: %+v", f.Tensors)
	}
	if f.DataOffset%32 != 0 || f.DataOffset+32+32 != uint64(len(data)) {
		t.Errorf("data offset %d of %d bytes", f.DataOffset, len(data))
	}
	got := data[f.DataOffset : f.DataOffset+12]
	if binary.LittleEndian.Uint32(got[4:]) != 0x40000000 { // 2.0f
		t.Errorf("tensor a data % x", got)
	}
	if again := sample(t); !bytes.Equal(again, data) {
		t.Error("Write is not deterministic")
	}
}

func TestReadRefuses(t *testing.T) {
	good := sample(t)
	u64at := func(off int, v uint64) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint64(b[off:], v)
		return b
	}
	cases := map[string][]byte{
		"magic":        append([]byte("GGUX"), good[4:]...),
		"truncated":    good[:len(good)-1],
		"header only":  good[:40],
		"tensor count": u64at(8, 1<<40),
		"kv count":     u64at(16, 1<<40),
		"key length":   u64at(24, 1<<62),
		"empty":        nil,
		"version 1":    append(append([]byte("GGUF"), 1, 0, 0, 0), good[8:]...),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(b), int64(len(b)), DefaultLimits)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err %v, want a FormatError", err)
			}
		})
	}
	small := Limits{MaxKV: 4, MaxTensors: 8, MaxArray: 8, MaxString: 64}
	var fe *FormatError
	if _, err := Read(bytes.NewReader(good), int64(len(good)), small); !errors.As(err, &fe) {
		t.Errorf("limits: %v", err)
	}
}

func TestTensorSize(t *testing.T) {
	for _, c := range []struct {
		typ   uint32
		shape []uint64
		want  uint64
	}{{F32, []uint64{3, 2}, 24}, {1, []uint64{4}, 8}, {12, []uint64{512, 2}, 4 * 144}, {8, []uint64{64}, 68}} {
		n, err := Tensor{Name: "t", Type: c.typ, Shape: c.shape}.Size()
		if err != nil || n != c.want {
			t.Errorf("type %d %v: %d %v, want %d", c.typ, c.shape, n, err, c.want)
		}
	}
	if _, err := (Tensor{Name: "t", Type: 12, Shape: []uint64{100}}).Size(); err == nil {
		t.Error("a Q4_K row of 100 elements was accepted")
	}
	if _, err := (Tensor{Name: "t", Type: 5, Shape: []uint64{1}}).Size(); err == nil {
		t.Error("removed type 5 was accepted")
	}
}

func FuzzRead(f *testing.F) {
	f.Add(sample(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Read(bytes.NewReader(b), int64(len(b)), Limits{MaxKV: 64, MaxTensors: 64, MaxArray: 1 << 12, MaxString: 1 << 12})
		if err == nil && g.DataOffset > uint64(len(b)) && len(g.Tensors) > 0 {
			t.Fatalf("data offset %d past a %d-byte file", g.DataOffset, len(b))
		}
	})
}
