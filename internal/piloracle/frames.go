package piloracle

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/framesweep/framesweep/rgb"
)

// Frame extracts frame index n of video with the ffmpeg CLI (RGB24 PNG, optionally scaled to w×h with
// ffmpeg's default scaler when w > 0) and returns it. For fixtures in tests and benchmarks.
func Frame(dir, video string, n, w, h int) (*rgb.Image, error) {
	out := filepath.Join(dir, fmt.Sprintf("frame_%s_%d_%dx%d.png", filepath.Base(video), n, w, h))
	vf := "select=eq(n\\," + strconv.Itoa(n) + ")"
	if w > 0 {
		vf += fmt.Sprintf(",scale=%d:%d", w, h)
	}
	cmd := exec.Command("ffmpeg", "-v", "error", "-y", "-i", video, "-vf", vf, "-frames:v", "1", "-pix_fmt", "rgb24", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("piloracle: ffmpeg %s frame %d: %v: %s", video, n, err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	im, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("piloracle: %s: %v", out, err)
	}
	return FromImage(im), nil
}

// FromImage converts any image.Image to packed RGB24 (alpha dropped).
func FromImage(im image.Image) *rgb.Image {
	b := im.Bounds()
	m := rgb.New(b.Dx(), b.Dy())
	for y := 0; y < m.H; y++ {
		for x := 0; x < m.W; x++ {
			r, g, bb, _ := im.At(b.Min.X+x, b.Min.Y+y).RGBA()
			i := y*m.Stride + 3*x
			m.Pix[i], m.Pix[i+1], m.Pix[i+2] = byte(r>>8), byte(g>>8), byte(bb>>8)
		}
	}
	return m
}
