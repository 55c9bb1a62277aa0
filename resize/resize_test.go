package resize

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/internal/piloracle"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/rgb"
)

func randImage(r *rand.Rand, w, h int) *rgb.Image {
	m := rgb.New(w, h)
	for i := range m.Pix {
		m.Pix[i] = byte(r.IntN(256))
	}
	return m
}

func gradient(w, h int) *rgb.Image {
	m := rgb.New(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*m.Stride + 3*x
			m.Pix[i], m.Pix[i+1], m.Pix[i+2] = byte(x*255/max(w-1, 1)), byte(y*255/max(h-1, 1)), byte((x+y)%256)
		}
	}
	return m
}

func constant(w, h int, c [3]byte) *rgb.Image {
	m := rgb.New(w, h)
	for i := range m.Pix {
		m.Pix[i] = c[i%3]
	}
	return m
}

func must(t testing.TB, kernel string, src *rgb.Image, w, h int) *rgb.Image {
	t.Helper()
	out, err := Resize(kernel, src, w, h)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPILKernelsMatchPillow checks the Resizer path (cache, interface) against Pillow on a real frame
// and a random image at every dispatch level; native/ has the exhaustive parity tests.
func TestPILKernelsMatchPillow(t *testing.T) {
	testenv.NeedPython(t, "PIL")
	testenv.Need(t, "ffmpeg")
	dir := t.TempDir()
	frame, err := piloracle.Frame(dir, testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4"), 12, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	srcs := []*rgb.Image{frame, randImage(rand.New(rand.NewPCG(1, 1)), 97, 61)}
	var cases []piloracle.Case
	var kernels []string
	for _, s := range srcs {
		for _, d := range [][2]int{{448, 448}, {224, 224}, {1008, 560}, {s.W, 5}} {
			for _, k := range []string{PILBicubic, PILBilinear, PILLanczos} {
				cases = append(cases, piloracle.Case{Src: s, OutW: d[0], OutH: d[1], Filter: k[4:]})
				kernels = append(kernels, k)
			}
		}
	}
	want, err := piloracle.Resize(dir, cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range native.Supported() {
		restore := native.SetLevel(l)
		for i, c := range cases {
			if got := must(t, kernels[i], c.Src, c.OutW, c.OutH); !bytes.Equal(got.Pix, want[i].Pix) {
				t.Errorf("level=%v %s %dx%d->%dx%d differs from Pillow", l, kernels[i], c.Src.W, c.Src.H, c.OutW, c.OutH)
			}
		}
		restore()
	}
}

// torchRef64 is an independent float64 implementation of the antialiased bicubic (exact weights,
// float64 sums) that the float32 kernel must match within ±1 level.
func torchRef64(src *rgb.Image, dw, dh int) *rgb.Image {
	weights := func(in, out int) ([]int, [][]float64) {
		scale := float64(in) / float64(out)
		support, inv := 2.0, 1.0
		if scale >= 1 {
			support, inv = 2*scale, 1/scale
		}
		starts, ws := make([]int, out), make([][]float64, out)
		for i := 0; i < out; i++ {
			c := scale * (float64(i) + 0.5)
			lo := max(int(c-support+0.5), 0)
			hi := min(int(c+support+0.5), in)
			var w []float64
			sum := 0.0
			for j := lo; j < hi; j++ {
				x := math.Abs((float64(j) - c + 0.5) * inv)
				v := 0.0
				if x < 1 {
					v = (1.5*x-2.5)*x*x + 1
				} else if x < 2 {
					v = ((-0.5*x+2.5)*x-4)*x + 2
				}
				w = append(w, v)
				sum += v
			}
			for j := range w {
				w[j] /= sum
			}
			starts[i], ws[i] = lo, w
		}
		return starts, ws
	}
	f := make([]float64, 3*src.W*src.H)
	for y := 0; y < src.H; y++ {
		for i, v := range src.Row(y) {
			f[3*src.W*y+i] = float64(v)
		}
	}
	w := src.W
	if dw != src.W {
		st, ws := weights(src.W, dw)
		t := make([]float64, 3*dw*src.H)
		for y := 0; y < src.H; y++ {
			for x := 0; x < dw; x++ {
				for c := 0; c < 3; c++ {
					s := 0.0
					for j, k := range ws[x] {
						s += f[3*(w*y+st[x]+j)+c] * k
					}
					t[3*(dw*y+x)+c] = s
				}
			}
		}
		f, w = t, dw
	}
	if dh != src.H {
		st, ws := weights(src.H, dh)
		t := make([]float64, 3*w*dh)
		for y := 0; y < dh; y++ {
			for i := 0; i < 3*w; i++ {
				s := 0.0
				for j, k := range ws[y] {
					s += f[3*w*(st[y]+j)+i] * k
				}
				t[3*w*y+i] = s
			}
		}
		f = t
	}
	out := rgb.New(dw, dh)
	for i, v := range f {
		out.Pix[i] = byte(math.RoundToEven(math.Min(math.Max(v, 0), 255)))
	}
	return out
}

func TestTorchBicubicReference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	for _, c := range [][4]int{{64, 48, 17, 9}, {37, 23, 100, 80}, {320, 180, 112, 112}, {50, 50, 50, 20}, {50, 50, 20, 50}, {1, 1, 3, 2}} {
		for _, src := range []*rgb.Image{randImage(r, c[0], c[1]), gradient(c[0], c[1])} {
			got := must(t, TorchBicubic, src, c[2], c[3])
			want := torchRef64(src, c[2], c[3])
			exact, worst := 0, 0
			for i := range got.Pix {
				d := int(got.Pix[i]) - int(want.Pix[i])
				if d == 0 {
					exact++
				}
				worst = max(worst, d, -d)
			}
			if worst > 1 {
				t.Errorf("%v: differs from the float64 reference by %d levels (tolerance 1)", c, worst)
			}
			if exact*100 < len(got.Pix)*99 {
				t.Errorf("%v: only %d of %d values equal the float64 reference", c, exact, len(got.Pix))
			}
		}
	}
}

// TestKernelProperties: every kernel keeps a constant image constant, copies on an identity-size resize,
// and keeps a horizontal ramp non-decreasing after downscaling.
func TestKernelProperties(t *testing.T) {
	for _, k := range Kernels() {
		t.Run(k, func(t *testing.T) {
			c := constant(123, 77, [3]byte{10, 128, 250})
			out := must(t, k, c, 45, 200)
			for i, v := range out.Pix {
				if v != c.Pix[i%3] {
					t.Fatalf("constant image changed: byte %d = %d, want %d", i, v, c.Pix[i%3])
				}
			}
			// An unchanged size is a copy with every kernel (Pillow, torchvision and cv::resize
			// short-circuit it), even for noise.
			noise := randImage(rand.New(rand.NewPCG(7, 7)), 61, 37)
			if same := must(t, k, noise, 61, 37); !bytes.Equal(same.Pix, noise.Pix) {
				t.Fatal("identity-size resize is not a copy")
			}
			g := gradient(200, 100)
			small := must(t, k, g, 57, 31)
			for y := 0; y < small.H; y++ {
				row := small.Row(y)
				for x := 1; x < small.W; x++ {
					if row[3*x] < row[3*(x-1)] {
						t.Fatalf("ramp not monotonic at x=%d y=%d: %d < %d", x, y, row[3*x], row[3*(x-1)])
					}
				}
			}
		})
	}
}

// TestCVAreaIntegerScale: INTER_AREA at an exact 2× downscale is the 2×2 mean (OpenCV rounds it).
func TestCVAreaIntegerScale(t *testing.T) {
	src := randImage(rand.New(rand.NewPCG(4, 4)), 64, 32)
	out := must(t, CVArea, src, 32, 16)
	for y := 0; y < 16; y++ {
		for i := 0; i < 96; i++ {
			x, c := i/3, i%3
			s := 0
			for dy := 0; dy < 2; dy++ {
				for dx := 0; dx < 2; dx++ {
					s += int(src.Pix[(2*y+dy)*src.Stride+3*(2*x+dx)+c])
				}
			}
			if d := int(out.Row(y)[i]) - (s+2)/4; d > 1 || d < -1 {
				t.Fatalf("(%d,%d,%d): %d, mean %d", x, y, c, out.Row(y)[i], (s+2)/4)
			}
		}
	}
}

func TestFanOutMatchesResize(t *testing.T) {
	src := randImage(rand.New(rand.NewPCG(5, 5)), 160, 90)
	var targets []Target
	for i, k := range Kernels() {
		targets = append(targets, Target{W: 40 + i, H: 30 + 2*i, Kernel: k}, Target{W: 200, H: 100, Kernel: k})
	}
	targets = append(targets, Target{W: 64, H: 64}) // default kernel
	outs, err := FanOut(src, targets)
	if err != nil {
		t.Fatal(err)
	}
	for i, tg := range targets {
		k := tg.Kernel
		if k == "" {
			k = DefaultKernel
		}
		if want := must(t, k, src, tg.W, tg.H); !bytes.Equal(outs[i].Pix, want.Pix) {
			t.Errorf("target %d (%s %dx%d) differs from Resize", i, k, tg.W, tg.H)
		}
	}
	// Reusing the outputs for another frame writes every pixel again: the result is the fresh one's.
	src2 := randImage(rand.New(rand.NewPCG(6, 6)), 160, 90)
	fresh, _ := FanOut(src2, targets)
	reused, err := FanOutInto(src2, targets, outs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range targets {
		if reused[i] != outs[i] || !bytes.Equal(reused[i].Pix, fresh[i].Pix) {
			t.Errorf("target %d: reuse gave other pixels (or a new image)", i)
		}
	}
	if _, err := FanOut(src, []Target{{W: 10, H: 10, Kernel: "nope"}}); !errors.Is(err, ErrUnknownKernel) {
		t.Errorf("unknown kernel in FanOut: %v", err)
	}
}

func TestErrors(t *testing.T) {
	_, err := New("bicubic", 10, 10, 5, 5)
	var re *Error
	if !errors.Is(err, ErrUnknownKernel) || !errors.As(err, &re) || re.Kernel != "bicubic" {
		t.Errorf("unknown kernel: %v", err)
	}
	for _, k := range Kernels() {
		if _, err := New(k, 10, 0, 5, 5); !errors.Is(err, ErrBadSize) {
			t.Errorf("%s zero height: %v", k, err)
		}
		if _, err := New(k, 100, 100, MaxSide, MaxSide); !errors.Is(err, ErrBadSize) {
			t.Errorf("%s %dx%d output: %v", k, MaxSide, MaxSide, err)
		}
		r, err := New(k, 10, 10, 5, 5)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Resize(rgb.New(5, 5), rgb.New(11, 10)); !errors.Is(err, ErrBadSize) {
			t.Errorf("%s wrong source size: %v", k, err)
		}
		if err := r.Resize(rgb.New(5, 5), &rgb.Image{W: 10, H: 10, Stride: 30, Pix: make([]byte, 5)}); !errors.Is(err, ErrBadSize) {
			t.Errorf("%s short source buffer: %v", k, err)
		}
	}
}

func TestCacheConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]Resizer, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := New(Kernels()[i%len(Kernels())], 301, 203, 77, 55)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = r
			_ = r.Resize(rgb.New(77, 55), gradient(301, 203)) // concurrent use of shared resizers
		}()
	}
	wg.Wait()
	for i := range got {
		if j := i % len(Kernels()); got[i] != got[j] {
			t.Errorf("goroutine %d got a different %s resizer than %d", i, Kernels()[j], j)
		}
	}
}

func TestCVBenchCloseTwice(t *testing.T) {
	b, err := NewCVBench(CVCubic, gradient(64, 48), 32, 24)
	if err != nil {
		t.Fatal(err)
	}
	b.Run()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := NewCVBench(PILBicubic, gradient(8, 8), 4, 4); !errors.Is(err, ErrUnknownKernel) {
		t.Errorf("NewCVBench with a non-cv kernel: %v", err)
	}
}

func BenchmarkResize(b *testing.B) {
	for _, s := range [][4]int{{1920, 1080, 448, 448}, {1920, 1080, 224, 224}, {1280, 720, 1008, 560}} {
		src := gradient(s[0], s[1])
		for _, k := range Kernels() {
			levels := []native.Level{native.Best()}
			dispatched := k[:3] == "pil" || k == TorchBicubic // kernels with dispatch levels
			if dispatched {
				levels = native.Supported()
			}
			for _, l := range levels {
				lv := l.String()
				if !dispatched {
					lv = "none"
				}
				b.Run(fmt.Sprintf("level=%s/src=%dx%d/dst=%dx%d/kernel=%s", lv, s[0], s[1], s[2], s[3], k), func(b *testing.B) {
					defer native.SetLevel(l)()
					r, err := New(k, s[0], s[1], s[2], s[3])
					if err != nil {
						b.Fatal(err)
					}
					dst := rgb.New(s[2], s[3])
					b.SetBytes(int64(len(src.Pix)))
					b.ReportAllocs()
					for b.Loop() {
						if err := r.Resize(dst, src); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
				})
			}
		}
	}
}
