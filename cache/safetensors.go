package cache

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"sort"
	"strings"
)

// DType is a safetensors element type.
type DType string

// The element types framesweep writes and reads.
const (
	U8  DType = "U8"
	F16 DType = "F16"
	F32 DType = "F32"
	I64 DType = "I64"
)

// Size returns the element size in bytes, or 0 for an unknown type.
func (d DType) Size() int {
	switch d {
	case U8:
		return 1
	case F16:
		return 2
	case F32:
		return 4
	case I64:
		return 8
	}
	return 0
}

// Tensor is one named array: Data holds the little-endian, C-order bytes of Shape.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// Caps of the strict reader (the safetensors reference caps the header at 100 MB against DoS).
const (
	MaxHeaderBytes = 100 << 20
	maxTensors     = 1024
	maxRank        = 8
)

const metadataKey = "__metadata__"

type headerEntry struct {
	DType       DType    `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// EncodeSafetensors returns the canonical safetensors encoding of tensors and metadata: tensors are
// laid out in name order, the JSON header has sorted keys and is padded with spaces to a multiple of
// 8 bytes. The same inputs always give the same bytes.
func EncodeSafetensors(tensors []Tensor, metadata map[string]string) ([]byte, error) {
	parts, err := SafetensorsParts(tensors, metadata)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// SafetensorsParts is EncodeSafetensors without the final copy: the header (length, JSON, padding)
// followed by each tensor's data in file order, aliasing the tensors. Their concatenation is the file;
// Store.PutParts writes it without building it in memory.
func SafetensorsParts(tensors []Tensor, metadata map[string]string) ([][]byte, error) {
	ts := append([]Tensor(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	heads := make([]TensorHeader, len(ts))
	for i, t := range ts {
		n, err := elements(t.DType, t.Shape)
		if err != nil {
			return nil, err
		}
		if int64(len(t.Data)) != n*int64(t.DType.Size()) {
			return nil, wrapf(ErrBadSpec, "tensor %q: %d bytes for %s%v", t.Name, len(t.Data), t.DType, t.Shape)
		}
		heads[i] = TensorHeader{Name: t.Name, DType: t.DType, Shape: t.Shape}
	}
	head, err := EncodeHeader(heads, metadata)
	if err != nil {
		return nil, err
	}
	parts := [][]byte{head}
	for _, t := range ts {
		parts = append(parts, t.Data)
	}
	return parts, nil
}

// TensorHeader is a tensor without its data: what the header says of it.
type TensorHeader struct {
	Name  string
	DType DType
	Shape []int
}

// Bytes is the size of the tensor's data.
func (t TensorHeader) Bytes() int64 {
	n, err := elements(t.DType, t.Shape)
	if err != nil {
		return -1
	}
	return n * int64(t.DType.Size())
}

// EncodeHeader returns the canonical header (8-byte length, sorted JSON, space padding to a multiple
// of 8) of a file whose tensors have these shapes, laid out in name order. It lets a writer stream the
// data of tensors whose shapes are known and write the header once the metadata is complete: the
// file is the header followed by each tensor's data in name order.
func EncodeHeader(tensors []TensorHeader, metadata map[string]string) ([]byte, error) {
	ts := append([]TensorHeader(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	header := make(map[string]any, len(ts)+1)
	if len(metadata) > 0 {
		header[metadataKey] = metadata
	}
	var off int64
	for i, t := range ts {
		if t.Name == "" || t.Name == metadataKey {
			return nil, wrapf(ErrBadSpec, "tensor name %q", t.Name)
		}
		if i > 0 && ts[i-1].Name == t.Name {
			return nil, wrapf(ErrBadSpec, "duplicate tensor %q", t.Name)
		}
		n, err := elements(t.DType, t.Shape)
		if err != nil {
			return nil, err
		}
		size := n * int64(t.DType.Size())
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = headerEntry{DType: t.DType, Shape: shape, DataOffsets: [2]int64{off, off + size}}
		off += size
	}
	var hb bytes.Buffer
	enc := json.NewEncoder(&hb)
	enc.SetEscapeHTML(false) // keep '<', '>', '&' literal so other writers' bytes match
	if err := enc.Encode(header); err != nil {
		return nil, err
	}
	h := bytes.TrimRight(hb.Bytes(), "\n")
	pad := (8 - len(h)%8) % 8
	head := make([]byte, 0, 8+len(h)+pad)
	head = binary.LittleEndian.AppendUint64(head, uint64(len(h)+pad))
	head = append(head, h...)
	head = append(head, bytes.Repeat([]byte{' '}, pad)...)
	return head, nil
}

func elements(d DType, shape []int) (int64, error) {
	if d.Size() == 0 {
		return 0, wrapf(ErrHeader, "unknown dtype %q", d)
	}
	if len(shape) > maxRank {
		return 0, wrapf(ErrHeader, "rank %d > %d", len(shape), maxRank)
	}
	n := int64(1)
	for _, s := range shape {
		if s < 0 {
			return 0, wrapf(ErrHeader, "negative dimension in %v", shape)
		}
		if s > 0 && n > math.MaxInt64/int64(s)/8 {
			return 0, wrapf(ErrTooLarge, "shape %v", shape)
		}
		n *= int64(s)
	}
	return n, nil
}

// File is a parsed safetensors file; tensor Data slices alias the input buffer.
type File struct {
	Tensors  map[string]Tensor
	Metadata map[string]string
}

// Names returns the tensor names in sorted order.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Tensors))
	for n := range f.Tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseSafetensors validates b strictly and returns its tensors: the header length fits the buffer
// and the cap, the header is one JSON object without duplicate keys, every dtype is known, every
// shape matches its byte range, the ranges do not overlap and cover the data section exactly.
func ParseSafetensors(b []byte) (*File, error) {
	if len(b) < 8 {
		return nil, wrapf(ErrHeader, "file of %d bytes has no header length", len(b))
	}
	n, err := headerLength(b[:8], int64(len(b)))
	if err != nil {
		return nil, err
	}
	data := b[8+n:]
	entries, meta, err := parseHeader(b[8:8+n], int64(len(data)))
	if err != nil {
		return nil, err
	}
	f := &File{Tensors: make(map[string]Tensor, len(entries)), Metadata: meta}
	for name, e := range entries {
		bgn, end := e.DataOffsets[0], e.DataOffsets[1]
		f.Tensors[name] = Tensor{Name: name, DType: e.DType, Shape: e.Shape, Data: data[bgn:end:end]}
	}
	return f, nil
}

// Header is a safetensors file's header: its tensors without their data, and the metadata.
type Header struct {
	Tensors  map[string]TensorHeader
	Metadata map[string]string
	Length   int64 // bytes before the data section: 8 + the JSON header with its padding
}

// ReadHeader reads and validates the header of a safetensors file of size bytes from r as strictly as
// ParseSafetensors, holding only the header (at most MaxHeaderBytes) in memory: the data section is
// checked against the header by its length alone and is not read.
func ReadHeader(r io.Reader, size int64) (*Header, error) {
	h, _, err := readHeader(r, size)
	return h, err
}

// CheckSafetensors is ReadHeader for callers that go on reading r: it returns how many bytes of r it
// consumed (8 plus the header length when that is valid), so a caller hashing r can go on from there.
func CheckSafetensors(r io.Reader, size int64) (int64, error) {
	_, n, err := readHeader(r, size)
	return n, err
}

func readHeader(r io.Reader, size int64) (*Header, int64, error) {
	if size < 8 {
		return nil, 0, wrapf(ErrHeader, "file of %d bytes has no header length", size)
	}
	var lb [8]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, 0, wrapf(ErrHeader, "reading header length: %v", err)
	}
	n, err := headerLength(lb[:], size)
	if err != nil {
		return nil, 8, err
	}
	hdr := make([]byte, n)
	if got, err := io.ReadFull(r, hdr); err != nil {
		return nil, 8 + int64(got), wrapf(ErrHeader, "reading header: %v", err)
	}
	entries, meta, err := parseHeader(hdr, size-8-n)
	if err != nil {
		return nil, 8 + n, err
	}
	h := &Header{Tensors: make(map[string]TensorHeader, len(entries)), Metadata: meta, Length: 8 + n}
	for name, e := range entries {
		h.Tensors[name] = TensorHeader{Name: name, DType: e.DType, Shape: e.Shape}
	}
	return h, 8 + n, nil
}

// headerLength decodes the 8-byte header length of a file of size bytes and checks it against the
// cap and the file.
func headerLength(lb []byte, size int64) (int64, error) {
	n := binary.LittleEndian.Uint64(lb)
	if n > MaxHeaderBytes {
		return 0, wrapf(ErrTooLarge, "header length %d > %d", n, MaxHeaderBytes)
	}
	if n > uint64(size-8) {
		return 0, wrapf(ErrHeader, "header length %d beyond file of %d bytes", n, size)
	}
	return int64(n), nil
}

// parseHeader validates the JSON header against a data section of dataLen bytes and returns the
// tensor entries (offsets checked) and the metadata.
func parseHeader(hdr []byte, dataLen int64) (map[string]headerEntry, map[string]string, error) {
	if len(hdr) == 0 || hdr[0] != '{' {
		return nil, nil, wrapf(ErrHeader, "header does not start with '{'")
	}
	raw, err := decodeObjectNoDup(hdr)
	if err != nil {
		return nil, nil, err
	}
	entries := make(map[string]headerEntry, len(raw))
	var meta map[string]string
	type span struct {
		name       string
		begin, end int64
	}
	var spans []span
	for name, msg := range raw {
		if name == metadataKey {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, wrapf(ErrHeader, "__metadata__ is not a string→string map: %v", err)
			}
			continue
		}
		if len(raw) > maxTensors+1 {
			return nil, nil, wrapf(ErrTooLarge, "%d tensors", len(raw))
		}
		dec := json.NewDecoder(bytes.NewReader(msg))
		dec.DisallowUnknownFields()
		var e headerEntry
		if err := dec.Decode(&e); err != nil {
			return nil, nil, wrapf(ErrHeader, "tensor %q: %v", name, err)
		}
		cnt, err := elements(e.DType, e.Shape)
		if err != nil {
			return nil, nil, wrapf(ErrHeader, "tensor %q: %v", name, err)
		}
		bgn, end := e.DataOffsets[0], e.DataOffsets[1]
		if bgn < 0 || end < bgn || end > dataLen {
			return nil, nil, wrapf(ErrHeader, "tensor %q: offsets [%d,%d] outside data of %d bytes", name, bgn, end, dataLen)
		}
		if end-bgn != cnt*int64(e.DType.Size()) {
			return nil, nil, wrapf(ErrHeader, "tensor %q: %d bytes for %s%v", name, end-bgn, e.DType, e.Shape)
		}
		spans = append(spans, span{name, bgn, end})
		entries[name] = e
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].end < spans[j].end
	})
	var pos int64
	for _, s := range spans {
		if s.begin != pos {
			return nil, nil, wrapf(ErrHeader, "tensor %q starts at %d, expected %d (gap or overlap)", s.name, s.begin, pos)
		}
		pos = s.end
	}
	if pos != dataLen {
		return nil, nil, wrapf(ErrHeader, "tensors cover %d of %d data bytes", pos, dataLen)
	}
	return entries, meta, nil
}

// decodeObjectNoDup decodes one JSON object into raw members, rejecting duplicate keys (which
// encoding/json would silently resolve to the last one) and trailing bytes other than spaces.
func decodeObjectNoDup(hdr []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, wrapf(ErrHeader, "header is not a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, wrapf(ErrHeader, "header JSON: %v", err)
		}
		k, ok := tok.(string)
		if !ok {
			return nil, wrapf(ErrHeader, "header key is not a string")
		}
		if _, dup := out[k]; dup {
			return nil, wrapf(ErrHeader, "duplicate key %q", k)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, wrapf(ErrHeader, "header JSON at %q: %v", k, err)
		}
		out[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, wrapf(ErrHeader, "header JSON: %v", err)
	}
	if strings.TrimRight(string(hdr[dec.InputOffset():]), " ") != "" {
		return nil, wrapf(ErrHeader, "bytes after the header object")
	}
	return out, nil
}
