package serve

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/cache"
)

// npyHeader is the header of a NumPy .npy file (format version 1.0) holding a C-order array of shape
// and dtype; the data follows it unchanged (safetensors and .npy are both little-endian C order).
// The header is padded with spaces to a multiple of 64 bytes and ends in '\n', as numpy writes it.
func npyHeader(shape []int, dt cache.DType) ([]byte, error) {
	descr := map[cache.DType]string{cache.U8: "|u1", cache.F16: "<f2", cache.F32: "<f4", cache.I64: "<i8"}[dt]
	if descr == "" {
		return nil, fmt.Errorf("npy: dtype %q", dt)
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
	const magic = "\x93NUMPY\x01\x00"
	total := len(magic) + 2 + len(dict) + 1
	pad := (64 - total%64) % 64
	if len(dict)+pad+1 > 0xffff {
		return nil, fmt.Errorf("npy: header of %d bytes", len(dict))
	}
	b := make([]byte, 0, total+pad)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)+pad+1))
	b = append(b, dict...)
	b = append(b, strings.Repeat(" ", pad)...)
	return append(b, '\n'), nil
}
