package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/resize"
)

// TestReadMatchesInProcess: frames read through a worker are the frames decode returns in process, bit
// for bit, with the same indices, timestamps and stats.
func TestReadMatchesInProcess(t *testing.T) {
	t.Parallel()
	path := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	indices := []int{97, 3, 3, 0, 119, 45, 61}
	opts := decode.Options{Threads: 1}

	type got struct {
		index int
		pts   int64
		sec   float64
		key   bool
		w, h  int
		pix   []byte
	}
	collect := func(dst *[]got) func(*decode.Frame) error {
		return func(f *decode.Frame) error {
			*dst = append(*dst, got{f.Index, f.PTS, f.Seconds, f.Key, f.W, f.H, bytes.Clone(f.Packed())})
			return nil
		}
	}
	var want, have []got
	v, err := decode.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	wantSt, err := v.Read(indices, collect(&want))
	v.Close()
	if err != nil {
		t.Fatal(err)
	}

	r := &Runner{Exe: workerBin(t), Limits: Limits{Timeout: 30 * time.Second, Memory: 1 << 30}}
	st, err := r.Read(context.Background(), path, indices, opts, collect(&have))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st, wantSt) {
		t.Errorf("stats %+v, in process %+v", st, wantSt)
	}
	if len(have) != len(want) || len(have) != 6 {
		t.Fatalf("%d frames through the worker, %d in process, want 6", len(have), len(want))
	}
	for i := range want {
		w, h := want[i], have[i]
		if w.index != h.index || w.pts != h.pts || w.sec != h.sec || w.key != h.key || w.w != h.w || w.h != h.h {
			t.Errorf("frame %d: worker %+v, in process %+v", i, h.index, w.index)
		}
		if !bytes.Equal(w.pix, h.pix) {
			t.Errorf("frame %d: pixels differ", w.index)
		}
	}

	info, err := r.Probe(context.Background(), path, opts, true)
	if err != nil {
		t.Fatal(err)
	}
	if info.Frames != 120 || len(info.PTSS) != 120 || info.Codec != "h264" {
		t.Errorf("probe: %d frames, %d pts, codec %q", info.Frames, len(info.PTSS), info.Codec)
	}
}

// TestRemoteErrorsKeepTheirSentinels: handled decode errors cross the process boundary as RemoteErrors
// that still match decode's sentinels, name the file, and are not crashes.
func TestRemoteErrorsKeepTheirSentinels(t *testing.T) {
	t.Parallel()
	r := &Runner{Exe: workerBin(t), Limits: Limits{Timeout: 30 * time.Second, Memory: 1 << 30}}
	cases := []struct {
		name    string
		path    string
		indices []int
		want    error
	}{
		{"missing", filepath.Join(t.TempDir(), "no", "such", "file.mp4"), []int{0}, decode.ErrNotFound},
		{"vvc", testenv.SharedVideo(t, "mp4ff/vvc_400kbps_2s.mp4"), []int{0}, decode.ErrUnsupportedCodec},
		{"audio-only", testenv.SharedVideo(t, "androidx-media/sample_audio_only.mp4"), []int{0}, decode.ErrNoVideoStream},
		{"past-end", testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4"), []int{5, 120}, decode.ErrOutOfRange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			_, err := r.Read(context.Background(), tc.path, tc.indices, decode.Options{}, func(*decode.Frame) error { n++; return nil })
			var re *RemoteError
			if !errors.As(err, &re) || !errors.Is(err, tc.want) {
				t.Fatalf("err = %v (%T), want a RemoteError matching %v", err, err, tc.want)
			}
			if errors.Is(err, ErrWorkerCrashed) || !bytes.Contains([]byte(err.Error()), []byte(filepath.Base(tc.path))) {
				t.Errorf("error %q: a crash, or does not name the file", err)
			}
			if n != 0 {
				t.Errorf("%d frames delivered", n)
			}
		})
	}
}

// TestConsumerErrorStopsWorker: an error from the callback ends the job at once and is returned as is.
func TestConsumerErrorStopsWorker(t *testing.T) {
	t.Parallel()
	path := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	r := &Runner{Exe: workerBin(t), Limits: Limits{Timeout: 30 * time.Second}}
	stop := errors.New("enough")
	var seen []int
	_, err := r.Read(context.Background(), path, []int{10, 20, 30, 40}, decode.Options{}, func(f *decode.Frame) error {
		seen = append(seen, f.Index)
		if f.Index == 20 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	if !slices.Equal(seen, []int{10, 20}) {
		t.Errorf("frames seen %v", seen)
	}
}

// TestReadResized: frames resized in the worker equal decode + resize in process, and Usage reports the
// worker's peak RSS.
func TestReadResized(t *testing.T) {
	t.Parallel()
	path := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	indices := []int{0, 50, 119}
	want := map[int][]byte{}
	v, err := decode.Open(path, decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Read(indices, func(f *decode.Frame) error {
		img, err := resize.Resize(resize.DefaultKernel, &f.Image, 64, 48)
		if err != nil {
			return err
		}
		want[f.Index] = img.Packed()
		return nil
	})
	v.Close()
	if err != nil {
		t.Fatal(err)
	}
	var peak int64
	r := &Runner{Exe: workerBin(t), Limits: Limits{Timeout: 30 * time.Second}, Usage: func(u Usage) { peak = u.PeakRSS }}
	n := 0
	_, err = r.ReadResized(context.Background(), path, indices, decode.Options{}, Size{W: 64, H: 48}, func(f *decode.Frame) error {
		n++
		if f.W != 64 || f.H != 48 || !bytes.Equal(f.Packed(), want[f.Index]) {
			t.Errorf("frame %d: %dx%d, pixels equal %v", f.Index, f.W, f.H, bytes.Equal(f.Packed(), want[f.Index]))
		}
		return nil
	})
	if err != nil || n != len(indices) {
		t.Fatalf("err %v, %d frames", err, n)
	}
	if peak <= 0 {
		t.Errorf("Usage reported peak RSS %d", peak)
	}
	_, err = r.ReadResized(context.Background(), path, indices, decode.Options{}, Size{W: 64, H: 48, Kernel: "nope"},
		func(*decode.Frame) error { return nil })
	if !errors.Is(err, resize.ErrUnknownKernel) || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("unknown kernel: err = %v (want ErrUnknownKernel, naming the file first)", err)
	}
}

// TestReadResizedSizeChange: a stream whose resolution changes mid-way (two H.264 MPEG-TS segments,
// 320x240 then 160x120) is resized frame by frame from each frame's own size, as in process.
func TestReadResizedSizeChange(t *testing.T) {
	t.Parallel()
	// The joined segments break MPEG-TS continuity; FFmpeg would log "Packet corrupt" for the in-process
	// reference decode (the worker silences its own log, as every command does).
	decode.SetLogLevel("quiet")
	dir := t.TempDir()
	var ts []byte
	for i, size := range []string{"320x240", "160x120"} {
		p := filepath.Join(dir, fmt.Sprintf("%d.ts", i))
		out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "lavfi",
			"-i", "testsrc2=s="+size+":r=10", "-t", "1", "-c:v", "libx264", "-g", "5", "-bf", "0",
			"-output_ts_offset", strconv.Itoa(i), "-f", "mpegts", p).CombinedOutput()
		if err != nil {
			t.Fatalf("ffmpeg: %v: %s", err, out)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, b...)
	}
	path := filepath.Join(dir, "sizechange.ts")
	if err := os.WriteFile(path, ts, 0o644); err != nil {
		t.Fatal(err)
	}
	indices := []int{5, 15}
	want := map[int][]byte{}
	srcW := map[int]int{}
	v, err := decode.Open(path, decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Read(indices, func(f *decode.Frame) error {
		srcW[f.Index] = f.W
		img, err := resize.Resize(resize.DefaultKernel, &f.Image, 64, 48)
		if err != nil {
			return err
		}
		want[f.Index] = img.Packed()
		return nil
	})
	v.Close()
	if err != nil {
		t.Fatal(err)
	}
	if srcW[5] != 320 || srcW[15] != 160 {
		t.Fatalf("fixture: source widths %v, want 320 then 160", srcW)
	}
	r := &Runner{Exe: workerBin(t), Limits: Limits{Timeout: 30 * time.Second}}
	n := 0
	_, err = r.ReadResized(context.Background(), path, indices, decode.Options{}, Size{W: 64, H: 48}, func(f *decode.Frame) error {
		n++
		if f.W != 64 || f.H != 48 || !bytes.Equal(f.Packed(), want[f.Index]) {
			t.Errorf("frame %d: %dx%d, pixels equal %v", f.Index, f.W, f.H, bytes.Equal(f.Packed(), want[f.Index]))
		}
		return nil
	})
	if err != nil || n != len(indices) {
		t.Fatalf("err %v, %d frames", err, n)
	}
}

// TestStreamAndDamageCrossTheBoundary: Options.Stream and Options.OnDamaged reach the worker; the
// damaged frame of decord's corrupted.mp4 (32, concealed by FFmpeg) comes back as in process: refused
// with an error matching decode.ErrDamaged whose decode.DamagedFrames is [32] (fail, the default),
// or delivered with Frame.Damaged (keep); Stats.Damaged lists it either way.
func TestStreamAndDamageCrossTheBoundary(t *testing.T) {
	t.Parallel()
	r := &Runner{Exe: workerBin(t), Limits: Limits{Timeout: 30 * time.Second, Memory: 1 << 30}}
	nasa := testenv.SharedVideo(t, "torchcodec/nasa_13013.mp4")
	for _, c := range []struct {
		stream *int
		want   int
		frames int
	}{{nil, 3, 390}, {decode.StreamAt(0), 0, 325}} {
		info, err := r.Probe(context.Background(), nasa, decode.Options{Stream: c.stream}, false)
		if err != nil || info.StreamIndex != c.want || info.Frames != c.frames {
			t.Fatalf("probe stream %v: %v, stream %d, %d frames; want %d, %d", c.stream, err, info.StreamIndex, info.Frames, c.want, c.frames)
		}
	}
	if _, err := r.Probe(context.Background(), nasa, decode.Options{Stream: decode.StreamAt(1)}, false); !errors.Is(err, decode.ErrNoSuchStream) {
		t.Fatalf("stream 1 (audio): %v, want ErrNoSuchStream", err)
	}

	path := testenv.SharedVideo(t, "decord/corrupted.mp4")
	var got []int
	st, err := r.Read(context.Background(), path, []int{31, 32, 33}, decode.Options{}, func(f *decode.Frame) error {
		got = append(got, f.Index)
		return nil
	})
	var re *RemoteError
	if !errors.As(err, &re) || !errors.Is(err, decode.ErrDamaged) || !errors.Is(err, decode.ErrFrameFailed) ||
		!slices.Equal(decode.DamagedFrames(err), []int{32}) || len(decode.FailedFrames(err)) != 0 || re.DamageCause == "" {
		t.Fatalf("fail: %v (%T), damaged %v", err, err, decode.DamagedFrames(err))
	}
	if !slices.Equal(got, []int{31, 33}) || !slices.Equal(st.Damaged, []int{32}) || st.OnDamaged != "fail" {
		t.Fatalf("fail: delivered %v, stats %+v", got, st)
	}

	var flagged []int
	got = got[:0]
	st, err = r.Read(context.Background(), path, []int{31, 32, 33}, decode.Options{OnDamaged: decode.DamagedKeep}, func(f *decode.Frame) error {
		got = append(got, f.Index)
		if f.Damaged {
			flagged = append(flagged, f.Index)
		}
		return nil
	})
	if err != nil || !slices.Equal(got, []int{31, 32, 33}) || !slices.Equal(flagged, []int{32}) || !slices.Equal(st.Damaged, []int{32}) || st.OnDamaged != "keep" {
		t.Fatalf("keep: %v, delivered %v, flagged %v, stats %+v", err, got, flagged, st)
	}
}
