package resize

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"gocv.io/x/gocv"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/rgb"
)

// The cv-* kernels and the JPEG codec go through native/opencv (OpenCV core+imgproc and libjpeg-turbo
// linked directly, docs/resize.md "OpenCV"). gocv v0.32.0 is the reference binding: these tests call
// the same OpenCV through it (test binaries may link all of OpenCV) and, with /usr/bin/python3, through
// cv2, and require the same bytes.

// padded returns img with extra bytes at the end of every row (the strides a caller may hand in).
func padded(img *rgb.Image, pad int) *rgb.Image {
	p := &rgb.Image{W: img.W, H: img.H, Stride: img.Stride + pad, Pix: make([]byte, (img.Stride+pad)*img.H)}
	for y := 0; y < img.H; y++ {
		copy(p.Row(y), img.Row(y))
		for i := 3 * img.W; i < p.Stride; i++ {
			p.Pix[y*p.Stride+i] = 0xA5
		}
	}
	return p
}

// gocvMat copies img into a new gocv Mat, swapping RGB → BGR when bgr is set.
func gocvMat(t *testing.T, img *rgb.Image, bgr bool) gocv.Mat {
	t.Helper()
	m := gocv.NewMatWithSize(img.H, img.W, gocv.MatTypeCV8UC3)
	b, err := m.DataPtrUint8()
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	for y := 0; y < img.H; y++ {
		row, dst := img.Row(y), b[y*3*img.W:(y+1)*3*img.W]
		for i := 0; i < len(row); i += 3 {
			if bgr {
				dst[i], dst[i+1], dst[i+2] = row[i+2], row[i+1], row[i]
			} else {
				dst[i], dst[i+1], dst[i+2] = row[i], row[i+1], row[i+2]
			}
		}
	}
	return m
}

// gocvImage copies a CV_8UC3 Mat out as an image, swapping BGR → RGB when bgr is set.
func gocvImage(t *testing.T, m gocv.Mat, bgr bool) *rgb.Image {
	t.Helper()
	if m.Empty() || m.Type() != gocv.MatTypeCV8UC3 {
		t.Fatalf("gocv Mat: empty %v, type %v", m.Empty(), m.Type())
	}
	b, err := m.DataPtrUint8()
	if err != nil {
		t.Fatal(err)
	}
	img := rgb.New(m.Cols(), m.Rows())
	copy(img.Pix, b)
	if bgr {
		for i := 0; i+2 < len(img.Pix); i += 3 {
			img.Pix[i], img.Pix[i+2] = img.Pix[i+2], img.Pix[i]
		}
	}
	return img
}

var cvGocvInterp = map[string]gocv.InterpolationFlags{CVArea: gocv.InterpolationArea, CVLinear: gocv.InterpolationLinear,
	CVCubic: gocv.InterpolationCubic}

// cvCases are (source, output) sizes: down and up, integer and fractional scales (INTER_AREA takes
// other paths for each), 1-pixel sides, unchanged.
var cvCases = [][4]int{{64, 48, 32, 24}, {97, 61, 40, 33}, {640, 360, 448, 448}, {333, 211, 224, 224},
	{50, 30, 160, 96}, {37, 23, 1, 1}, {1, 9, 5, 3}, {80, 60, 80, 60}, {1920, 1080, 448, 448}}

func TestCVResizeMatchesGocv(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 43))
	for _, c := range cvCases {
		src := randImage(r, c[0], c[1])
		if c[0] >= 640 {
			src = jpegTestImage(c[0], c[1]) // smooth and sharp parts, as frames have
		}
		for _, k := range []string{CVArea, CVLinear, CVCubic} {
			t.Run(fmt.Sprintf("%s/%dx%d-%dx%d", k, c[0], c[1], c[2], c[3]), func(t *testing.T) {
				m := gocvMat(t, src, false)
				defer m.Close()
				out := gocv.NewMat()
				defer out.Close()
				gocv.Resize(m, &out, image.Pt(c[2], c[3]), 0, 0, cvGocvInterp[k])
				want := gocvImage(t, out, false)
				got := must(t, k, src, c[2], c[3])
				if !bytes.Equal(got.Packed(), want.Packed()) {
					t.Fatalf("differs from gocv's cv::resize in %d bytes", diffCount(got.Packed(), want.Packed()))
				}
				// A padded source stride gives the same bytes (cv::Mat over the caller's rows).
				rr, err := New(k, c[0], c[1], c[2], c[3])
				if err != nil {
					t.Fatal(err)
				}
				dst := padded(rgb.New(c[2], c[3]), 7)
				if err := rr.Resize(dst, padded(src, 5)); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(dst.Packed(), want.Packed()) {
					t.Fatal("padded strides change cv::resize's output")
				}
				for y := 0; y < dst.H; y++ {
					for _, v := range dst.Pix[y*dst.Stride+3*dst.W : (y+1)*dst.Stride] {
						if v != 0xA5 {
							t.Fatal("cv::resize wrote into the destination's row padding")
						}
					}
				}
			})
		}
	}
}

func diffCount(a, b []byte) int {
	n := 0
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n + max(len(a), len(b)) - min(len(a), len(b))
}

func TestJPEGMatchesGocv(t *testing.T) {
	for _, sz := range [][2]int{{64, 48}, {161, 121}, {1, 1}, {17, 3}, {640, 360}} {
		img := jpegTestImage(sz[0], sz[1])
		for _, q := range []int{1, 30, PillowJPEGQuality, 95, 100} {
			t.Run(fmt.Sprintf("%dx%d/q%d", sz[0], sz[1], q), func(t *testing.T) {
				m := gocvMat(t, img, true)
				defer m.Close()
				buf, err := gocv.IMEncodeWithParams(gocv.JPEGFileExt, m, []int{gocv.IMWriteJpegQuality, q})
				if err != nil {
					t.Fatal(err)
				}
				defer buf.Close()
				want := append([]byte(nil), buf.GetBytes()...)
				got, err := EncodeJPEG(padded(img, 3), q)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("JPEG differs from gocv's IMEncode (ours %d B, gocv %d B)", len(got), len(want))
				}
				checkDecodeMatchesGocv(t, got)
			})
		}
	}
	// Other JPEGs OpenCV writes: progressive with optimised tables, 4:4:4, grey (read as RGB).
	img := jpegTestImage(99, 57)
	for name, params := range map[string][]int{
		"progressive": {gocv.IMWriteJpegQuality, 80, gocv.IMWriteJpegProgressive, 1, gocv.IMWriteJpegOptimize, 1},
		"444":         {gocv.IMWriteJpegQuality, 90, gocv.IMWriteJpegLumaQuality, 90, gocv.IMWriteJpegChromaQuality, 70},
		"restarts":    {gocv.IMWriteJpegQuality, 75, gocv.IMWriteJpegRstInterval, 3},
	} {
		t.Run(name, func(t *testing.T) {
			m := gocvMat(t, img, true)
			defer m.Close()
			buf, err := gocv.IMEncodeWithParams(gocv.JPEGFileExt, m, params)
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Close()
			checkDecodeMatchesGocv(t, append([]byte(nil), buf.GetBytes()...))
		})
	}
	t.Run("grey", func(t *testing.T) {
		m := gocvMat(t, img, true)
		defer m.Close()
		g := gocv.NewMat()
		defer g.Close()
		gocv.CvtColor(m, &g, gocv.ColorBGRToGray)
		buf, err := gocv.IMEncode(gocv.JPEGFileExt, g)
		if err != nil {
			t.Fatal(err)
		}
		defer buf.Close()
		checkDecodeMatchesGocv(t, append([]byte(nil), buf.GetBytes()...))
	})
}

// checkDecodeMatchesGocv decodes b with DecodeJPEG and gocv's IMDecode(IMReadColor).
func checkDecodeMatchesGocv(t *testing.T, b []byte) {
	t.Helper()
	m, err := gocv.IMDecode(b, gocv.IMReadColor)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := gocvImage(t, m, true)
	got, err := DecodeJPEG(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Packed(), want.Packed()) {
		t.Fatalf("decoded pixels differ from gocv's IMDecode in %d bytes", diffCount(got.Packed(), want.Packed()))
	}
}

func TestOpenCVVersion(t *testing.T) {
	if got, want := OpenCVVersion(), gocv.OpenCVVersion(); got != want || got == "" {
		t.Fatalf("OpenCVVersion %q, gocv says %q", got, want)
	}
}

// withExif inserts an Exif APP1 segment with IFD0 Orientation = o right after SOI (big- or
// little-endian TIFF), as cameras write it.
func withExif(jpg []byte, o uint16, bo binary.ByteOrder) []byte {
	tiff := make([]byte, 8+2+2*12+4)
	if bo == binary.LittleEndian {
		copy(tiff, "II*\x00")
	} else {
		copy(tiff, "MM\x00*")
	}
	bo.PutUint32(tiff[4:], 8)
	bo.PutUint16(tiff[8:], 2)
	e := tiff[10:]
	bo.PutUint16(e[0:], 0x010F) // Make, ASCII, an entry before the one read
	bo.PutUint16(e[2:], 2)
	bo.PutUint32(e[4:], 1)
	bo.PutUint16(e[12:], 0x0112) // Orientation, SHORT, 1 value
	bo.PutUint16(e[14:], 3)
	bo.PutUint32(e[16:], 1)
	bo.PutUint16(e[20:], o)
	seg := append([]byte("Exif\x00\x00"), tiff...)
	app1 := []byte{0xFF, 0xE1, byte((len(seg) + 2) >> 8), byte(len(seg) + 2)}
	out := append(append(append([]byte(nil), jpg[:2]...), app1...), seg...)
	return append(out, jpg[2:]...)
}

func TestDecodeJPEGRefuses(t *testing.T) {
	img := jpegTestImage(40, 20)
	good, err := EncodeJPEG(img, 75)
	if err != nil {
		t.Fatal(err)
	}
	want, err := DecodeJPEG(good)
	if err != nil {
		t.Fatal(err)
	}
	// Orientation 1 ("normal") and 0/9 (not an orientation: cv::imdecode ignores them) decode as is.
	for _, o := range []uint16{0, 1, 9} {
		got, err := DecodeJPEG(withExif(good, o, binary.BigEndian))
		if err != nil || !bytes.Equal(got.Packed(), want.Packed()) {
			t.Fatalf("orientation %d: %v", o, err)
		}
	}
	for _, bo := range []binary.ByteOrder{binary.BigEndian, binary.LittleEndian} {
		if _, err := DecodeJPEG(withExif(good, 6, bo)); !errors.Is(err, ErrJPEG) {
			t.Fatalf("EXIF orientation 6 (%v): %v", bo, err)
		}
	}
	// Truncated data: OpenCV (libjpeg's warning) would hand back grey rows; here it is an error.
	for _, n := range []int{len(good) / 2, len(good) - 2, 200} {
		if _, err := DecodeJPEG(good[:n]); !errors.Is(err, ErrJPEG) {
			t.Fatalf("truncated to %d of %d bytes: %v", n, len(good), err)
		}
	}
	// Corrupt entropy-coded data.
	bad := append([]byte(nil), good...)
	for i := len(bad) / 2; i < len(bad)/2+40; i++ {
		bad[i] = 0xFF
	}
	if _, err := DecodeJPEG(bad); !errors.Is(err, ErrJPEG) {
		t.Fatalf("corrupt data: %v", err)
	}
}

const cv2Script = `
import sys, json
import numpy as np, cv2
d = sys.argv[1]
cases = json.load(open(d + "/cases.json"))
out = {}
for c in cases:
    src = np.fromfile(d + "/" + c["src"], np.uint8).reshape(c["h"], c["w"], 3)
    if c["op"] == "resize":
        r = cv2.resize(src, (c["dw"], c["dh"]), interpolation=getattr(cv2, c["interp"]))
        r.tofile(d + "/" + c["out"])
    else:
        ok, b = cv2.imencode(".jpg", src[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, c["q"]])
        assert ok
        b.tofile(d + "/" + c["out"] + ".jpg")
        cv2.imdecode(b, cv2.IMREAD_COLOR)[:, :, ::-1].tofile(d + "/" + c["out"] + ".rgb")
print(cv2.__version__)
`

// TestOpenCVMatchesCV2 runs the same resizes and JPEG encodes through cv2 (Debian's python3-opencv,
// the same libopencv): byte-identical.
func TestOpenCVMatchesCV2(t *testing.T) {
	py := testenv.NeedPython(t, "cv2", "numpy")
	dir := t.TempDir()
	type cvCase struct {
		Op, Src, Out, Interp string
		W, H, DW, DH, Q      int
	}
	var cases []cvCase
	var js []byte
	srcs := map[string]*rgb.Image{}
	r := rand.New(rand.NewPCG(1, 2))
	for i, c := range cvCases {
		if c[0] > 1000 {
			continue // the 1080p case runs against gocv; here it would only add seconds
		}
		src := randImage(r, c[0], c[1])
		name := "src" + strconv.Itoa(i)
		srcs[name] = src
		if err := os.WriteFile(filepath.Join(dir, name), src.Packed(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{CVArea, CVLinear, CVCubic} {
			interp := map[string]string{CVArea: "INTER_AREA", CVLinear: "INTER_LINEAR", CVCubic: "INTER_CUBIC"}[k]
			cases = append(cases, cvCase{Op: "resize", Src: name, Out: fmt.Sprintf("%s.%s", name, k), Interp: interp, W: c[0], H: c[1], DW: c[2], DH: c[3]})
		}
		for _, q := range []int{50, PillowJPEGQuality} {
			cases = append(cases, cvCase{Op: "jpeg", Src: name, Out: fmt.Sprintf("%s.q%d", name, q), W: c[0], H: c[1], Q: q})
		}
	}
	js = []byte("[")
	for i, c := range cases {
		if i > 0 {
			js = append(js, ',')
		}
		js = fmt.Appendf(js, `{"op":%q,"src":%q,"out":%q,"interp":%q,"w":%d,"h":%d,"dw":%d,"dh":%d,"q":%d}`,
			c.Op, c.Src, c.Out, c.Interp, c.W, c.H, c.DW, c.DH, c.Q)
	}
	js = append(js, ']')
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", cv2Script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("cv2: %v\n%s", err, out)
	}
	if v := string(bytes.TrimSpace(out)); v != OpenCVVersion() {
		t.Fatalf("cv2 runs OpenCV %s, this process %s: not the same library", v, OpenCVVersion())
	}
	for _, c := range cases {
		src := srcs[c.Src]
		if c.Op == "resize" {
			want, _ := os.ReadFile(filepath.Join(dir, c.Out))
			k := map[string]string{"INTER_AREA": CVArea, "INTER_LINEAR": CVLinear, "INTER_CUBIC": CVCubic}[c.Interp]
			if got := must(t, k, src, c.DW, c.DH); !bytes.Equal(got.Packed(), want) {
				t.Errorf("%s: differs from cv2.resize in %d bytes", c.Out, diffCount(got.Packed(), want))
			}
			continue
		}
		wantJPG, _ := os.ReadFile(filepath.Join(dir, c.Out+".jpg"))
		wantRGB, _ := os.ReadFile(filepath.Join(dir, c.Out+".rgb"))
		got, err := EncodeJPEG(src, c.Q)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, wantJPG) {
			t.Errorf("%s: JPEG differs from cv2.imencode (ours %d B, cv2 %d B)", c.Out, len(got), len(wantJPG))
			continue
		}
		dec, err := DecodeJPEG(got)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dec.Packed(), wantRGB) {
			t.Errorf("%s: decoded pixels differ from cv2.imdecode in %d bytes", c.Out, diffCount(dec.Packed(), wantRGB))
		}
	}
}
