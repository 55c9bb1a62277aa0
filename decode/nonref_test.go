package decode

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/asticode/go-astiav"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestNonRefSkipIdentical: frames read with unneeded non-reference pictures left out of the decoder are
// byte-identical to the same frames with every packet decoded (Options.DecodeAll), on the H.264 and
// HEVC fixtures (MP4/AVCC, MKV, MPEG-TS and raw Annex-B, FLV, open GOP, CRA cut, VFR, a cut stream) and
// on real files (x264 B-frames, Android's pyramid B-frames whose B pictures are references, a TS
// capture, two HEVC files).
func TestNonRefSkipIdentical(t *testing.T) {
	var paths []string
	skipped := map[string]bool{}
	for _, fx := range fixtures {
		if fx.encoder == "libx264" || fx.encoder == "libx265" {
			p := fixturePath(t, fx)
			paths = append(paths, p)
			// Raw Annex-B is identified by output order: nothing is dropped there.
			skipped[p] = fx.name == "h264_bframes_opengop" || fx.name == "mpegts" || fx.name == "hevc"
		}
	}
	shared := testenv.SharedVideos(t)
	for _, name := range []string{"androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4", "androidx-media/sample_h264.ts",
		"torchcodec/nasa_13013.mp4", "decord/flipping_a_pancake.mkv", "torchcodec/h265_video.mp4", "torchcodec/h265_10bits.mp4"} {
		paths = append(paths, filepath.Join(shared, name))
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			read := func(o Options, idx []int) (map[int][]byte, Stats) {
				t.Helper()
				o.NoAutorotate = true
				v, err := Open(p, o)
				if err != nil {
					t.Fatal(err)
				}
				defer v.Close()
				got := map[int][]byte{}
				st, err := v.Read(idx, func(f *Frame) error { got[f.Index] = bytes.Clone(f.Packed()); return nil })
				if err != nil {
					t.Fatal(err)
				}
				return got, st
			}
			v, err := Open(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := v.NumFrames()
			v.Close()
			for _, step := range []int{3, 7, 16} {
				var idx []int
				for i := step / 2; i < n; i += step {
					idx = append(idx, i)
				}
				want, all := read(Options{DecodeAll: true}, idx)
				got, st := read(Options{}, idx)
				if all.Skipped != 0 {
					t.Fatalf("DecodeAll skipped %d packets", all.Skipped)
				}
				if len(got) != len(idx) || len(want) != len(idx) {
					t.Fatalf("step %d: %d and %d frames of %d", step, len(got), len(want), len(idx))
				}
				for _, i := range idx {
					if !bytes.Equal(got[i], want[i]) {
						t.Fatalf("step %d: frame %d differs when non-reference pictures are skipped", step, i)
					}
				}
				if skipped[p] && st.Skipped == 0 {
					t.Errorf("step %d: nothing skipped in a stream with non-reference B-frames (stats %+v)", step, st)
				}
				t.Logf("step %d: %d frames, decoded %d, skipped %d (%d reference pictures; all packets: decoded %d)", step, len(idx),
					st.Decoded, st.Skipped, st.SkippedReferences, all.Decoded)
			}
		})
	}
}

// TestNonRefSkipManyThreads: with many frame threads the decoder holds a frame for as many packets
// as it has threads; the lost-frame check must count the packets sent after a frame, not the ones
// left out, or a sparse read declares its frames lost (it did, with 32 threads, before the fix).
func TestNonRefSkipManyThreads(t *testing.T) {
	for _, name := range []string{"h264_bframes_opengop", "hevc"} {
		p := fixturePath(t, fixtureByName(name))
		for _, threads := range []int{16, 32} {
			frames := func(all bool) (map[int][]byte, Stats) {
				v, err := Open(p, Options{Threads: threads, DecodeAll: all})
				if err != nil {
					t.Fatal(err)
				}
				defer v.Close()
				var idx []int
				for i := 0; i < v.NumFrames(); i += 9 {
					idx = append(idx, i)
				}
				got := map[int][]byte{}
				st, err := v.Read(idx, func(f *Frame) error { got[f.Index] = bytes.Clone(f.Packed()); return nil })
				if err != nil || len(got) != len(idx) {
					t.Fatalf("%s, %d threads, DecodeAll %v: %d of %d frames: %v", name, threads, all, len(got), len(idx), err)
				}
				return got, st
			}
			want, _ := frames(true)
			got, st := frames(false)
			if st.Skipped == 0 {
				t.Errorf("%s, %d threads: nothing left out", name, threads)
			}
			for i, b := range want {
				if !bytes.Equal(got[i], b) {
					t.Fatalf("%s, %d threads: frame %d differs", name, threads, i)
				}
			}
		}
	}
}

// TestNonRefSkipBadInput: on a damaged stream and on a truncated one, leaving pictures out changes
// no outcome: the same frames are delivered (byte for byte), the same ones refused as damaged, the
// same ones failed, as when every packet is decoded. A target lost while packets were left out is
// decoded again with every packet before it is reported (reader.fail).
func TestNonRefSkipBadInput(t *testing.T) {
	dir := t.TempDir()
	clean, damaged, want := damagedClip(t, dir)
	// MPEG-TS, because a truncated MP4 is refused at Open (its mdat is short).
	ts := filepath.Join(dir, "clean.ts")
	runFFmpeg(t, "-i", clean, "-c", "copy", "-f", "mpegts", ts)
	src, err := os.ReadFile(ts)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.ts")
	if err := os.WriteFile(truncated, src[:len(src)*3/4], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{damaged, truncated} {
		outcome := func(all bool) (map[int][]byte, []int, []int) {
			v, err := Open(p, Options{DecodeAll: all})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			idx := []int{want}
			for i := 1; i < v.NumFrames(); i += 5 {
				idx = append(idx, i)
			}
			got := map[int][]byte{}
			_, err = v.Read(idx, func(f *Frame) error { got[f.Index] = bytes.Clone(f.Packed()); return nil })
			return got, DamagedFrames(err), FailedFrames(err)
		}
		wantFrames, wantDamaged, wantFailed := outcome(true)
		gotFrames, gotDamaged, gotFailed := outcome(false)
		if !slices.Equal(gotDamaged, wantDamaged) || !slices.Equal(gotFailed, wantFailed) || len(gotFrames) != len(wantFrames) {
			t.Fatalf("%s: damaged %v failed %v (%d delivered), every packet: damaged %v failed %v (%d delivered)",
				filepath.Base(p), gotDamaged, gotFailed, len(gotFrames), wantDamaged, wantFailed, len(wantFrames))
		}
		for i, b := range wantFrames {
			if !bytes.Equal(gotFrames[i], b) {
				t.Fatalf("%s: frame %d differs", filepath.Base(p), i)
			}
		}
		t.Logf("%s: %d delivered, damaged %v, failed %v", filepath.Base(p), len(gotFrames), gotDamaged, gotFailed)
	}
}

// TestReadErrorOneLine: frames failed and frames refused in one Read give one line that names the
// file, and errors.Is/As, FailedFrames and DamagedFrames see both parts.
func TestReadErrorOneLine(t *testing.T) {
	v := &Video{path: "x.mp4", name: "x.mp4"}
	if v.readError(nil, nil, "") != nil {
		t.Fatal("no failures: want nil")
	}
	err := v.readError([]*FrameError{{Index: 3, PTS: 3}}, []int{7, 9}, "concealment active")
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "x.mp4: decode: 1 frame(s) failed") || !strings.Contains(msg, "; 2 damaged frame(s) refused: 7, 9") {
		t.Errorf("message %q", msg)
	}
	var fe *FrameError
	if !errors.Is(err, ErrFrameFailed) || !errors.Is(err, ErrDamaged) || !errors.As(err, &fe) || fe.Index != 3 {
		t.Errorf("errors.Is/As: %v", err)
	}
	if !slices.Equal(FailedFrames(err), []int{3}) || !slices.Equal(DamagedFrames(err), []int{7, 9}) {
		t.Errorf("FailedFrames %v, DamagedFrames %v", FailedFrames(err), DamagedFrames(err))
	}
	if err := v.readError(nil, []int{4}, "missing reference"); !errors.Is(err, ErrDamaged) || errors.As(err, &fe) {
		t.Errorf("refused only: %v", err)
	}
}

// TestDisposableFunc: non-reference pictures are told apart only where the framing and the layer
// count are known: not for raw Annex-B HEVC (no hvcC), an hvcC whose layer count is unknown or whose
// length size 14496-15 does not allow (3, read so for RASL pictures only), an avcC of length size 3,
// nor for another codec.
func TestDisposableFunc(t *testing.T) {
	hvcc := make([]byte, 23)
	hvcc[0] = 1
	hvcc[21] = 1<<3 | 3 // one temporal layer, 4-byte lengths
	if disposableFunc(astiav.CodecIDHevc, hvcc) == nil {
		t.Error("HEVC with 4-byte lengths and one layer: nothing would be dropped")
	}
	for _, c := range []struct {
		name      string
		codec     astiav.CodecID
		extradata []byte
	}{
		{"hevc, unknown layer count", astiav.CodecIDHevc, append(hvcc[:21:21], 3, 0)},
		{"hevc, length size 3", astiav.CodecIDHevc, append(hvcc[:21:21], 1<<3|2, 0)},
		{"raw Annex-B hevc", astiav.CodecIDHevc, nil},
		{"h264, length size 3", astiav.CodecIDH264, []byte{1, 0x64, 0, 0x1f, 0xfe, 0xe1, 0}},
		{"vp9", astiav.CodecIDVp9, nil},
	} {
		if disposableFunc(c.codec, c.extradata) != nil {
			t.Errorf("%s: something would be dropped", c.name)
		}
	}
	if disposableFunc(astiav.CodecIDH264, nil) == nil {
		t.Error("Annex-B H.264: non-reference pictures would not be dropped")
	}
}
