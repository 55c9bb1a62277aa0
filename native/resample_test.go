package native

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/framesweep/framesweep/internal/piloracle"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/rgb"
)

var filters = []Filter{Bilinear, Bicubic, Lanczos}

func randImage(r *rand.Rand, w, h, pad int) *rgb.Image {
	m := &rgb.Image{W: w, H: h, Stride: 3*w + pad, Pix: make([]byte, (3*w+pad)*h)}
	for i := range m.Pix {
		m.Pix[i] = byte(r.IntN(256))
	}
	return m
}

// smooth makes a random image with long gradients plus noise, closer to real frames than pure noise.
func smooth(r *rand.Rand, w, h int) *rgb.Image {
	m := rgb.New(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			for c := 0; c < 3; c++ {
				v := (x*(c+1)*255)/w/2 + (y*255)/h/2 + r.IntN(16) - 8
				m.Pix[y*m.Stride+3*x+c] = byte(min(max(v, 0), 255))
			}
		}
	}
	return m
}

func resampleAt(t testing.TB, l Level, f Filter, src *rgb.Image, w, h int) *rgb.Image {
	t.Helper()
	p, err := NewPlan(f, src.W, src.H, w, h)
	if err != nil {
		t.Fatal(err)
	}
	dst := rgb.New(w, h)
	if err := p.ResampleLevel(l, dst, src); err != nil {
		t.Fatal(err)
	}
	return dst
}

func firstDiff(a, b *rgb.Image) string {
	for y := 0; y < a.H; y++ {
		ra, rb := a.Row(y), b.Row(y)
		for i := range ra {
			if ra[i] != rb[i] {
				return fmt.Sprintf("first difference at x=%d y=%d c=%d: got %d want %d", i/3, y, i%3, ra[i], rb[i])
			}
		}
	}
	return ""
}

func requirePIL(t *testing.T) {
	t.Helper()
	testenv.NeedPython(t, "PIL")
}

type sz struct{ w, h int }

// checkAgainstPillow resizes each source to each size with each filter, at every level, and requires
// byte equality with Pillow.
func checkAgainstPillow(t *testing.T, srcs []*rgb.Image, sizes func(*rgb.Image) []sz) {
	var cases []piloracle.Case
	for _, s := range srcs {
		for _, d := range sizes(s) {
			for _, f := range filters {
				cases = append(cases, piloracle.Case{Src: s, OutW: d.w, OutH: d.h, Filter: f.String()})
			}
		}
	}
	want, err := piloracle.Resize(t.TempDir(), cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range Supported() {
		for i, c := range cases {
			if raceEnabled && l == Generic && len(Supported()) > 1 && i%5 != 0 {
				continue // the differential tests tie Generic to the vector levels
			}
			f := map[string]Filter{"bilinear": Bilinear, "bicubic": Bicubic, "lanczos": Lanczos}[c.Filter]
			got := resampleAt(t, l, f, c.Src, c.OutW, c.OutH)
			if !bytes.Equal(got.Packed(), want[i].Packed()) {
				t.Errorf("level=%v %s %dx%d->%dx%d differs from Pillow: %s", l, c.Filter, c.Src.W, c.Src.H,
					c.OutW, c.OutH, firstDiff(got, want[i]))
			}
		}
	}
	t.Logf("%d cases × %d levels equal to Pillow", len(cases), len(Supported()))
}

func TestResamplePillowRandom(t *testing.T) {
	requirePIL(t)
	r := rand.New(rand.NewPCG(1, 2))
	srcs := []*rgb.Image{
		randImage(r, 1, 1, 0), randImage(r, 1, 7, 0), randImage(r, 9, 1, 0), randImage(r, 2, 2, 0),
		randImage(r, 37, 23, 0), randImage(r, 101, 67, 0), smooth(r, 640, 360),
		randImage(r, 333, 211, 5), // padded stride
	}
	sizes := func(s *rgb.Image) []sz {
		return []sz{{1, 1}, {s.W, 3}, {3, s.H}, {s.W * 3, s.H*2 + 1}, {max(s.W/3, 1), max(s.H/2, 1)},
			{17, 9}, {224, 224}, {s.W + 1, s.H}}
	}
	checkAgainstPillow(t, srcs, sizes)
}

func TestResamplePillowFrames(t *testing.T) {
	requirePIL(t)
	dir := t.TempDir()
	videos := []struct {
		path string
		n    int
	}{
		{"androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4", 30},
		{"androidx-media/bear-vp9-odd-dimensions.webm", 5},
		{"moviepy/big_buck_bunny_432_433.webm", 10},
	}
	var srcs []*rgb.Image
	for _, v := range videos {
		p := testenv.SharedVideo(t, v.path)
		testenv.Need(t, "ffmpeg")
		m, err := piloracle.Frame(dir, p, v.n, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, m)
	}
	sizes := func(s *rgb.Image) []sz {
		return []sz{{448, 448}, {224, 224}, {1008, 560}, {384, 384}, {s.W/2 + 1, s.H/3 + 1}}
	}
	checkAgainstPillow(t, srcs, sizes)
}

// TestResampleLevelsAgree is the differential table test: every supported level equals the generic
// reference on many shapes, including padded strides and the buffer-end rows the vector loads guard.
func TestResampleLevelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := [][4]int{{1, 1, 1, 1}, {1, 1, 5, 5}, {5, 5, 1, 1}, {3, 2, 7, 9}, {64, 48, 31, 17},
		{100, 100, 100, 50}, {100, 100, 50, 100}, {211, 97, 500, 300}, {1920, 1080, 448, 448}, {13, 1, 4, 1}}
	if raceEnabled {
		shapes[8] = [4]int{640, 360, 448, 448}
	}
	for _, s := range shapes {
		for _, pad := range []int{0, 7} {
			src := randImage(r, s[0], s[1], pad)
			for _, f := range filters {
				want := resampleAt(t, Generic, f, src, s[2], s[3])
				for _, l := range fastLevels() {
					got := resampleAt(t, l, f, src, s[2], s[3])
					if !bytes.Equal(got.Pix, want.Pix) {
						t.Errorf("%v %v %v pad=%d: %s", l, f, s, pad, firstDiff(got, want))
					}
				}
				if hasVNNI { // the plain AVX-512 horizontal kernel too, not only the VNNI one
					hasVNNI = false
					got := resampleAt(t, AVX512, f, src, s[2], s[3])
					hasVNNI = true
					if !bytes.Equal(got.Pix, want.Pix) {
						t.Errorf("avx512 without VNNI %v %v pad=%d: %s", f, s, pad, firstDiff(got, want))
					}
				}
				p, _ := NewPlan(f, s[0], s[1], s[2], s[3])
				par := rgb.New(s[2], s[3])
				if err := p.ResampleParallel(3, par, src); err != nil || !bytes.Equal(par.Pix, want.Pix) {
					t.Errorf("ResampleParallel %v %v pad=%d: %v %s", f, s, pad, err, firstDiff(par, want))
				}
			}
		}
	}
	skipNoFastLevels(t) // after the ResampleParallel checks, which need no fast level
}

func FuzzResample(f *testing.F) {
	f.Add(uint16(7), uint16(5), uint16(3), uint16(9), uint8(1), uint64(1))
	f.Add(uint16(300), uint16(2), uint16(33), uint16(2), uint8(2), uint64(2))
	skipNoFastLevels(f)
	f.Fuzz(func(t *testing.T, sw, sh, dw, dh uint16, filt uint8, seed uint64) {
		w, h, ow, oh := int(sw%300)+1, int(sh%300)+1, int(dw%300)+1, int(dh%300)+1
		fl := filters[int(filt)%len(filters)]
		src := randImage(rand.New(rand.NewPCG(seed, 9)), w, h, int(seed%5))
		want := resampleAt(t, Generic, fl, src, ow, oh)
		for _, l := range fastLevels() {
			if got := resampleAt(t, l, fl, src, ow, oh); !bytes.Equal(got.Pix, want.Pix) {
				t.Fatalf("%v %v %dx%d->%dx%d: %s", l, fl, w, h, ow, oh, firstDiff(got, want))
			}
		}
	})
}

func TestResampleErrors(t *testing.T) {
	if _, err := NewPlan(Bicubic, 0, 5, 4, 4); !errors.Is(err, ErrBadSize) {
		t.Errorf("zero width: %v", err)
	}
	if _, err := NewPlan(Filter(9), 5, 5, 4, 4); !errors.Is(err, ErrBadArgument) {
		t.Errorf("bad filter: %v", err)
	}
	p, err := NewPlan(Bicubic, 8, 8, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Resample(rgb.New(4, 4), rgb.New(9, 8))
	var ne *Error
	if !errors.Is(err, ErrBadSize) || !errors.As(err, &ne) || ne.Op != "resample" {
		t.Errorf("mismatched size: %v", err)
	}
	short := &rgb.Image{W: 8, H: 8, Stride: 24, Pix: make([]byte, 10)}
	if err := p.Resample(rgb.New(4, 4), short); !errors.Is(err, ErrBadSize) {
		t.Errorf("short buffer: %v", err)
	}
}

func TestSetLevel(t *testing.T) {
	before := CurrentLevel()
	restore := SetLevel(Generic)
	if CurrentLevel() != Generic {
		t.Fatal("SetLevel(Generic) did not take")
	}
	restore()
	if CurrentLevel() != before {
		t.Fatal("restore did not restore")
	}
	defer func() {
		if recover() == nil && Best() != AVX512 {
			t.Error("SetLevel above Best did not panic")
		}
	}()
	SetLevel(AVX512)()
}

func TestResampleAllocs(t *testing.T) {
	skipNoFastLevels(t)
	src := randImage(rand.New(rand.NewPCG(5, 6)), 320, 240, 0)
	p, _ := NewPlan(Bicubic, 320, 240, 100, 80)
	dst := rgb.New(100, 80)
	for _, l := range fastLevels() {
		_ = p.ResampleLevel(l, dst, src) // warm the scratch pool
		if n := testing.AllocsPerRun(20, func() { _ = p.ResampleLevel(l, dst, src) }); n > 2 {
			t.Errorf("%v: %v allocations per resample", l, n)
		}
	}
}

func BenchmarkResample(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range [][4]int{{1920, 1080, 448, 448}, {1920, 1080, 224, 224}, {1280, 720, 1008, 560}} {
		src := smooth(r, s[0], s[1])
		for _, l := range Supported() {
			for _, f := range filters {
				name := fmt.Sprintf("level=%v/src=%dx%d/dst=%dx%d/kernel=pil-%v", l, s[0], s[1], s[2], s[3], f)
				b.Run(name, func(b *testing.B) {
					p, _ := NewPlan(f, s[0], s[1], s[2], s[3])
					dst := rgb.New(s[2], s[3])
					b.SetBytes(int64(len(src.Pix)))
					b.ReportAllocs()
					for b.Loop() {
						_ = p.ResampleLevel(l, dst, src)
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
				})
			}
		}
	}
}
