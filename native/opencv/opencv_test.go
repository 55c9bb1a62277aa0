//go:build cgo

package opencv

import (
	"bytes"
	"errors"
	"sync"
	"testing"
)

func ramp(w, h int) []byte {
	b := make([]byte, 3*w*h)
	for i := range b {
		b[i] = byte(i*7 + i/(3*w))
	}
	return b
}

func TestVersion(t *testing.T) {
	if v := Version(); v == "" || v[0] < '4' {
		t.Fatalf("Version() = %q", v)
	}
}

func TestResizeArguments(t *testing.T) {
	src, dst := ramp(8, 6), make([]byte, 3*4*3)
	for name, f := range map[string]func() error{
		"short source":      func() error { return Resize(dst, 4, 3, 12, src[:100], 8, 6, 24, Area) },
		"short destination": func() error { return Resize(dst[:30], 4, 3, 12, src, 8, 6, 24, Area) },
		"stride below row":  func() error { return Resize(dst, 4, 3, 11, src, 8, 6, 24, Area) },
		"zero width":        func() error { return Resize(dst, 0, 3, 12, src, 8, 6, 24, Area) },
		"interpolation":     func() error { return Resize(dst, 4, 3, 12, src, 8, 6, 24, Interp(7)) },
	} {
		if err := f(); !errors.Is(err, ErrArgument) {
			t.Errorf("%s: %v, want ErrArgument", name, err)
		}
	}
	// INTER_AREA at 2× is the rounded 2×2 mean: a value cv::resize computes, not a copy.
	if err := Resize(dst, 4, 3, 12, src, 8, 6, 24, Area); err != nil {
		t.Fatal(err)
	}
	mean := (int(src[0]) + int(src[3]) + int(src[24]) + int(src[27]) + 2) / 4
	if int(dst[0]) != mean {
		t.Fatalf("area 2x: got %d, want %d", dst[0], mean)
	}
}

func TestJPEGRoundTripAndErrors(t *testing.T) {
	w, h := 33, 17
	img := ramp(w, h)
	b, err := EncodeJPEG(img, w, h, 3*w, 75)
	if err != nil {
		t.Fatal(err)
	}
	gw, gh, comps, err := JPEGInfo(b)
	if err != nil || gw != w || gh != h || comps != 3 {
		t.Fatalf("JPEGInfo: %dx%d %d components, %v", gw, gh, comps, err)
	}
	out := make([]byte, 3*w*h)
	if err := DecodeJPEG(b, out, w, h, 3*w); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(out, img) {
		t.Fatal("quality 75 round trip was lossless")
	}
	if err := DecodeJPEG(b, make([]byte, 3*(w+1)*h), w+1, h, 3*w+3); !errors.Is(err, ErrJPEG) {
		t.Errorf("wrong size asked: %v", err)
	}
	for name, bad := range map[string][]byte{"empty": nil, "garbage": []byte("not a jpeg at all"), "soi eoi": {0xFF, 0xD8, 0xFF, 0xD9}, "half": b[:len(b)/2]} {
		if _, _, _, err := JPEGInfo(bad); name != "half" && !errors.Is(err, ErrJPEG) {
			t.Errorf("JPEGInfo %s: %v", name, err)
		}
		if err := DecodeJPEG(bad, out, w, h, 3*w); !errors.Is(err, ErrJPEG) {
			t.Errorf("DecodeJPEG %s: %v", name, err)
		}
	}
	if _, err := EncodeJPEG(img, w, h, 3*w, 101); !errors.Is(err, ErrArgument) {
		t.Errorf("quality 101: %v", err)
	}
	if _, err := EncodeJPEG(img[:10], w, h, 3*w, 75); !errors.Is(err, ErrArgument) {
		t.Errorf("short image: %v", err)
	}
}

// TestConcurrent: the entry points keep no state between calls (run with -race).
func TestConcurrent(t *testing.T) {
	w, h := 64, 48
	img := ramp(w, h)
	want, err := EncodeJPEG(img, w, h, 3*w, 80)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				b, err := EncodeJPEG(img, w, h, 3*w, 80)
				if err == nil && !bytes.Equal(b, want) {
					err = errors.New("encodes differ between goroutines")
				}
				dst := make([]byte, 3*20*20)
				if err == nil {
					err = Resize(dst, 20, 20, 60, img, w, h, 3*w, Cubic)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
