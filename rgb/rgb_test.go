package rgb

import (
	"math"
	"testing"
)

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

func TestPSNR(t *testing.T) {
	a, b := New(2, 1), New(2, 1)
	if db, ok := PSNR(a, b); !ok || !math.IsInf(db, 1) {
		t.Fatalf("identical: %v %v", db, ok)
	}
	b.Pix[0] = 255 // one of 6 samples off by 255: MSE = 255²/6, PSNR = 10·log10(6)
	if db, ok := PSNR(a, b); !ok || math.Abs(db-10*math.Log10(6)) > 1e-12 {
		t.Fatalf("PSNR = %v, want %v", db, 10*math.Log10(6))
	}
	if _, ok := PSNR(a, New(1, 1)); ok {
		t.Fatal("different sizes compared")
	}
}
