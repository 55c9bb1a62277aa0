// Package npy writes and reads NumPy .npy files: a C-order array as one file (what `serve --format
// npy` sends and `frames --record` writes as input.npy) and the arrays numpy.save writes (what the
// bench peers dump). The one .npy writer and reader of the module.
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// ErrFormat reports a file this package does not read: not .npy, an unknown version or dtype,
// Fortran order, or data that does not match the shape.
var ErrFormat = errors.New("npy: unsupported file")

const magic = "\x93NUMPY"

// descrs maps safetensors dtype names (cache.DType) to numpy descrs and item sizes.
var descrs = map[string]struct {
	descr string
	size  int
}{"U8": {"|u1", 1}, "F16": {"<f2", 2}, "F32": {"<f4", 4}, "I64": {"<i8", 8}}

// Descr is the numpy descr of a safetensors dtype name ("U8" → "|u1"); "" when npy has none here.
func Descr(dtype string) string { return descrs[dtype].descr }

func itemSize(descr string) int {
	for _, d := range descrs {
		if d.descr == descr {
			return d.size
		}
	}
	return 0
}

// Header is the header of a version 1.0 .npy file holding a C-order array of shape whose elements
// are the safetensors dtype (U8, F16, F32, I64); the little-endian data follows it unchanged. It is
// padded with spaces to a multiple of 64 bytes and ends in '\n', as numpy writes it.
func Header(dtype string, shape []int) ([]byte, error) {
	descr := Descr(dtype)
	if descr == "" {
		return nil, fmt.Errorf("%w: dtype %q", ErrFormat, dtype)
	}
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh)
	v1 := magic + "\x01\x00"
	total := len(v1) + 2 + len(dict) + 1
	pad := (64 - total%64) % 64
	if len(dict)+pad+1 > 0xffff {
		return nil, fmt.Errorf("%w: header of %d bytes", ErrFormat, len(dict))
	}
	b := make([]byte, 0, total+pad)
	b = append(b, v1...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)+pad+1))
	b = append(b, dict...)
	b = append(b, strings.Repeat(" ", pad)...)
	return append(b, '\n'), nil
}

// Encode is the .npy file of a C-order array of shape whose elements are the safetensors dtype, as
// its two parts, the header and data itself (unchanged, little-endian): their lengths are the file's
// size before anything is sent. data must be exactly the shape's size (ErrFormat otherwise).
func Encode(dtype string, shape []int, data []byte) ([][]byte, error) {
	h, err := Header(dtype, shape)
	if err != nil {
		return nil, err
	}
	n := int64(descrs[dtype].size)
	for _, d := range shape {
		if d < 0 || d > 0 && n > int64(len(data))/int64(d)+1 {
			return nil, fmt.Errorf("%w: shape %v of %s does not fit %d bytes", ErrFormat, shape, dtype, len(data))
		}
		n *= int64(d)
	}
	if n != int64(len(data)) {
		return nil, fmt.Errorf("%w: shape %v of %s needs %d bytes, the data has %d", ErrFormat, shape, dtype, n, len(data))
	}
	return [][]byte{h, data}, nil
}

// Write writes the .npy file of Encode to w and returns the bytes written.
func Write(w io.Writer, dtype string, shape []int, data []byte) (int64, error) {
	parts, err := Encode(dtype, shape, data)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, p := range parts {
		k, err := w.Write(p)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Array is a parsed .npy file; Data aliases the bytes it was read from.
type Array struct {
	Descr string // numpy descr: "|u1", "<f2", "<f4", "<i8"
	Shape []int
	Data  []byte
}

var (
	shapeRe = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
	descrRe = regexp.MustCompile(`'descr':\s*'([^']*)'`)
)

// Read parses a C-order .npy file (versions 1–3) of one of the descrs above; the data must be exactly
// the shape's size.
func Read(b []byte) (*Array, error) {
	if len(b) < 10 || !bytes.HasPrefix(b, []byte(magic)) {
		return nil, fmt.Errorf("%w: no \\x93NUMPY magic", ErrFormat)
	}
	var hlen, off int
	switch b[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, fmt.Errorf("%w: truncated header", ErrFormat)
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, fmt.Errorf("%w: version %d", ErrFormat, b[6])
	}
	if hlen < 0 || off+hlen > len(b) {
		return nil, fmt.Errorf("%w: header of %d bytes beyond the file", ErrFormat, hlen)
	}
	hdr := string(b[off : off+hlen])
	m := descrRe.FindStringSubmatch(hdr)
	if m == nil || itemSize(m[1]) == 0 {
		return nil, fmt.Errorf("%w: dtype in %s", ErrFormat, strings.TrimSpace(hdr))
	}
	a := &Array{Descr: m[1]}
	if !strings.Contains(hdr, "'fortran_order': False") {
		return nil, fmt.Errorf("%w: Fortran order", ErrFormat)
	}
	s := shapeRe.FindStringSubmatch(hdr)
	if s == nil {
		return nil, fmt.Errorf("%w: no shape in %s", ErrFormat, strings.TrimSpace(hdr))
	}
	data := b[off+hlen:]
	n := itemSize(a.Descr)
	for _, f := range strings.Split(s[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 || (d > 0 && n > len(data)/d+1) {
			return nil, fmt.Errorf("%w: shape %q", ErrFormat, s[1])
		}
		a.Shape = append(a.Shape, d)
		n *= d
	}
	if len(data) != n {
		return nil, fmt.Errorf("%w: shape %v of %s needs %d bytes, file has %d", ErrFormat, a.Shape, a.Descr, n, len(data))
	}
	a.Data = data
	return a, nil
}
