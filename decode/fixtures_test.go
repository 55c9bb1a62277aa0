package decode

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// Self-identifying fixtures: a lavfi source draws the frame number N as a 10-bit barcode (stripe b,
// 16 px wide, is white when bit b of N is set), encoded with the ffmpeg CLI into each codec/container.
// A decoded frame's barcode therefore says which source frame it is, whatever seeking happened.

const (
	fxW, fxH   = 160, 96
	stripeBits = 10
)

type fixture struct {
	name    string
	ext     string
	encoder string // required encoder ("" = none)
	frames  int
	pixFmt  string   // lavfi source pixel format before encoding
	vf      string   // extra filter after the barcode
	args    []string // encoder/muxer arguments
	post    func(t testing.TB, dir, in string) string
}

var fixtures = []fixture{
	{name: "h264_bframes_opengop", ext: "mp4", encoder: "libx264", frames: 150, args: []string{"-c:v", "libx264", "-bf", "3", "-g", "30", "-keyint_min", "30", "-sc_threshold", "0", "-x264opts", "open_gop=1", "-pix_fmt", "yuv420p"}},
	{name: "h264_longgop", ext: "mp4", encoder: "libx264", frames: 300, args: []string{"-c:v", "libx264", "-bf", "2", "-g", "250", "-pix_fmt", "yuv420p"}},
	{name: "h264_10bit", ext: "mp4", encoder: "libx264", frames: 100, args: []string{"-c:v", "libx264", "-bf", "2", "-g", "24", "-pix_fmt", "yuv420p10le"}},
	{name: "h264_444", ext: "mp4", encoder: "libx264", frames: 100, args: []string{"-c:v", "libx264", "-bf", "2", "-g", "24", "-pix_fmt", "yuv444p"}},
	{name: "hevc", ext: "mp4", encoder: "libx265", frames: 100, args: []string{"-c:v", "libx265", "-x265-params", "log-level=error:keyint=24:min-keyint=24:bframes=3:open-gop=1", "-pix_fmt", "yuv420p"}},
	{name: "hevc_10bit", ext: "mkv", encoder: "libx265", frames: 100, args: []string{"-c:v", "libx265", "-x265-params", "log-level=error:keyint=24:bframes=2", "-pix_fmt", "yuv420p10le"}},
	{name: "vp8", ext: "webm", encoder: "libvpx", frames: 100, args: []string{"-c:v", "libvpx", "-g", "30", "-auto-alt-ref", "1", "-lag-in-frames", "16", "-b:v", "300k"}},
	{name: "vp9", ext: "webm", encoder: "libvpx-vp9", frames: 100, args: []string{"-c:v", "libvpx-vp9", "-g", "30", "-auto-alt-ref", "1", "-lag-in-frames", "16", "-b:v", "300k", "-cpu-used", "5", "-row-mt", "0"}},
	{name: "vp9_10bit", ext: "webm", encoder: "libvpx-vp9", frames: 60, args: []string{"-c:v", "libvpx-vp9", "-g", "20", "-pix_fmt", "yuv420p10le", "-b:v", "300k", "-cpu-used", "5"}},
	{name: "av1", ext: "mkv", encoder: "libaom-av1", frames: 60, args: []string{"-c:v", "libaom-av1", "-g", "20", "-cpu-used", "8", "-b:v", "200k", "-pix_fmt", "yuv420p"}},
	{name: "mpeg4", ext: "mp4", encoder: "mpeg4", frames: 120, args: []string{"-c:v", "mpeg4", "-bf", "2", "-g", "25", "-q:v", "4"}},
	{name: "mpeg4_avi_bframes", ext: "avi", encoder: "mpeg4", frames: 100, args: []string{"-c:v", "mpeg4", "-bf", "2", "-g", "25", "-q:v", "4", "-vtag", "XVID"}},
	{name: "h264_flv", ext: "flv", encoder: "libx264", frames: 100, args: []string{"-c:v", "libx264", "-bf", "2", "-g", "25", "-pix_fmt", "yuv420p"}},
	{name: "mjpeg", ext: "avi", encoder: "mjpeg", frames: 50, args: []string{"-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj420p"}},
	{name: "mpegts", ext: "ts", encoder: "libx264", frames: 120, args: []string{"-c:v", "libx264", "-bf", "3", "-g", "25", "-pix_fmt", "yuv420p", "-f", "mpegts"}},
	{name: "fragmented", ext: "mp4", encoder: "libx264", frames: 120, args: []string{"-c:v", "libx264", "-bf", "2", "-g", "25", "-pix_fmt", "yuv420p", "-movflags", "+frag_keyframe+empty_moov+default_base_moof"}},
	{name: "annexb", ext: "h264", encoder: "libx264", frames: 80, args: []string{"-c:v", "libx264", "-bf", "2", "-g", "20", "-pix_fmt", "yuv420p", "-f", "h264"}},
	{name: "vfr", ext: "mp4", encoder: "libx264", frames: 120, vf: "setpts='(N+if(gte(N,60),N-60,0)+if(gte(N,90),3*(N-90),0))/(25*TB)'", args: []string{"-c:v", "libx264", "-bf", "2", "-g", "30", "-pix_fmt", "yuv420p", "-fps_mode", "passthrough"}},
	{name: "rotated", ext: "mp4", encoder: "libx264", frames: 60, args: []string{"-c:v", "libx264", "-bf", "2", "-g", "20", "-pix_fmt", "yuv420p"},
		post: func(t testing.TB, dir, in string) string {
			// ffmpeg 5.1 writes the display matrix from the rotate tag on stream copy only.
			out := filepath.Join(dir, "rotated_90.mp4")
			runFFmpeg(t, "-i", in, "-c", "copy", "-metadata:s:v:0", "rotate=90", out)
			return out
		}},
	{name: "h264_opengop_cut", ext: "mp4", encoder: "libx264", frames: 150, args: []string{"-c:v", "libx264", "-bf", "3", "-g", "30", "-keyint_min", "30", "-sc_threshold", "0", "-x264opts", "open_gop=1", "-pix_fmt", "yuv420p"},
		post: func(t testing.TB, dir, in string) string {
			// Stream copy into Matroska from an open-GOP keyframe: its leading B-frames reference a
			// picture that was cut away, and the decoder never outputs them.
			out := filepath.Join(dir, "h264_opengop_cut.mkv")
			runFFmpeg(t, "-ss", "1.3", "-i", in, "-c", "copy", out)
			return out
		}},
	{name: "hevc_cra_cut", ext: "mp4", encoder: "libx265", frames: 100, args: []string{"-c:v", "libx265", "-x265-params", "log-level=error:keyint=24:min-keyint=24:bframes=3:open-gop=1", "-pix_fmt", "yuv420p"},
		post: func(t testing.TB, dir, in string) string {
			// The stream starts at a CRA: its RASL pictures are skipped by the decoder.
			out := filepath.Join(dir, "hevc_cra_cut.mkv")
			runFFmpeg(t, "-ss", "1.0", "-i", in, "-c", "copy", out)
			return out
		}},
	{name: "ts_midstream", ext: "ts", encoder: "libx264", frames: 150, args: []string{"-c:v", "libx264", "-bf", "3", "-g", "30", "-pix_fmt", "yuv420p", "-f", "mpegts"},
		post: func(t testing.TB, dir, in string) string {
			// A capture joined mid-GOP: the first third of the transport stream is gone.
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "ts_midstream_cut.ts")
			if err := os.WriteFile(out, b[(len(b)/3/188)*188:], 0o644); err != nil {
				t.Fatal(err)
			}
			return out
		}},
	{name: "editlist", ext: "mp4", encoder: "libx264", frames: 120, args: []string{"-c:v", "libx264", "-bf", "2", "-g", "30", "-pix_fmt", "yuv420p"},
		post: func(t testing.TB, dir, in string) string {
			// Cutting with stream copy at a non-keyframe makes ffmpeg write an edit list whose leading
			// packets (from the previous keyframe) are flagged discard on reading.
			out := filepath.Join(dir, "editlist_cut.mp4")
			runFFmpeg(t, "-ss", "1.3", "-i", in, "-c", "copy", out)
			return out
		}},
}

var (
	fxMu    sync.Mutex
	fxDir   string
	fxPaths = map[string]string{}
	fxEnc   string
)

func TestMain(m *testing.M) {
	SetLogLevel("quiet") // the broken inputs are meant to make FFmpeg complain
	code := m.Run()
	if fxDir != "" {
		os.RemoveAll(fxDir)
	}
	// -tags leakcheck: every FFmpeg object the tests made must be freed (STYLE.md B6).
	if n := LiveHandles(); code == 0 && n != 0 {
		println("leak:", n, "FFmpeg handles of decode are live after the tests; allocated at:")
		pprof.Lookup("framesweep/decode.handles").WriteTo(os.Stderr, 1)
		code = 1
	}
	os.Exit(code)
}

// requireFFmpeg needs the ffmpeg and ffprobe CLIs (make deps installs them; testenv: a skip on a laptop
// without them, a failure under CI).
func requireFFmpeg(t testing.TB) {
	t.Helper()
	testenv.Need(t, "ffmpeg")
	testenv.Need(t, "ffprobe")
}

func runFFmpeg(t testing.TB, args ...string) {
	t.Helper()
	cmd := exec.Command("ffmpeg", append([]string{"-nostdin", "-v", "error", "-y"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
}

func haveEncoder(t testing.TB, name string) bool {
	fxMu.Lock()
	defer fxMu.Unlock()
	if fxEnc == "" {
		out, _ := exec.Command("ffmpeg", "-hide_banner", "-encoders").Output()
		fxEnc = string(out)
	}
	return strings.Contains(fxEnc, " "+name+" ")
}

// fixturePath generates (once per test binary) and returns the fixture's file.
func fixturePath(t testing.TB, f fixture) string {
	t.Helper()
	requireFFmpeg(t)
	if f.encoder != "" && !haveEncoder(t, f.encoder) {
		testenv.Missing(t, "ffmpeg has no %s encoder: %s fixture not generated", f.encoder, f.name)
	}
	fxMu.Lock()
	defer fxMu.Unlock()
	if p, ok := fxPaths[f.name]; ok {
		return p
	}
	if fxDir == "" {
		d, err := os.MkdirTemp("", "framesweep-decode-fx-")
		if err != nil {
			t.Fatal(err)
		}
		fxDir = d
	}
	pf := "yuv444p"
	if f.pixFmt != "" {
		pf = f.pixFmt
	}
	src := fmt.Sprintf("color=c=black:s=%dx%d:r=25,trim=end_frame=%d,format=%s,"+
		"geq=lum='if(mod(floor(N/pow(2\\,floor(X/16)))\\,2)\\,235\\,16)':cb=128:cr=128", fxW, fxH, f.frames, pf)
	if f.vf != "" {
		src += "," + f.vf
	}
	out := filepath.Join(fxDir, f.name+"."+f.ext)
	args := append([]string{"-f", "lavfi", "-i", src}, f.args...)
	runFFmpeg(t, append(args, out)...)
	if f.post != nil {
		out = f.post(t, fxDir, out)
	}
	fxPaths[f.name] = out
	return out
}

// barcode reads the frame number drawn into an unrotated fixture frame.
func barcode(img []byte, w, h, stride int) int {
	n := 0
	for b := 0; b < stripeBits; b++ {
		sum, cnt := 0, 0
		for y := h / 6; y < h-h/6; y += 2 {
			for x := 16*b + 4; x < 16*b+12; x++ {
				sum += int(img[y*stride+3*x+1])
				cnt++
			}
		}
		if sum/cnt > 128 {
			n |= 1 << b
		}
	}
	return n
}

func fixtureByName(name string) fixture {
	for _, f := range fixtures {
		if f.name == name {
			return f
		}
	}
	panic("no fixture " + name)
}
