package native

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/rgb"
)

var testNorms = map[string]Norm{"rescale": NormRescale, "clip": NormCLIP, "imagenet": NormImageNet, "siglip": NormSigLIP}

func TestTensorLevelsAgree(t *testing.T) {
	skipNoFastLevels(t)
	r := rand.New(rand.NewPCG(21, 22))
	for _, s := range [][3]int{{1, 1, 0}, {7, 3, 2}, {8, 8, 0}, {9, 5, 1}, {448, 448, 0}, {101, 37, 4}} {
		src := randImage(r, s[0], s[1], s[2])
		n := 3 * s[0] * s[1]
		for name, nm := range testNorms {
			for _, lay := range []Layout{NHWC, NCHW} {
				restore := SetLevel(Generic)
				w32, w16 := make([]float32, n), make([]uint16, n)
				if err := ToFloat32(w32, src, nm, lay); err != nil {
					t.Fatal(err)
				}
				if err := ToFloat16(w16, src, nm, lay); err != nil {
					t.Fatal(err)
				}
				restore()
				for _, l := range fastLevels() {
					restore := SetLevel(l)
					g32, g16 := make([]float32, n), make([]uint16, n)
					_ = ToFloat32(g32, src, nm, lay)
					_ = ToFloat16(g16, src, nm, lay)
					restore()
					for i := range w32 {
						if math.Float32bits(g32[i]) != math.Float32bits(w32[i]) || g16[i] != w16[i] {
							t.Fatalf("%v %v %s layout %d element %d: f32 %v vs %v, f16 %#x vs %#x", l, s, name, lay, i, g32[i], w32[i], g16[i], w16[i])
						}
					}
				}
			}
		}
	}
}

func TestTensorLayoutAndValues(t *testing.T) {
	src := randImage(rand.New(rand.NewPCG(1, 2)), 3, 2, 0)
	for _, l := range Supported() {
		restore := SetLevel(l)
		nhwc, nchw := make([]float32, 18), make([]float32, 18)
		_ = ToFloat32(nhwc, src, NormCLIP, NHWC)
		_ = ToFloat32(nchw, src, NormCLIP, NCHW)
		restore()
		for y := 0; y < 2; y++ {
			for x := 0; x < 3; x++ {
				for c := 0; c < 3; c++ {
					v := src.Pix[y*src.Stride+3*x+c]
					// HF: float32(float64(v) * (1/255)), then (x - mean) / std in float32
					want := (float32(float64(v)/255) - NormCLIP.Mean[c]) / NormCLIP.Std[c]
					if a, b := nhwc[(y*3+x)*3+c], nchw[c*6+y*3+x]; a != want || b != want {
						t.Fatalf("%v (%d,%d,%d): NHWC %v NCHW %v want %v", l, x, y, c, a, b, want)
					}
				}
			}
		}
	}
}

// TestTensorMatchesNumPy runs transformers' image_transforms.rescale and normalize (transcribed: rescale
// multiplies in float64 and casts to float32, normalize works in float32) on real NumPy for every byte
// value and each preset, and requires bit equality at every level.
func TestTensorMatchesNumPy(t *testing.T) {
	py := testenv.NeedPython(t, "numpy")
	names := []string{"rescale", "clip", "imagenet", "siglip"}
	var script strings.Builder
	script.WriteString("import sys, numpy as np\nv = np.arange(256, dtype=np.uint8)\n")
	for _, name := range names {
		n := testNorms[name]
		fmt.Fprintf(&script, "x = (v.astype(np.float64) * %s).astype(np.float32)\n", strconv.FormatFloat(n.Scale, 'g', -1, 64))
		for c := 0; c < 3; c++ {
			fmt.Fprintf(&script, "y = (x - np.array(%s, dtype=np.float32)) / np.array(%s, dtype=np.float32)\nsys.stdout.buffer.write(y.astype('<f4').tobytes())\n",
				strconv.FormatFloat(float64(n.Mean[c]), 'g', -1, 32), strconv.FormatFloat(float64(n.Std[c]), 'g', -1, 32))
		}
	}
	out, err := exec.Command(py, "-c", script.String()).Output()
	if err != nil {
		t.Fatalf("numpy: %v", err)
	}
	if len(out) != len(names)*3*256*4 {
		t.Fatalf("numpy wrote %d bytes", len(out))
	}
	// One 256×1 image per channel value sweep: pixel v has every channel = v.
	src := rgb.New(256, 1)
	for v := 0; v < 256; v++ {
		src.Pix[3*v], src.Pix[3*v+1], src.Pix[3*v+2] = byte(v), byte(v), byte(v)
	}
	for k, name := range names {
		for _, l := range Supported() {
			restore := SetLevel(l)
			got := make([]float32, 3*256)
			err := ToFloat32(got, src, testNorms[name], NCHW)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			for c := 0; c < 3; c++ {
				for v := 0; v < 256; v++ {
					off := ((k*3+c)*256 + v) * 4
					want := math.Float32frombits(binary.LittleEndian.Uint32(out[off:]))
					if g := got[c*256+v]; math.Float32bits(g) != math.Float32bits(want) {
						t.Fatalf("%s %v channel %d value %d: %v, numpy %v", name, l, c, v, g, want)
					}
				}
			}
		}
	}
}

func TestFloat16Bits(t *testing.T) {
	cases := []struct {
		f    float32
		want uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff},
		{65519.99, 0x7bff}, {65520, 0x7c00}, {float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{0.1, 0x2e66}, {1.0 / 3, 0x3555}, {0x1p-14, 0x0400}, {0x1p-24, 0x0001}, {0x1p-25, 0},
		{0x1.8p-24, 0x0002}, {0x1p-26, 0}, {0x1.ff8p-15, 0x03ff}, {0x1.ffap-15, 0x03ff}, {0x1.ffcp-15, 0x0400}, {1 + 0x1p-11, 0x3c00},
		{1 + 0x3p-11, 0x3c02}, {1e-45, 0},
	}
	for _, c := range cases {
		if got := Float16Bits(c.f); got != c.want {
			t.Errorf("Float16Bits(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	if h := Float16Bits(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("NaN -> %#04x, not a NaN", h)
	}
}

// TestFloat16Hardware compares the Go conversion with F16C (vcvtps2ph, round to nearest even) on random
// bit patterns and on every float32 near the half range's edges.
func TestFloat16Hardware(t *testing.T) {
	if Best() == Generic {
		t.Skip("no F16C fast path in this build")
	}
	r := rand.New(rand.NewPCG(31, 32))
	var src []float32
	for i := 0; i < 1<<18; i++ {
		src = append(src, math.Float32frombits(r.Uint32()))
	}
	for b := uint32(0x33000000 - 4096); b < 0x33000000+4096; b++ { // around 2^-25
		src = append(src, math.Float32frombits(b), math.Float32frombits(b|0x80000000))
	}
	for b := uint32(0x477fe000 - 4096); b < 0x477fe000+4096; b++ { // around 65504..65520
		src = append(src, math.Float32frombits(b))
	}
	hw, sw := make([]uint16, len(src)), make([]uint16, len(src))
	restore := SetLevel(Best())
	_ = Float16s(hw, src)
	restore()
	float16sGeneric(sw, src)
	bad := 0
	for i := range src {
		isNaN := src[i] != src[i]
		if hw[i] != sw[i] && !(isNaN && sw[i]&0x7c00 == 0x7c00 && sw[i]&0x3ff != 0) {
			if bad++; bad < 5 {
				t.Errorf("%g (%#08x): F16C %#04x, Go %#04x", src[i], math.Float32bits(src[i]), hw[i], sw[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d conversions differ", bad, len(src))
	}
}

func TestTensorErrors(t *testing.T) {
	src := randImage(rand.New(rand.NewPCG(1, 1)), 4, 4, 0)
	if err := ToFloat32(make([]float32, 47), src, NormCLIP, NHWC); !errors.Is(err, ErrShortBuffer) {
		t.Errorf("short dst: %v", err)
	}
	if err := ToFloat16(make([]uint16, 48), src, Norm{Scale: 1}, NCHW); !errors.Is(err, ErrBadArgument) {
		t.Errorf("zero std: %v", err)
	}
	if err := ToFloat32(make([]float32, 48), src, NormCLIP, Layout(7)); !errors.Is(err, ErrBadArgument) {
		t.Errorf("bad layout: %v", err)
	}
}

func TestLookupNorm(t *testing.T) {
	img := rgb.New(1, 1)
	copy(img.Pix, []byte{0, 128, 255})
	n, err := LookupNorm("imagenet")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 3)
	if err := ToFloat32(got, img, n, NHWC); err != nil {
		t.Fatal(err)
	}
	want := []float32{(0 - 0.485) / 0.229, (128.0/255 - 0.456) / 0.224, (1 - 0.406) / 0.225}
	for c := range want {
		if d := got[c] - want[c]; d > 1e-6 || d < -1e-6 {
			t.Errorf("channel %d = %v want %v", c, got[c], want[c])
		}
	}
	if _, err := LookupNorm("nope"); !errors.Is(err, ErrBadArgument) {
		t.Errorf("unknown norm: %v", err)
	}
	if len(NormNames()) != 4 {
		t.Errorf("NormNames = %v", NormNames())
	}
}
