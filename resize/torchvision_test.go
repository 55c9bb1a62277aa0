package resize

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/native"
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

// torchOracle runs torchvision's resize (testdata/oracles/torchvision_resize.py, one Python process
// for every case) and returns each case's source and torch's output.
func torchOracle(t *testing.T, cases [][4]int) (in, want [][]byte) {
	py := testenv.NeedPython(t, "torch", "torchvision", "numpy")
	dir := t.TempDir()
	args := []string{filepath.Join("..", "testdata", "oracles", "torchvision_resize.py"), dir}
	for _, c := range cases {
		args = append(args, fmt.Sprintf("%d,%d,%d,%d", c[0], c[1], c[2], c[3]))
	}
	out, err := exec.Command(py, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, out)
	}
	t.Logf("oracle: %s", bytes.TrimSpace(out))
	for i, c := range cases {
		a, err1 := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.in", i)))
		b, err2 := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.out", i)))
		if err1 != nil || err2 != nil {
			t.Fatalf("case %v: %v %v", c, err1, err2)
		}
		in, want = append(in, a), append(want, b)
	}
	return in, want
}

// diffBytes counts the bytes of got that differ from want, and the largest difference.
func diffBytes(got, want []byte) (n, maxd int) {
	for k := range want {
		d := int(want[k]) - int(got[k])
		if d < 0 {
			d = -d
		}
		if d != 0 {
			n++
			maxd = max(maxd, d)
		}
	}
	return n, maxd
}

// TestTorchBicubicMatchesTorch compares the torch-bicubic kernel at every dispatch level with
// torchvision's resize run by the oracle script: byte equality is required. (native's
// TestTorchLevelsAgree and FuzzTorch hold every level to the Go reference on other sizes.)
func TestTorchBicubicMatchesTorch(t *testing.T) {
	ins, wants := torchOracle(t, tvCases)
	kernelDiff := 0
	for i, c := range tvCases {
		src := &rgb.Image{W: c[0], H: c[1], Stride: 3 * c[0], Pix: ins[i]}
		for _, l := range native.Supported() {
			restore := native.SetLevel(l)
			got, err := Resize(TorchBicubic, src, c[2], c[3])
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if n, maxd := diffBytes(got.Pix, wants[i]); n != 0 {
				kernelDiff += n
				t.Errorf("%s (%v) %dx%d -> %dx%d: %d of %d bytes differ from torchvision (max %d)", TorchBicubic, l, c[0], c[1], c[2], c[3], n, len(wants[i]), maxd)
			}
		}
	}
	t.Logf("%d cases; %s at levels %v: %d bytes differ in all", len(tvCases), TorchBicubic, native.Supported(), kernelDiff)
}

// TestTorchBicubicIdentity: the same size is an exact copy at every level.
func TestTorchBicubicIdentity(t *testing.T) {
	src := rgb.New(4, 3)
	for i := range src.Pix {
		src.Pix[i] = byte(i * 7)
	}
	for _, l := range native.Supported() {
		restore := native.SetLevel(l)
		got, err := Resize(TorchBicubic, src, 4, 3)
		restore()
		if err != nil || !bytes.Equal(got.Pix, src.Pix) {
			t.Fatalf("%v: identity resize changed the image: %v", l, err)
		}
	}
}
