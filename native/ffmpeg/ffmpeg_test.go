//go:build cgo

package ffmpeg

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/asticode/go-astiav"
)

var fileOnly = []Option{{Key: "protocol_whitelist", Value: "file"}}

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return "file:" + a
}

// TestProbeFormat names the demuxer FFmpeg would choose, without opening it: a playlist is "hls"
// whatever its name, a pattern is "image2" from the name alone, an MP4 is the mov family.
func TestProbeFormat(t *testing.T) {
	tmp := t.TempDir()
	hls := filepath.Join(tmp, "x.mp4")
	if err := os.WriteFile(hls, []byte("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nnope.mp4\n#EXT-X-ENDLIST\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pattern := filepath.Join(tmp, "img%03d.png")
	if err := os.WriteFile(pattern, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"../../testdata/videos/nasa_13013.mp4", "mov,mp4,m4a,3gp,3g2,mj2"},
		{"../../testdata/videos/bear-vp9-odd-dimensions.webm", "matroska,webm"},
		{hls, "hls"},
		{pattern, "image2"},
	} {
		got, err := ProbeFormat(abs(t, c.path), fileOnly)
		if err != nil || got != c.want {
			t.Errorf("ProbeFormat(%s) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
	if _, err := ProbeFormat(abs(t, filepath.Join(tmp, "missing.mp4")), fileOnly); err == nil {
		t.Error("a missing file probed without error")
	}
	if _, err := ProbeFormat("file:/x", []Option{{Key: "a=b", Value: "c"}}); err == nil {
		t.Error("an option key with '=' was accepted")
	}
}

// TestBestVideoStream: torchcodec's NASA clip has video streams 0 (320x180) and 3 (480x270);
// FFmpeg ranks 3 best (torchcodec's default too). A file without video is ErrStreamNotFound.
func TestBestVideoStream(t *testing.T) {
	if got, err := BestVideoStream(abs(t, "../../testdata/videos/nasa_13013.mp4"), fileOnly); err != nil || got != 3 {
		t.Errorf("nasa: %d, %v; want 3", got, err)
	}
	if got, err := BestVideoStream(abs(t, "../../testdata/videos/h265_video.mp4"), fileOnly); err != nil || got != 0 {
		t.Errorf("h265_video: %d, %v; want 0", got, err)
	}
	tmp := t.TempDir()
	txt := filepath.Join(tmp, "a.srt")
	if err := os.WriteFile(txt, []byte("1\n00:00:00,000 --> 00:00:01,000\nhi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := BestVideoStream(abs(t, txt), fileOnly); !errors.Is(err, astiav.ErrStreamNotFound) {
		t.Errorf("subtitles only: %v, want ErrStreamNotFound", err)
	}
}

// TestLogHookCountsDecoderErrors: a decoder error message (logged here through a decoder's own
// context) moves the counter; other messages, and HEVC's missing reference, do not; the hook keeps
// counting at level quiet.
func TestLogHookCountsDecoderErrors(t *testing.T) {
	SetLogLevel(int(astiav.LogLevelQuiet))
	defer SetLogLevel(int(astiav.LogLevelError))
	cc := astiav.AllocCodecContext(astiav.FindDecoder(astiav.CodecIDH264))
	if cc == nil {
		t.Fatal("no h264 decoder context")
	}
	defer cc.Free()
	before := DecoderErrors()
	astiav.Log(cc, astiav.LogLevelWarning, "a warning %s\n", "w")
	astiav.Log(nil, astiav.LogLevelError, "an error without a context %s\n", "e")
	astiav.Log(cc, astiav.LogLevelError, "Could not find ref with POC %s\n", "12")
	if n := DecoderErrors(); n != before {
		t.Fatalf("a warning / a context-free error / HEVC's missing reference counted: %d → %d", before, n)
	}
	astiav.Log(cc, astiav.LogLevelError, "error while decoding MB %s\n", "1 2")
	astiav.Log(cc, astiav.LogLevelInfo, "concealing %s errors in P frame\n", "3 DC, 3 AC, 3 MV")
	if n := DecoderErrors(); n != before+2 {
		t.Fatalf("decoder error + concealment: counter %d → %d, want +2", before, n)
	}
	if d, fl := FrameErrors(nil); d != 0 || fl != 0 {
		t.Fatalf("FrameErrors(nil) = %d, %d", d, fl)
	}
	f := astiav.AllocFrame()
	defer f.Free()
	if d, fl := FrameErrors(f); d != 0 || fl != 0 {
		t.Fatalf("a fresh frame: %d, %d", d, fl)
	}
}
