package decode

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// pyavVideos: the repository's sample videos and the shared videos whose pixel formats and
// containers differ (10-bit, 4:4:4, full-range MJPEG, VP9 10-bit in WebM with hidden frames, an edit
// list, VFR, a raw H.264 stream, two video streams), all short.
func pyavVideos(t *testing.T) []string {
	local, _ := filepath.Glob(filepath.Join("..", "testdata", "videos", "*"))
	dir := testenv.SharedVideos(t)
	for _, p := range []string{
		"torchcodec/h264_10bits.mp4", "torchcodec/h265_10bits.mp4", "torchcodec/var_fps_video.mp4",
		"nwb-video-widgets/stub_mjpeg.avi", "androidx-media/roadtrip-vp92-10bit.webm",
		"androidx-media/iibbibb_editlist_videoonly.mp4", "androidx-media/sample.avi",
		"androidx-media/sample_h264.ts", "go-astiav/video-yuv420p.h264", "moviepy/test_video.mp4",
		"androidx-media/invalid-bitstream.webm", "androidx-media/sample_with_invalid_nalu.mp4",
	} {
		local = append(local, filepath.Join(dir, p))
	}
	return local
}

type pyavRecord struct {
	Path   string   `json:"path"`
	SHA256 []string `json:"sha256"`
	Shape  []int    `json:"shape"`
	Error  *string  `json:"error"`
}

// TestSequentialMatchesPyAV: a Sequential pass over the first video stream, unrotated, converted
// with ColourSwsDefault, gives the frames PyAV's container.decode(video=0) + to_ndarray("rgb24")
// gives (the frames lmms-eval and torchvision read), byte for byte, and stops with a *SeqError
// where PyAV raises.
func TestSequentialMatchesPyAV(t *testing.T) {
	py := testenv.NeedPython(t, "av")
	videos := pyavVideos(t)
	out, err := exec.Command(py, append([]string{filepath.Join("..", "testdata", "oracles", "pyav_rgb.py")}, videos...)...).Output()
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		var want pyavRecord
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(filepath.Base(want.Path), func(t *testing.T) { checkSequentialPyAV(t, want) })
	}
	if n != len(videos) {
		t.Fatalf("oracle answered for %d of %d videos", n, len(videos))
	}
}

func checkSequentialPyAV(t *testing.T, want pyavRecord) {
	v, err := Open(want.Path, Options{FirstVideoStream: true, NoAutorotate: true, Colour: ColourSwsDefault, OnDamaged: DamagedKeep})
	if err != nil {
		if want.Error == nil {
			t.Fatalf("PyAV decodes %d frames, Open fails: %v", len(want.SHA256), err)
		}
		return
	}
	defer v.Close()
	var got []string
	_, err = v.Sequential(SeqOptions{FrameThreads: true}, func(f *SeqFrame) (bool, error) {
		img, err := f.RGB()
		if err != nil {
			return true, err
		}
		h := sha256.Sum256(img.Packed())
		got = append(got, hex.EncodeToString(h[:]))
		return false, nil
	})
	if want.Error != nil {
		if !errors.Is(err, ErrDecoderRefused) {
			t.Fatalf("PyAV raised %q; Sequential: %v", *want.Error, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("PyAV decodes %d frames; Sequential: %v", len(want.SHA256), err)
	}
	if len(got) != len(want.SHA256) {
		t.Fatalf("%d frames, PyAV %d", len(got), len(want.SHA256))
	}
	for i := range got {
		if got[i] != want.SHA256[i] {
			t.Fatalf("frame %d differs from PyAV's to_ndarray(\"rgb24\")", i)
		}
	}
}

// TestSequentialStopAndHeader: the callback can stop the pass; the header is the container's.
func TestSequentialStopAndHeader(t *testing.T) {
	p := filepath.Join("..", "testdata", "videos", "nasa_13013.mp4")
	v, err := Open(p, Options{FirstVideoStream: true, NoAutorotate: true, Colour: ColourSwsDefault})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	h := v.Header()
	if h.Index != 0 || h.NbFrames != 325 || h.AvgFrameRate != (Rational{25, 1}) {
		t.Fatalf("header %+v: want stream 0, 325 frames, 25/1 (streams.video[0] of the NASA clip)", h)
	}
	if in := v.Info(); in.StreamSelection != "first" || in.Width != 320 {
		t.Fatalf("info %+v: want the first video stream (320x180)", in)
	}
	seen := 0
	st, err := v.Sequential(SeqOptions{}, func(f *SeqFrame) (bool, error) {
		if f.N != seen || !f.HasPTS {
			t.Errorf("frame %d: N %d, pts %v", seen, f.N, f.HasPTS)
		}
		seen++
		return seen == 5, nil
	})
	if err != nil || !st.Stopped || st.Frames != 5 || st.Converted != 0 {
		t.Fatalf("stats %+v, err %v: want a pass stopped after 5 frames, none converted", st, err)
	}
	// The Video still reads by index afterwards.
	if _, err := v.Read([]int{0, 100}, func(*Frame) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestColourOptionsChecked(t *testing.T) {
	p := filepath.Join("..", "testdata", "videos", "nasa_13013.mp4")
	for _, o := range []Options{
		{Colour: "bt709"},
		{Colour: ColourSwsDefault}, // rotation needs filters
		{FirstVideoStream: true, Stream: StreamAt(0)},
	} {
		if _, err := Open(p, o); !errors.Is(err, ErrBadOption) {
			t.Errorf("%+v: %v, want ErrBadOption", o, err)
		}
	}
}

// TestColourFilterBilinearMatchesCLI: ColourFilterBilinear is `scale=W:H:flags=bilinear` into rgb24,
// frame for frame the ffmpeg CLI's output of that filter. On a 10-bit source the flags matter (the
// scaler's generic path filters chroma); at the source size an 8-bit 4:2:0 source takes swscale's
// unscaled YUV→RGB path, which ignores them.
func TestColourFilterBilinearMatchesCLI(t *testing.T) {
	ff := testenv.Need(t, "ffmpeg")
	p := filepath.Join(testenv.SharedVideos(t), "torchcodec", "h264_10bits.mp4")
	frames := func(o Options) []byte {
		v, err := Open(p, o)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		var got []byte
		if _, err := v.Read([]int{0, 1, 2, 3, 4, 5, 6, 7}, func(f *Frame) error {
			got = append(got, f.Packed()...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := frames(Options{Colour: ColourFilterBilinear, NoAutorotate: true})
	cli, err := exec.Command(ff, "-v", "error", "-noautorotate", "-i", p, "-fps_mode", "passthrough",
		"-vf", "scale=200:200:flags=bilinear,format=rgb24", "-frames:v", "8", "-f", "rawvideo", "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(cli) != 8*3*200*200 || !bytes.Equal(got, cli) {
		t.Fatalf("filter-bilinear frames differ from the CLI's scale=200:200:flags=bilinear (%d vs %d bytes)", len(got), len(cli))
	}
	if bytes.Equal(got, frames(Options{NoAutorotate: true})) {
		t.Fatal("on a 10-bit source filter-bilinear equals the default (bicubic) conversion")
	}
}
