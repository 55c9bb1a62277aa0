package resize

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testenv"
	"github.com/framesweep/framesweep/rgb"
)

// tvCases are source → destination sizes: qwen-vl-utils' smart_resize outputs for the testdata and
// shared videos (up and down, one side only, both), odd sizes, and a strong reduction.
var tvCases = [][4]int{
	{320, 180, 448, 252}, {480, 270, 476, 280}, {128, 128, 224, 224}, {161, 121, 252, 196},
	{200, 200, 448, 448}, {568, 320, 644, 364}, {426, 240, 448, 252}, {1280, 720, 1008, 560},
	{1080, 720, 1008, 672}, {852, 480, 840, 476}, {1920, 1080, 1008, 560}, {640, 360, 644, 364},
	{300, 300, 200, 300}, {300, 300, 300, 250}, {300, 300, 70, 300}, {1, 1, 28, 28}, {7, 3, 56, 28},
	{800, 640, 812, 644}, {704, 576, 700, 588}, {1080, 1920, 560, 1008}, {960, 400, 980, 420},
}

// TestTorchVisionMatchesTorch compares TorchVision with torchvision's resize run by the oracle script
// (one Python process for every case): byte equality is required.
func TestTorchVisionMatchesTorch(t *testing.T) {
	py := testenv.NeedPython(t, "torch", "torchvision", "numpy")
	dir := t.TempDir()
	args := []string{filepath.Join("..", "testdata", "oracles", "torchvision_resize.py"), dir}
	for _, c := range tvCases {
		args = append(args, fmt.Sprintf("%d,%d,%d,%d", c[0], c[1], c[2], c[3]))
	}
	out, err := exec.Command(py, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, out)
	}
	t.Logf("oracle: %s", bytes.TrimSpace(out))
	for i, c := range tvCases {
		in, err1 := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.in", i)))
		want, err2 := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.out", i)))
		if err1 != nil || err2 != nil {
			t.Fatalf("case %v: %v %v", c, err1, err2)
		}
		r, err := NewTorchVision(c[0], c[1], c[2], c[3])
		if err != nil {
			t.Fatal(err)
		}
		dst := rgb.New(c[2], c[3])
		if err := r.Resize(dst, &rgb.Image{W: c[0], H: c[1], Stride: 3 * c[0], Pix: in}); err != nil {
			t.Fatal(err)
		}
		diff, maxd := 0, 0
		for k := range want {
			d := int(want[k]) - int(dst.Pix[k])
			if d < 0 {
				d = -d
			}
			if d != 0 {
				diff++
				maxd = max(maxd, d)
			}
		}
		if diff != 0 {
			t.Errorf("%dx%d -> %dx%d: %d of %d bytes differ from torchvision (max %d)", c[0], c[1], c[2], c[3], diff, len(want), maxd)
		}
	}
}

func TestTorchVisionErrors(t *testing.T) {
	if _, err := NewTorchVision(0, 10, 10, 10); err == nil {
		t.Fatal("0 width accepted")
	}
	r, err := NewTorchVision(10, 10, 5, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Resize(rgb.New(5, 5), rgb.New(11, 10)); err == nil {
		t.Fatal("wrong source size accepted")
	}
	// Same size: an exact copy.
	r, _ = NewTorchVision(4, 3, 4, 3)
	src := rgb.New(4, 3)
	for i := range src.Pix {
		src.Pix[i] = byte(i * 7)
	}
	dst := rgb.New(4, 3)
	if err := r.Resize(dst, src); err != nil || !bytes.Equal(dst.Pix, src.Pix) {
		t.Fatalf("identity resize changed the image: %v", err)
	}
}
