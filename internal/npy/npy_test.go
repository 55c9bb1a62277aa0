package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

func TestHeaderRoundTrip(t *testing.T) {
	for _, c := range []struct {
		dtype string
		shape []int
	}{{"U8", []int{2, 3, 4, 3}}, {"F32", []int{5}}, {"F16", []int{1, 2, 2, 3}}, {"I64", []int{0}}} {
		h, err := Header(c.dtype, c.shape)
		if err != nil {
			t.Fatal(err)
		}
		if len(h)%64 != 0 || h[len(h)-1] != '\n' || !bytes.HasPrefix(h, []byte("\x93NUMPY\x01\x00")) {
			t.Errorf("%s %v: header %q not 64-aligned, newline-terminated version 1.0", c.dtype, c.shape, h)
		}
		n := descrs[c.dtype].size
		for _, d := range c.shape {
			n *= d
		}
		data := bytes.Repeat([]byte{7}, n)
		a, err := Read(append(h, data...))
		if err != nil || a.Descr != Descr(c.dtype) || fmt.Sprint(a.Shape) != fmt.Sprint(c.shape) || !bytes.Equal(a.Data, data) {
			t.Errorf("%s %v: read back %+v, %v", c.dtype, c.shape, a, err)
		}
	}
	if _, err := Header("BF16", []int{1}); !errors.Is(err, ErrFormat) {
		t.Errorf("BF16: %v", err)
	}
}

func TestReadRefuses(t *testing.T) {
	h, _ := Header("U8", []int{6})
	good := append(h, 1, 2, 3, 4, 5, 6)
	v2 := append([]byte("\x93NUMPY\x02\x00"), binary.LittleEndian.AppendUint32(nil, 1<<30)...)
	for name, b := range map[string][]byte{
		"no magic":       []byte("NUMPY\x01\x00\x00\x00"),
		"short data":     good[:len(good)-1],
		"long data":      append(append([]byte{}, good...), 0),
		"float size":     bytes.Replace(good, []byte("|u1"), []byte("<f4"), 1),
		"unknown dtype":  bytes.Replace(good, []byte("|u1"), []byte("<c8"), 1),
		"fortran":        bytes.Replace(good, []byte("False"), []byte("True "), 1),
		"version 9":      append([]byte("\x93NUMPY\x09\x00"), good[8:]...),
		"header too big": v2,
		"huge shape":     bytes.Replace(good, []byte("(6,)"), []byte("(9999999999999999,9999999999)"), 1),
		"negative dim":   bytes.Replace(good, []byte("(6,)"), []byte("(-6,)"), 1),
	} {
		if _, err := Read(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want ErrFormat", name, err)
		}
	}
}

// TestNumPy: numpy loads what Header writes (shape, dtype, values) and Read takes what np.save writes.
func TestNumPy(t *testing.T) {
	py := testenv.NeedPython(t, "numpy")
	dir := t.TempDir()
	h, err := Header("F32", []int{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for i := range 6 {
		data = binary.LittleEndian.AppendUint32(data, uint32(0x3f800000+i<<20)) // 1.0, 1.125, …
	}
	ours := filepath.Join(dir, "ours.npy")
	if err := os.WriteFile(ours, append(h, data...), 0o644); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(dir, "theirs.npy")
	out, err := exec.Command(py, "-c", `import numpy as np, sys
a = np.load(sys.argv[1]); print(a.dtype, a.shape, a.ravel().tolist())
np.save(sys.argv[2], np.arange(24, dtype=np.uint8).reshape(2, 3, 4))`, ours, theirs).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "float32 (2, 3) [1.0, 1.125, 1.25, 1.375, 1.5, 1.625]" {
		t.Errorf("numpy read %s", got)
	}
	b, err := os.ReadFile(theirs)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Read(b)
	if err != nil || a.Descr != "|u1" || fmt.Sprint(a.Shape) != "[2 3 4]" || a.Data[23] != 23 {
		t.Errorf("np.save file: %+v %v", a, err)
	}
}

// TestWriteReadsBack: Write's file is the header and the data, and Read gives the array back; data
// that is not the shape's size is refused before anything is written.
func TestWriteReadsBack(t *testing.T) {
	data := []byte{1, 2, 3, 4, 5, 6}
	var b bytes.Buffer
	n, err := Write(&b, "U8", []int{1, 2, 3}, data)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("Write: %d bytes, %v (buffer %d)", n, err, b.Len())
	}
	a, err := Read(b.Bytes())
	if err != nil || !bytes.Equal(a.Data, data) || len(a.Shape) != 3 || a.Shape[2] != 3 || a.Descr != "|u1" {
		t.Fatalf("Read: %+v %v", a, err)
	}
	b.Reset()
	for _, shape := range [][]int{{7}, {2, 3, 2}, {-1, 6}} {
		if n, err := Write(&b, "U8", shape, data); !errors.Is(err, ErrFormat) || n != 0 || b.Len() != 0 {
			t.Errorf("shape %v of 6 bytes: %d written, %v", shape, n, err)
		}
	}
	if _, err := Encode("F32", []int{2}, make([]byte, 8)); err != nil {
		t.Errorf("2 float32s in 8 bytes: %v", err)
	}
}
