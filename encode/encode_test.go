package encode_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/encode"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/rgb"
)

// noise is n random w×h frames; pad > 0 gives each row pad bytes of slack (a stride above 3·w).
func noise(n, w, h, pad int, seed uint64) []*rgb.Image {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]*rgb.Image, n)
	for k := range out {
		m := &rgb.Image{W: w, H: h, Stride: 3*w + pad, Pix: make([]byte, (3*w+pad)*h)}
		for i := range m.Pix {
			m.Pix[i] = byte(r.Uint32())
		}
		out[k] = m
	}
	return out
}

// TestPNGMP4RoundTrip: the file decodes (framesweep's own decoder, FFmpeg through go-astiav) to
// exactly the frames given — every byte, odd sizes and padded strides included —, with as many frames
// as given, and ffprobe reads the codec, the pixel format, the frame count and the exact average rate
// (the value decord's get_avg_fps and torchcodec's average_fps return).
func TestPNGMP4RoundTrip(t *testing.T) {
	ffprobe := testenv.Need(t, "ffprobe")
	dir := t.TempDir()
	for _, c := range []struct {
		n, w, h, pad int
		rate         encode.Rate
	}{
		{8, 64, 48, 0, encode.Rate{Num: 2, Den: 1}},
		{15, 33, 17, 5, encode.Rate{Num: 48, Den: 31}},
		{2, 1, 1, 0, encode.Rate{Num: 30000, Den: 1001}},
		{6, 20, 30, 0, encode.Rate{Num: 1, Den: 37}},
	} {
		frames := noise(c.n, c.w, c.h, c.pad, uint64(c.n))
		b, err := encode.PNGMP4(frames, c.rate, "")
		if err != nil {
			t.Fatalf("%d frames %dx%d at %v: %v", c.n, c.w, c.h, c.rate, err)
		}
		path := filepath.Join(dir, "v.mp4")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(ffprobe, "-v", "error", "-select_streams", "v:0", "-show_entries",
			"stream=codec_name,pix_fmt,nb_frames,avg_frame_rate", "-of", "default=nw=1", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := "codec_name=png\npix_fmt=rgb24\navg_frame_rate=" + c.rate.String() + "\nnb_frames=" + strconv.Itoa(c.n) + "\n"
		if string(out) != want {
			t.Errorf("%v: ffprobe says\n%s, want\n%s", c.rate, out, want)
		}
		v, err := decode.Open(path, decode.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v.NumFrames() != c.n {
			t.Errorf("%v: %d frames decoded, %d written", c.rate, v.NumFrames(), c.n)
		}
		idx := make([]int, c.n)
		for i := range idx {
			idx[i] = i
		}
		_, err = v.Read(idx, func(f *decode.Frame) error {
			if want := frames[f.Index]; f.W != want.W || f.H != want.H || !bytes.Equal(f.Image.Packed(), want.Packed()) {
				t.Errorf("%v: frame %d differs from the frame written", c.rate, f.Index)
			}
			if want := float64(f.Index) * float64(c.rate.Den) / float64(c.rate.Num); abs(f.Seconds-want) > 1e-9 {
				t.Errorf("%v: frame %d at %v s, want %v", c.rate, f.Index, f.Seconds, want)
			}
			return nil
		})
		v.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPNGMP4Refusals: bad input is ErrInput, named, before FFmpeg sees anything.
func TestPNGMP4Refusals(t *testing.T) {
	two := noise(2, 8, 8, 0, 1)
	mixed := append(noise(1, 8, 8, 0, 1), noise(1, 8, 6, 0, 2)...)
	bad := &rgb.Image{W: 8, H: 8, Stride: 3, Pix: make([]byte, 10)}
	for name, c := range map[string]struct {
		frames []*rgb.Image
		rate   encode.Rate
		want   string
	}{
		"none":       {nil, encode.Rate{Num: 2, Den: 1}, "0 frames"},
		"sizes":      {mixed, encode.Rate{Num: 2, Den: 1}, "frame 1 is 8x6"},
		"invalid":    {[]*rgb.Image{bad}, encode.Rate{Num: 2, Den: 1}, "frame 0"},
		"nil":        {[]*rgb.Image{nil}, encode.Rate{Num: 2, Den: 1}, "nil"},
		"rate":       {two, encode.Rate{Num: 0, Den: 1}, "rate 0/1"},
		"rate large": {two, encode.Rate{Num: encode.MaxRateTerm + 1, Den: 1}, "rate"},
	} {
		_, err := encode.PNGMP4(c.frames, c.rate, "")
		if !errors.Is(err, encode.ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInput naming %q", name, err, c.want)
		}
	}
	if _, err := encode.PNGMP4(two, encode.Rate{Num: 2, Den: 1}, filepath.Join(t.TempDir(), "missing")); !errors.Is(err, encode.ErrFFmpeg) {
		t.Errorf("missing temp dir: %v, want ErrFFmpeg", err)
	}
}

// TestRateOf: rates come back as the exact fraction when one fits, else the nearest convergent.
func TestRateOf(t *testing.T) {
	for fps, want := range map[float64]encode.Rate{
		2:                        {2, 1},
		1.548:                    {387, 250},
		16.0 / 310 * 30:          {48, 31},
		30000.0 / 1001:           {30000, 1001},
		0.5:                      {1, 2},
		1.0 / 3:                  {1, 3},
		3.141592653589793:        {833719, 265381},
		1000:                     {1000, 1},
		1.0 / encode.MaxRateTerm: {1, encode.MaxRateTerm},
	} {
		got, err := encode.RateOf(fps)
		if err != nil || got != want {
			t.Errorf("RateOf(%v) = %v, %v; want %v", fps, got, err, want)
		}
	}
	for _, bad := range []float64{0, -1, 1e9, 1.0 / (2 * encode.MaxRateTerm)} {
		if _, err := encode.RateOf(bad); !errors.Is(err, encode.ErrInput) {
			t.Errorf("RateOf(%v): %v, want ErrInput", bad, err)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
