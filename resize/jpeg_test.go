package resize

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/rgb"
)

// jpegTestImage is a deterministic picture with smooth gradients, sharp edges and noise, so that
// chroma subsampling, quantisation and upsampling all matter.
func jpegTestImage(w, h int) *rgb.Image {
	img := rgb.New(w, h)
	s := uint32(12345)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			s = s*1664525 + 1013904223
			n := int(s>>27) - 16
			p := img.Pix[y*img.Stride+3*x:]
			r, g, b := x*255/w, y*255/h, (x+y)%64*4
			if (x/17+y/13)%2 == 0 {
				r, b = b, r
			}
			p[0], p[1], p[2] = clamp8(r+n), clamp8(g-n), clamp8(b+n/2)
		}
	}
	return img
}

func clamp8(v int) byte {
	return byte(min(max(v, 0), 255))
}

const pilJPEG = `
import sys, io
from PIL import Image
w, h, src, jpg, dec = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
im = Image.frombytes("RGB", (w, h), open(src, "rb").read())
buf = io.BytesIO()
im.save(buf, format="JPEG")  # Pillow's defaults: quality 75, 4:2:0
open(jpg, "wb").write(buf.getvalue())
out = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
assert out.size == (w, h)
open(dec, "wb").write(out.tobytes())
`

// TestJPEGMatchesPillow encodes with OpenCV and with Pillow's default save and compares the JPEG
// bytes and the decoded pixels (decoding both Pillow's bytes and ours).
func TestJPEGMatchesPillow(t *testing.T) {
	py := testenv.NeedPython(t, "PIL")
	for _, sz := range [][2]int{{64, 48}, {161, 121}, {320, 180}} {
		t.Run(strconv.Itoa(sz[0])+"x"+strconv.Itoa(sz[1]), func(t *testing.T) {
			dir := t.TempDir()
			img := jpegTestImage(sz[0], sz[1])
			src := filepath.Join(dir, "src.rgb")
			if err := os.WriteFile(src, img.Packed(), 0o644); err != nil {
				t.Fatal(err)
			}
			jpg, dec := filepath.Join(dir, "pil.jpg"), filepath.Join(dir, "pil.rgb")
			cmd := exec.Command(py, "-c", pilJPEG, strconv.Itoa(sz[0]), strconv.Itoa(sz[1]), src, jpg, dec)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("python: %v\n%s", err, out)
			}
			pilBytes, _ := os.ReadFile(jpg)
			pilPix, _ := os.ReadFile(dec)

			ours, err := EncodeJPEG(img, PillowJPEGQuality)
			if err != nil {
				t.Fatal(err)
			}
			// The whole file is byte-identical to Pillow's (JFIF header, tables, entropy-coded data).
			if !bytes.Equal(ours, pilBytes) {
				if bytes.Equal(stripAPP0(ours), stripAPP0(pilBytes)) {
					t.Fatal("JPEG bytes differ from Pillow's in the JFIF APP0 segment only")
				}
				t.Fatalf("JPEG bytes differ from Pillow's (ours %d B, Pillow %d B)", len(ours), len(pilBytes))
			}
			got, err := DecodeJPEG(ours)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Packed(), pilPix) {
				t.Fatal("decoded pixels differ from Pillow's")
			}
			gotPil, err := DecodeJPEG(pilBytes)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotPil.Packed(), pilPix) {
				t.Fatal("decoding Pillow's JPEG differs from Pillow's decode")
			}
			if bytes.Equal(got.Packed(), img.Packed()) {
				t.Fatal("JPEG round trip was lossless: quality not applied")
			}
		})
	}
}

// stripAPP0 removes the JFIF APP0 segment (density fields are writer choices, not image data).
func stripAPP0(b []byte) []byte {
	if len(b) > 6 && b[2] == 0xFF && b[3] == 0xE0 {
		n := int(b[4])<<8 | int(b[5])
		return append(append([]byte(nil), b[:2]...), b[4+n:]...)
	}
	return b
}

func TestJPEGDeterministicAndErrors(t *testing.T) {
	img := jpegTestImage(50, 30)
	a, err := EncodeJPEG(img, 75)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := EncodeJPEG(img, 75)
	if !bytes.Equal(a, b) {
		t.Fatal("encoding is not deterministic")
	}
	hi, _ := EncodeJPEG(img, 95)
	if len(hi) <= len(a) {
		t.Fatalf("quality 95 (%d B) not larger than 75 (%d B)", len(hi), len(a))
	}
	if _, err := EncodeJPEG(img, 0); !errors.Is(err, ErrJPEG) {
		t.Errorf("quality 0: %v", err)
	}
	if _, err := EncodeJPEG(&rgb.Image{W: 2, H: 2, Stride: 6}, 75); !errors.Is(err, ErrJPEG) {
		t.Errorf("short buffer: %v", err)
	}
	for name, bad := range map[string][]byte{"empty": nil, "png": []byte("\x89PNG\r\n\x1a\n0000"), "soi only": {0xFF, 0xD8, 0xFF, 0xD9}} {
		if _, err := DecodeJPEG(bad); !errors.Is(err, ErrJPEG) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A padded stride is honoured.
	padded := &rgb.Image{W: img.W, H: img.H, Stride: img.Stride + 5, Pix: make([]byte, (img.Stride+5)*img.H)}
	for y := 0; y < img.H; y++ {
		copy(padded.Row(y), img.Row(y))
	}
	if c, _ := EncodeJPEG(padded, 75); !bytes.Equal(c, a) {
		t.Fatal("stride padding changes the JPEG")
	}
}
