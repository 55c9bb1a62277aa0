package rgb

import "testing"

func TestNRGBA(t *testing.T) {
	// A padded stride must not leak into the copy.
	m := &Image{W: 2, H: 2, Stride: 9, Pix: []byte{1, 2, 3, 4, 5, 6, 99, 99, 99, 7, 8, 9, 10, 11, 12}}
	n := m.NRGBA()
	want := []byte{1, 2, 3, 255, 4, 5, 6, 255, 7, 8, 9, 255, 10, 11, 12, 255}
	if string(n.Pix) != string(want) {
		t.Fatalf("NRGBA pix = %v, want %v", n.Pix, want)
	}
	if c := m.Clone(); c.Stride != 6 || string(c.Packed()) != string(m.Packed()) {
		t.Fatalf("Clone = %+v", c)
	}
}
