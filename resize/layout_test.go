package resize

import (
	"bytes"
	"testing"

	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
)

// TestAppendLayoutPad: a padded layout is the resized image at the top left of the canvas, every
// other byte 0; an image larger than the canvas is refused.
func TestAppendLayoutPad(t *testing.T) {
	src := rgb.New(30, 10)
	for i := range src.Pix {
		src.Pix[i] = byte(1 + i%250)
	}
	l, err := geom.PadRight{W: 8, H: 4}.Layout(src.W, src.H, 1) // 4·3 = 12 > 8: width 8, no padding
	if err != nil || l.Resize != (geom.Size{W: 8, H: 4}) {
		t.Fatalf("%+v %v", l, err)
	}
	l, err = geom.PadRight{W: 20, H: 4}.Layout(src.W, src.H, 1) // width ⌈4·3⌉ = 12 of 20
	if err != nil || l.Resize != (geom.Size{W: 12, H: 4}) {
		t.Fatalf("%+v %v", l, err)
	}
	imgs, err := ApplyLayout(CVLinear, l, src)
	if err != nil || len(imgs) != 1 || imgs[0].W != 20 || imgs[0].H != 4 {
		t.Fatalf("%v %v", imgs, err)
	}
	resized, err := Resize(CVLinear, src, 12, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := imgs[0]
	for y := 0; y < 4; y++ {
		row := got.Row(y)
		if !bytes.Equal(row[:36], resized.Row(y)) || !bytes.Equal(row[36:], make([]byte, 24)) {
			t.Fatalf("row %d: %v, want the resized row then zeros", y, row)
		}
	}
	if _, err := AppendLayout(nil, geom.Layout{Resize: geom.Size{W: 12, H: 4}, Pad: &geom.Size{W: 10, H: 4}}, resized, nil); err == nil {
		t.Error("an image wider than its canvas was padded")
	}
}
