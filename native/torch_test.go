package native

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/framesweep/framesweep/rgb"
)

func torchAt(t testing.TB, l Level, src *rgb.Image, w, h int) *rgb.Image {
	t.Helper()
	p, err := NewTorchPlan(src.W, src.H, w, h)
	if err != nil {
		t.Fatal(err)
	}
	dst := rgb.New(w, h)
	if err := p.ResizeLevel(l, dst, src); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestTorchLevelsAgree: the C kernels compute every element with the reference's float32 operations in
// the same order, so the bytes are equal at every level (both passes, width only, height only, copy).
func TestTorchLevelsAgree(t *testing.T) {
	levels := torchLevels(t)
	r := rand.New(rand.NewPCG(41, 42))
	shapes := [][4]int{{1, 1, 1, 1}, {1, 1, 4, 3}, {9, 7, 2, 1}, {64, 48, 17, 9}, {50, 50, 50, 20}, {50, 50, 20, 50},
		{37, 23, 100, 80}, {33, 17, 33, 17}, {640, 360, 448, 448}, {13, 1, 5, 1}}
	if !raceEnabled {
		shapes = append(shapes, [4]int{1920, 1080, 224, 224})
	}
	for range 20 { // random sizes: up and down, one side only, many taps and few
		shapes = append(shapes, [4]int{1 + r.IntN(300), 1 + r.IntN(300), 1 + r.IntN(300), 1 + r.IntN(300)})
	}
	for _, s := range shapes {
		for _, pad := range []int{0, 5} {
			src := randImage(r, s[0], s[1], pad)
			want := torchAt(t, Generic, src, s[2], s[3])
			for _, l := range levels {
				if got := torchAt(t, l, src, s[2], s[3]); !bytes.Equal(got.Pix, want.Pix) {
					t.Errorf("%v %v pad=%d: %s", l, s, pad, firstDiff(got, want))
				}
			}
		}
	}
}

func FuzzTorch(f *testing.F) {
	f.Add(uint16(7), uint16(5), uint16(3), uint16(9), uint64(1))
	levels := torchLevels(f)
	f.Fuzz(func(t *testing.T, sw, sh, dw, dh uint16, seed uint64) {
		w, h, ow, oh := int(sw%200)+1, int(sh%200)+1, int(dw%200)+1, int(dh%200)+1
		src := randImage(rand.New(rand.NewPCG(seed, 3)), w, h, int(seed%4))
		want := torchAt(t, Generic, src, ow, oh)
		for _, l := range levels {
			if got := torchAt(t, l, src, ow, oh); !bytes.Equal(got.Pix, want.Pix) {
				t.Fatalf("%v %dx%d->%dx%d: %s", l, w, h, ow, oh, firstDiff(got, want))
			}
		}
	})
}

func TestTorchErrors(t *testing.T) {
	if _, err := NewTorchPlan(0, 1, 1, 1); !errors.Is(err, ErrBadSize) {
		t.Errorf("zero width: %v", err)
	}
	p, _ := NewTorchPlan(8, 8, 4, 4)
	if err := p.Resize(rgb.New(4, 4), rgb.New(8, 9)); !errors.Is(err, ErrBadSize) {
		t.Errorf("wrong source: %v", err)
	}
}

func TestTorchRound(t *testing.T) {
	for _, c := range []struct {
		v    float32
		want byte
	}{{-3, 0}, {0.5, 0}, {1.5, 2}, {2.5, 2}, {254.5, 254}, {254.6, 255}, {300, 255}, {127.49, 127}} {
		if got := TorchRound(c.v); got != c.want {
			t.Errorf("TorchRound(%v) = %d, want %d", c.v, got, c.want)
		}
	}
}
