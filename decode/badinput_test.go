package decode

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

func oneLine(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line: %q", err)
	}
}

func TestOpenRejects(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty.mp4")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	random := filepath.Join(tmp, "random.mp4")
	b := make([]byte, 1<<20)
	rand.New(rand.NewSource(1)).Read(b)
	if err := os.WriteFile(random, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		opts       Options
		want       error
	}{
		{"empty", empty, Options{}, ErrEmpty},
		{"random bytes", random, Options{}, ErrCorrupt},
		{"missing", filepath.Join(tmp, "nope.mp4"), Options{}, ErrNotFound},
		{"directory", tmp, Options{}, ErrNotFound},
		{"http URL", "http://127.0.0.1:1/video.mp4", Options{}, ErrNetworkProtocol},
		{"rtmp URL", "rtmp://127.0.0.1/live", Options{}, ErrNetworkProtocol},
		{"protocol chain", "concat:" + random + "|" + random, Options{}, ErrNotFound},
		{"bad hwaccel", random, Options{HWAccel: "quantum"}, ErrBadOption},
		{"negative limit", random, Options{MaxStreams: -1}, ErrBadOption},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			v, err := Open(c.path, c.opts)
			if err == nil {
				v.Close()
				t.Fatalf("Open succeeded, want %v", c.want)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			var de *Error
			if !errors.As(err, &de) || de.Path != c.path {
				t.Fatalf("error %v does not name the file", err)
			}
			oneLine(t, err)
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}

func TestOpenLimits(t *testing.T) {
	dir := testenv.SharedVideos(t)
	nasa := filepath.Join(dir, "torchcodec/nasa_13013.mp4") // 6 streams; video 0 is 320x180, video 3 (best) 480x270
	if _, err := Open(nasa, Options{MaxStreams: 4}); !errors.Is(err, ErrTooManyStreams) {
		t.Fatalf("MaxStreams 4 on 6 streams: %v", err)
	}
	if _, err := Open(nasa, Options{MaxFrameArea: 480*270 - 1}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("MaxFrameArea below the frame: %v", err)
	}
	if _, err := Open(nasa, Options{MaxFrameArea: 320*180 - 1, Stream: StreamAt(0)}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("MaxFrameArea below stream 0's frame: %v", err)
	}
	v, err := Open(nasa, Options{MaxFrameArea: 480 * 270, MaxStreams: 6})
	if err != nil {
		t.Fatalf("limits exactly at the file's values: %v", err)
	}
	v.Close()
	v, err = Open(nasa, Options{MaxFrameArea: 320 * 180, Stream: StreamAt(0)})
	if err != nil {
		t.Fatalf("stream 0 at its own size: %v", err)
	}
	v.Close()
}

// Truncated files: either Open fails with a typed error, or the frames that lost their data come back
// as FrameErrors while the intact ones decode. Never a crash, a hang or a substituted frame.
func TestTruncated(t *testing.T) {
	dir := testenv.SharedVideos(t)
	tmp := t.TempDir()
	for _, rel := range []string{"torchcodec/nasa_13013.mp4", "decord/flipping_a_pancake.mkv", "androidx-media/sample_h264.ts",
		"androidx-media/sample_fragmented.mp4", "androidx-media/roadtrip-vp92-10bit.webm", "go-astiav/video-yuv420p.h264"} {
		src, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, frac := range []float64{0.02, 0.5, 0.9} {
			name := filepath.Base(rel) + "@" + strings.TrimLeft(strings.ReplaceAll(time.Duration(frac*1000).String(), "ns", ""), "0")
			t.Run(name, func(t *testing.T) {
				p := filepath.Join(tmp, "trunc_"+name+filepath.Ext(rel))
				if err := os.WriteFile(p, src[:int(float64(len(src))*frac)], 0o644); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				v, err := Open(p, Options{})
				if err != nil {
					var de *Error
					if !errors.As(err, &de) || !(errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTruncated) || errors.Is(err, ErrNoFrames) || errors.Is(err, ErrNoVideoStream) || errors.Is(err, ErrUnsupportedCodec)) {
						t.Fatalf("untyped open error: %v", err)
					}
					oneLine(t, err)
					return
				}
				defer v.Close()
				all := make([]int, v.NumFrames())
				for i := range all {
					all[i] = i
				}
				got := 0
				st, err := v.Read(all, func(*Frame) error { got++; return nil })
				failed, damaged := FailedFrames(err), DamagedFrames(err)
				if err != nil && len(failed)+len(damaged) == 0 {
					t.Fatalf("read error without frame errors: %v", err)
				}
				if !slices.Equal(damaged, st.Damaged) {
					t.Fatalf("refused damaged frames %v, stats say %v", damaged, st.Damaged)
				}
				// A frame cut through the middle is concealed by the decoder: damaged, refused.
				if got+len(failed)+len(damaged) != len(all) {
					t.Fatalf("delivered %d + failed %d + damaged %d != %d", got, len(failed), len(damaged), len(all))
				}
				oneLine(t, err)
				if d := time.Since(start); d > 20*time.Second {
					t.Fatalf("took %v", d)
				}
			})
		}
	}
}

func TestReadRangeCloseAndLeaks(t *testing.T) {
	dir := testenv.SharedVideos(t)
	path := filepath.Join(dir, "torchcodec/h265_video.mp4") // 10 frames
	g0 := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		v, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range [][]int{{0, 10}, {-1}, {3, 1 << 30}} {
			called := false
			st, err := v.Read(bad, func(*Frame) error { called = true; return nil })
			var re *RangeError
			if !errors.Is(err, ErrOutOfRange) || !errors.As(err, &re) || called || st.Decoded != 0 {
				t.Fatalf("Read(%v): err %v, called %v, stats %+v: want a RangeError and nothing decoded", bad, err, called, st)
			}
			oneLine(t, err)
		}
		// The last frame is frame 9, never a repeat of it past the end.
		var last []byte
		if _, err := v.Read([]int{9}, func(f *Frame) error { last = append([]byte(nil), f.Pix...); return nil }); err != nil || last == nil {
			t.Fatalf("last frame: %v", err)
		}
		stop := errors.New("enough")
		n := 0
		if _, err := v.Read([]int{1, 2, 3}, func(*Frame) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
			t.Fatalf("callback error: got %v after %d calls", err, n)
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
		if err := v.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if _, err := v.Read([]int{0}, func(*Frame) error { return nil }); !errors.Is(err, ErrClosed) {
			t.Fatalf("Read after Close: %v", err)
		}
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if g := runtime.NumGoroutine(); g > g0 {
		t.Fatalf("goroutines %d → %d: leak", g0, g)
	}
}

func TestHWAccelFallsBackWithReason(t *testing.T) {
	dir := testenv.SharedVideos(t)
	v, err := Open(filepath.Join(dir, "torchcodec/h265_video.mp4"), Options{HWAccel: "cuda"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	in := v.Info()
	if in.HWAccel == "cuda" {
		t.Skip("a CUDA device exists here: the fallback path is not exercised")
	}
	if in.HWAccel != "none" || !strings.Contains(in.HWAccelFallback, "cuda") {
		t.Fatalf("hwaccel %q fallback %q: want the CPU with a recorded reason", in.HWAccel, in.HWAccelFallback)
	}
	got := 0
	st, err := v.Read([]int{0, 5, 9}, func(*Frame) error { got++; return nil })
	if err != nil || got != 3 || st.HWFallback == "" {
		t.Fatalf("CPU fallback read: %d frames, %v, %+v", got, err, st)
	}
	t.Logf("fallback: %s", in.HWAccelFallback)

	auto, err := Open(filepath.Join(dir, "torchcodec/h265_video.mp4"), Options{HWAccel: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	defer auto.Close()
	if in := auto.Info(); in.HWAccel == "none" && !strings.Contains(in.HWAccelFallback, "cuda") {
		t.Fatalf("auto: fallback %q does not say what was tried", in.HWAccelFallback)
	}

	av1, err := Open(filepath.Join(dir, "torchcodec/av1_video.mkv"), Options{HWAccel: "cuda"})
	if err != nil {
		t.Fatal(err)
	}
	defer av1.Close()
	// AV1 is tried on CUDA (Ampere and later decode it, through FFmpeg's native av1 decoder); with no
	// device here the CPU is used and the reason names cuda.
	if in := av1.Info(); in.HWAccel != "none" || !strings.Contains(in.HWAccelFallback, "cuda") {
		t.Fatalf("AV1 on cuda: hwaccel %q fallback %q, want the CPU with cuda's reason", in.HWAccel, in.HWAccelFallback)
	}
}

func TestSelectHW(t *testing.T) {
	cases := []struct {
		req      HWAccel
		tr       StreamTraits
		device   HWAccel
		fallback string // substring; "" = none expected
	}{
		{HWNone, StreamTraits{"h264", 8, "420"}, "", ""},
		{HWCUDA, StreamTraits{"h264", 8, "420"}, HWCUDA, ""},
		{HWCUDA, StreamTraits{"h264", 10, "420"}, "", "10-bit H.264"},
		{HWCUDA, StreamTraits{"h264", 8, "444"}, "", "4:4:4"},
		{HWCUDA, StreamTraits{"hevc", 10, "420"}, HWCUDA, ""},
		{HWCUDA, StreamTraits{"hevc", 8, "444"}, HWCUDA, ""},
		{HWCUDA, StreamTraits{"vp9", 10, "420"}, HWCUDA, ""},
		{HWCUDA, StreamTraits{"av1", 8, "420"}, HWCUDA, ""}, // Ampere and later (A100, H100, H200)
		{HWCUDA, StreamTraits{"av1", 10, "444"}, "", "AV1"},
		{HWCUDA, StreamTraits{"prores", 10, "422"}, "", "no decoder"},
		{HWVAAPI, StreamTraits{"av1", 8, "420"}, HWVAAPI, ""},
		{HWVAAPI, StreamTraits{"h264", 8, "444"}, "", "4:2:0"},
		{HWAuto, StreamTraits{"av1", 8, "420"}, HWCUDA, ""},
		{HWAuto, StreamTraits{"h264", 8, "420"}, HWCUDA, ""},
		{HWAuto, StreamTraits{"h264", 10, "444"}, "", "auto"},
	}
	for _, c := range cases {
		got := SelectHW(c.req, c.tr)
		if got.Device != c.device || (c.fallback == "") != (got.Fallback == "") || !strings.Contains(got.Fallback, c.fallback) {
			t.Errorf("SelectHW(%s, %+v) = %+v, want device %q fallback ~%q", c.req, c.tr, got, c.device, c.fallback)
		}
	}
	for in, want := range map[string]HWAccel{"": HWNone, "none": HWNone, "CUDA": HWCUDA, "vaapi": HWVAAPI, "auto": HWAuto} {
		if got, err := ParseHWAccel(in); err != nil || got != want {
			t.Errorf("ParseHWAccel(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseHWAccel("opencl"); !errors.Is(err, ErrBadOption) {
		t.Errorf("ParseHWAccel(opencl): %v", err)
	}
}

func TestOrientationFromMatrix(t *testing.T) {
	fix := func(a, b, c, d int32) *[9]int32 { return &[9]int32{a, b, 0, c, d, 0, 0, 0, 1 << 30} }
	const one = 1 << 16
	cases := []struct {
		m      *[9]int32
		filter string
		rot    int
		h, v   bool
	}{
		{nil, "", 0, false, false},
		{fix(one, 0, 0, one), "", 0, false, false},
		{fix(0, one, -one, 0), "transpose=clock", 90, false, false},      // video_90.mov
		{fix(0, -one, one, 0), "transpose=cclock", 270, false, false},    // video_270.mov
		{fix(0, one, one, 0), "transpose=cclock_flip", 270, false, true}, // sample_rotate_and_reflect.mp4
		{fix(0, -one, -one, 0), "transpose=clock_flip", 90, false, true}, // the other reflection
		{fix(-one, 0, 0, -one), "hflip,vflip", 180, false, false},        // 180°
		{fix(-one, 0, 0, one), "hflip", 0, true, false},                  // mirror
		{fix(one, 0, 0, -one), "vflip", 0, false, true},                  // upside-down mirror
	}
	for _, c := range cases {
		o := orientationFromMatrix(c.m)
		if o.Filter() != c.filter || o.RotationDeg != c.rot || o.HFlip != c.h || o.VFlip != c.v {
			t.Errorf("matrix %v: got %+v (%q), want %q rot %d h %v v %v", c.m, o, o.Filter(), c.filter, c.rot, c.h, c.v)
		}
	}
}

// TestLiveHandles: under -tags leakcheck the count of FFmpeg objects follows a Video's life: its format
// context while open, the reader's packet, frames, decoder and filter graph during a Read, nothing after
// Close, also when Open or Read fail.
func TestLiveHandles(t *testing.T) {
	if !LeakCheck {
		t.Skip("counts handles only with -tags leakcheck (make test runs decode/ so)")
	}
	dir := testenv.SharedVideos(t)
	base := LiveHandles()
	v, err := Open(filepath.Join(dir, "torchcodec/h265_video.mp4"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := LiveHandles() - base; n != 1 {
		t.Errorf("an open Video holds %d handles, want 1 (its format context)", n)
	}
	during := 0
	if _, err := v.Read([]int{0, 5}, func(*Frame) error { during = LiveHandles() - base; return nil }); err != nil {
		t.Fatal(err)
	}
	if during < 5 {
		t.Errorf("%d handles during a Read, want the format context, packet, two frames, decoder and more", during)
	}
	if n := LiveHandles() - base; n != 1 {
		t.Errorf("after Read: %d handles, want 1", n)
	}
	v.Close()
	if _, err := Open(filepath.Join(dir, "mp4ff/vvc_400kbps_2s.mp4"), Options{}); err == nil {
		t.Fatal("vvc opened")
	}
	if n := LiveHandles() - base; n != 0 {
		t.Errorf("after Close and a failed Open: %d handles", n)
	}
}

// TestOpenNamesTheCause: a WebM cut after 315 bytes makes the matroska demuxer return EIO, which once
// read "file not found or not readable"; the file is there and readable, so it is corrupt data. A file
// this process may not read is "not readable" (checked only when not running as root, who reads all).
func TestOpenNamesTheCause(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "videos", "bear-vp9-odd-dimensions.webm"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.webm")
	os.WriteFile(cut, b[:315], 0o644)
	_, err = Open(cut, Options{})
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "cut short or damaged") {
		t.Errorf("cut WebM: %v, want ErrCorrupt", err)
	}
	if os.Geteuid() != 0 {
		os.Chmod(cut, 0)
		if _, err := Open(cut, Options{}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("unreadable file: %v, want ErrNotFound naming the permission", err)
		}
	}
}
