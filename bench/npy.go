package bench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ErrNPY reports a .npy file this reader does not take (it reads what numpy.save writes for a C-order
// uint8 array, which is what the peers scripts dump).
var ErrNPY = errors.New("bench: unsupported .npy file")

var npyShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)

// parseNPY returns the shape and data of a C-order uint8 array in numpy's .npy format (versions 1–3).
func parseNPY(b []byte) ([]int, []byte, error) {
	if len(b) < 10 || !bytes.Equal(b[:6], []byte("\x93NUMPY")) {
		return nil, nil, fmt.Errorf("%w: no \\x93NUMPY magic", ErrNPY)
	}
	var hlen, off int
	switch b[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, nil, fmt.Errorf("%w: truncated header", ErrNPY)
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, nil, fmt.Errorf("%w: version %d", ErrNPY, b[6])
	}
	if off+hlen > len(b) {
		return nil, nil, fmt.Errorf("%w: header of %d bytes beyond the file", ErrNPY, hlen)
	}
	hdr := string(b[off : off+hlen])
	if !strings.Contains(hdr, "'descr': '|u1'") {
		return nil, nil, fmt.Errorf("%w: dtype is not uint8: %s", ErrNPY, strings.TrimSpace(hdr))
	}
	if !strings.Contains(hdr, "'fortran_order': False") {
		return nil, nil, fmt.Errorf("%w: Fortran order", ErrNPY)
	}
	m := npyShape.FindStringSubmatch(hdr)
	if m == nil {
		return nil, nil, fmt.Errorf("%w: no shape in %s", ErrNPY, strings.TrimSpace(hdr))
	}
	var shape []int
	n := 1
	for _, f := range strings.Split(m[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 || (d > 0 && n > len(b)/d) {
			return nil, nil, fmt.Errorf("%w: shape %q", ErrNPY, m[1])
		}
		shape = append(shape, d)
		n *= d
	}
	data := b[off+hlen:]
	if len(data) != n {
		return nil, nil, fmt.Errorf("%w: shape %v needs %d bytes, file has %d", ErrNPY, shape, n, len(data))
	}
	return shape, data, nil
}
