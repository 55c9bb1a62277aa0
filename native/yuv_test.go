package native

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testenv"
	"github.com/framesweep/framesweep/rgb"
)

func randYUV(r *rand.Rand, w, h, pad int) *YUV420 {
	cw, ch := (w+1)/2, (h+1)/2
	f := &YUV420{W: w, H: h, YStride: w + pad, UStride: cw + pad, VStride: cw + pad}
	f.Y = make([]byte, f.YStride*h)
	f.U = make([]byte, f.UStride*ch)
	f.V = make([]byte, f.VStride*ch)
	for _, p := range [][]byte{f.Y, f.U, f.V} {
		for i := range p {
			p[i] = byte(r.IntN(256))
		}
	}
	return f
}

func yuvAt(t testing.TB, l Level, f *YUV420) *rgb.Image {
	t.Helper()
	defer SetLevel(l)()
	dst := rgb.New(f.W, f.H)
	if err := YUV420ToRGB(dst, f); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestYUVLevelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][3]int{{1, 1, 0}, {15, 3, 0}, {16, 2, 0}, {17, 9, 3}, {33, 31, 1}, {640, 360, 0}, {101, 77, 5}} {
		f := randYUV(r, s[0], s[1], s[2])
		want := yuvAt(t, Generic, f)
		for _, l := range Supported()[1:] {
			if got := yuvAt(t, l, f); !bytes.Equal(got.Pix, want.Pix) {
				t.Errorf("%v %v: %s", l, s, firstDiff(got, want))
			}
		}
	}
}

// TestYUVFormula: the fixed-point formula stays within 1 level of exact BT.601 limited-range math
// (R = 1.164(Y−16) + 1.596(V−128), …) on every Y, U, V combination sampled.
func TestYUVFormula(t *testing.T) {
	worst := 0.0
	for y := 0; y < 256; y += 3 {
		for u := 0; u < 256; u += 5 {
			for v := 0; v < 256; v += 7 {
				f := &YUV420{W: 1, H: 1, Y: []byte{byte(y)}, U: []byte{byte(u)}, V: []byte{byte(v)}, YStride: 1, UStride: 1, VStride: 1}
				got := yuvAt(t, Generic, f).Pix
				c, d, e := float64(y-16)*255/219, float64(u-128)*255/224, float64(v-128)*255/224
				want := []float64{c + 1.402*e, c - 0.344136*d - 0.714136*e, c + 1.772*d}
				for i := range want {
					w := math.Min(math.Max(want[i], 0), 255)
					worst = math.Max(worst, math.Abs(float64(got[i])-w))
				}
			}
		}
	}
	if worst > 1.5 {
		t.Errorf("fixed-point YUV differs from exact BT.601 by up to %.2f levels", worst)
	}
	t.Logf("max |fixed-point − exact BT.601| = %.3f levels", worst)
}

// TestYUVAgainstFFmpeg documents how far the fixed-point formula is from swscale's default conversion
// (`ffmpeg -pix_fmt rgb24`, what decode/ matches bit for bit) on a real frame.
func TestYUVAgainstFFmpeg(t *testing.T) {
	v := filepath.Join("..", "..", "shared", "testdata", "videos", "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	testenv.NeedFile(t, v)
	testenv.Need(t, "ffmpeg")
	dir := t.TempDir()
	raw := func(pixfmt, name string) []byte {
		out := filepath.Join(dir, name)
		cmd := exec.Command("ffmpeg", "-v", "error", "-i", v, "-vf", "select=eq(n\\,20)", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", pixfmt, out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v %s", err, b)
		}
		b, _ := os.ReadFile(out)
		return b
	}
	yuv, want := raw("yuv420p", "f.yuv"), raw("rgb24", "f.rgb")
	const w, h = 800, 640
	if len(yuv) != w*h*3/2 || len(want) != w*h*3 {
		t.Fatalf("unexpected sizes %d %d", len(yuv), len(want))
	}
	f := &YUV420{W: w, H: h, Y: yuv[:w*h], U: yuv[w*h : w*h*5/4], V: yuv[w*h*5/4:], YStride: w, UStride: w / 2, VStride: w / 2}
	got := yuvAt(t, Best(), f)
	worst, sum := 0, 0
	for i := range want {
		d := int(got.Pix[i]) - int(want[i])
		if d < 0 {
			d = -d
		}
		worst, sum = max(worst, d), sum+d
	}
	t.Logf("vs ffmpeg rgb24: max diff %d, mean %.3f levels", worst, float64(sum)/float64(len(want)))
	if float64(sum)/float64(len(want)) > 3 {
		t.Errorf("mean difference %.3f to ffmpeg's conversion is larger than expected", float64(sum)/float64(len(want)))
	}
}

func TestYUVErrors(t *testing.T) {
	f := randYUV(rand.New(rand.NewPCG(1, 1)), 8, 8, 0)
	if err := YUV420ToRGB(rgb.New(8, 7), f); !errors.Is(err, ErrBadSize) {
		t.Errorf("size mismatch: %v", err)
	}
	f.U = f.U[:3]
	if err := YUV420ToRGB(rgb.New(8, 8), f); !errors.Is(err, ErrShortBuffer) {
		t.Errorf("short chroma: %v", err)
	}
	if err := YUV420ToRGB(rgb.New(8, 8), &YUV420{W: 8, H: 8}); !errors.Is(err, ErrBadSize) {
		t.Errorf("zero strides: %v", err)
	}
}
