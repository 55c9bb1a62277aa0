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

// avcc frames NAL units with 4-byte big-endian lengths, as MP4/MKV packets carry them.
func avcc(nals ...[]byte) []byte {
	var b []byte
	for _, n := range nals {
		b = append(b, byte(len(n)>>24), byte(len(n)>>16), byte(len(n)>>8), byte(len(n)))
		b = append(b, n...)
	}
	return b
}

func TestH264Disposable(t *testing.T) {
	annexB := func(nals ...[]byte) []byte {
		var b []byte
		for i, n := range nals {
			if i == 0 {
				b = append(b, 0, 0, 0, 1)
			} else {
				b = append(b, 0, 0, 1)
			}
			b = append(b, n...)
		}
		return b
	}
	nonRefB := []byte{0x01, 0x9e, 0x11} // nal_ref_idc 0, type 1
	refP := []byte{0x41, 0x9a, 0x22}    // nal_ref_idc 2, type 1
	idr := []byte{0x65, 0x88, 0x80}     // type 5
	sei := []byte{0x06, 0x05, 0x01}     // type 6
	aud := []byte{0x09, 0xf0}
	for _, c := range []struct {
		name string
		data []byte
		len  int
		want bool
	}{
		{"avcc non-ref slice", avcc(nonRefB), 4, true},
		{"avcc sei + non-ref slices", avcc(sei, nonRefB, nonRefB), 4, true},
		{"avcc reference slice", avcc(refP), 4, false},
		{"avcc mixed slices", avcc(nonRefB, refP), 4, false},
		{"avcc idr", avcc(idr), 4, false},
		{"avcc no slice", avcc(sei), 4, false},
		{"avcc truncated length", avcc(nonRefB)[:2], 4, false},
		{"avcc length past the end", append([]byte{0, 0, 0, 9}, nonRefB...), 4, false},
		{"avcc 2-byte lengths", []byte{0, 3, 0x01, 0x9e, 0x11}, 2, true},
		{"length size 3", avcc(nonRefB), -1, false},
		{"forbidden bit", avcc([]byte{0x81, 0x9e}), 4, false},
		{"svc extension", avcc(nonRefB, []byte{0x14, 0x80}), 4, false},
		{"annex-b aud + non-ref", annexB(aud, nonRefB), 0, true},
		{"annex-b reference", annexB(aud, refP), 0, false},
		{"annex-b no start code", nonRefB, 0, false},
		{"empty", nil, 4, false},
	} {
		if got := h264Disposable(c.data, c.len); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if n := h264NALLength([]byte{1, 0x64, 0, 0x1f, 0xff, 0xe1, 0}); n != 4 {
		t.Errorf("avcC lengthSizeMinusOne 3: %d", n)
	}
	if n := h264NALLength([]byte{1, 0x64, 0, 0x1f, 0xfe, 0xe1, 0}); n != -1 {
		t.Errorf("avcC length size 3: %d, want -1 (refused)", n)
	}
	if n := h264NALLength(nil); n != 0 {
		t.Errorf("no extradata: %d, want 0 (Annex-B)", n)
	}
}

func TestHEVCDisposable(t *testing.T) {
	nal := func(typ, tid byte, rest ...byte) []byte { return append([]byte{typ << 1, tid + 1}, rest...) }
	for _, c := range []struct {
		name   string
		data   []byte
		maxTid int
		want   bool
	}{
		{"TRAIL_N", avcc(nal(0, 0, 0xaf)), 0, true},
		{"SEI + TRAIL_N slices", avcc(nal(39, 0, 1), nal(0, 0, 0xaf), nal(0, 0, 0x2f)), 0, true},
		{"RASL_N", avcc(nal(8, 0, 0xaf)), 0, true},
		{"TRAIL_R", avcc(nal(1, 0, 0xaf)), 0, false},
		{"TRAIL_N then TRAIL_R", avcc(nal(0, 0, 0xaf), nal(1, 0, 0xaf)), 0, false},
		{"CRA", avcc(nal(21, 0, 0xaf)), 0, false},
		{"IDR", avcc(nal(19, 0, 0xaf)), 0, false},
		{"reserved RSV_VCL_N10", avcc(nal(10, 0, 0xaf)), 0, false},
		{"TRAIL_N below the top sub-layer", avcc(nal(0, 0, 0xaf)), 1, false},
		{"TSA_N at the top sub-layer", avcc(nal(2, 1, 0xaf)), 1, true},
		{"layer 1", avcc([]byte{0x01, 0x09, 0xaf}), 0, false},
		{"parameter sets only", avcc(nal(32, 0, 1), nal(33, 0, 1)), 0, false},
		{"truncated", avcc(nal(0, 0, 0xaf))[:3], 0, false},
	} {
		if got := hevcDisposable(c.data, 4, c.maxTid); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	hvcc := make([]byte, 23)
	hvcc[0] = 1
	hvcc[21] = 1<<3 | 3 // one temporal layer, 4-byte lengths
	if n, tid := hevcConfig(hvcc); n != 4 || tid != 0 {
		t.Errorf("hvcC: length size %d, max TemporalId %d", n, tid)
	}
	hvcc[21] = 3 // numTemporalLayers 0: unknown
	if _, tid := hevcConfig(hvcc); tid != -1 || disposableFunc(astiav.CodecIDHevc, hvcc) != nil {
		t.Errorf("hvcC with an unknown layer count: max TemporalId %d, want -1 and nothing dropped", tid)
	}
	if disposableFunc(astiav.CodecIDHevc, nil) != nil || disposableFunc(astiav.CodecIDVp9, nil) != nil {
		t.Error("raw Annex-B HEVC or VP9: something would be dropped")
	}
}

func FuzzH264Disposable(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 0x01, 0x9e, 0x11}, 4)
	f.Add([]byte{0, 0, 1, 0x09, 0xf0, 0, 0, 1, 0x01, 0x9e}, 0)
	f.Add(avcc([]byte{0x06, 0x05, 0x01}, []byte{0x01, 0x9e, 0x11}, []byte{0x01, 0x9e, 0x11}), 4)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < -1 || n > 4 {
			n = 4
		}
		h := h264Disposable(data, n) // must not panic on any input
		hv := hevcDisposable(data, n, 0)
		r := hevcIsRASL(data, n)
		// A view of the packet's first bytes, when it says anything, says what the whole packet says.
		for k := 0; k <= len(data); k++ {
			pv := packetView{head: data[:k], size: len(data)}
			if got, known := h264DisposableIn(pv, n); known && got != h {
				t.Fatalf("H.264: the first %d of %d bytes say %v, the packet %v", k, len(data), got, h)
			}
			if got, known := hevcDisposableIn(pv, n, 0); known && got != hv {
				t.Fatalf("HEVC: the first %d of %d bytes say %v, the packet %v", k, len(data), got, hv)
			}
			if got, known := hevcIsRASLIn(pv, n); known && got != r {
				t.Fatalf("RASL: the first %d of %d bytes say %v, the packet %v", k, len(data), got, r)
			}
		}
	})
}

// TestPacketViews: the scan reads the first packetHeadBytes of a packet; a one-slice picture is decided
// from them, a picture whose later slices start past them needs the whole packet (known false), and
// Annex-B needs the whole packet too.
func TestPacketViews(t *testing.T) {
	big := make([]byte, 1000)
	big[0] = 0x01 // nal_ref_idc 0, type 1
	oneSlice := avcc([]byte{0x06, 0x05, 0x01}, big)
	if d, known := h264DisposableIn(packetView{head: oneSlice[:packetHeadBytes], size: len(oneSlice)}, 4); !known || !d {
		t.Errorf("one non-reference slice: disposable %v, known %v from the head", d, known)
	}
	ref := append([]byte{0x41}, big[1:]...) // nal_ref_idc 2
	twoSlices := avcc(big, ref)
	if _, known := h264DisposableIn(packetView{head: twoSlices[:packetHeadBytes], size: len(twoSlices)}, 4); known {
		t.Error("a second slice past the head: decided without reading it")
	}
	if h264Disposable(twoSlices, 4) {
		t.Error("a reference slice after a non-reference one: disposable")
	}
	annexB := append([]byte{0, 0, 0, 1}, big...)
	if _, known := h264DisposableIn(packetView{head: annexB[:packetHeadBytes], size: len(annexB)}, 0); known {
		t.Error("Annex-B decided from the head")
	}
	hevc := avcc([]byte{8 << 1, 1, 0xaf}, make([]byte, 500)) // RASL_N, then a NAL unit starting past the head
	if r, known := hevcIsRASLIn(packetView{head: hevc[:packetHeadBytes], size: len(hevc)}, 4); !known || !r {
		t.Errorf("RASL first: %v, known %v", r, known)
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

// TestHEVCLengthSize3: one hvcC parser serves the index scan (RASL pictures) and the non-reference
// drop. A length size of 3 is read as 3, as FFmpeg's decoder splits such packets, so RASL pictures are
// found; nothing is dropped on such a stream, as for H.264 (14496-15 does not allow it).
func TestHEVCLengthSize3(t *testing.T) {
	hvcc := make([]byte, 23)
	hvcc[0] = 1
	hvcc[21] = 1<<3 | 2 // one temporal layer, lengthSizeMinusOne 2
	if n, tid := hevcConfig(hvcc); n != 3 || tid != 0 {
		t.Fatalf("hvcC length size 3: got length size %d, max TemporalId %d", n, tid)
	}
	if disposableFunc(astiav.CodecIDHevc, hvcc) != nil {
		t.Error("length size 3: non-reference pictures would be dropped")
	}
	len3 := func(nals ...[]byte) []byte {
		var b []byte
		for _, n := range nals {
			b = append(b, byte(len(n)>>16), byte(len(n)>>8), byte(len(n)))
			b = append(b, n...)
		}
		return b
	}
	nal := func(typ byte) []byte { return []byte{typ << 1, 1, 0xaf, 0x11} }
	for _, c := range []struct {
		name    string
		data    []byte
		lenSize int
		want    bool
	}{
		{"3-byte lengths, SEI + RASL_N", len3(nal(39), nal(8)), 3, true},
		{"3-byte lengths, RASL_R", len3(nal(9)), 3, true},
		{"3-byte lengths, TRAIL_R", len3(nal(1)), 3, false},
		{"3-byte lengths read as 4", len3(nal(8)), 4, false},
		{"4-byte lengths, RASL_N", avcc(nal(32), nal(8)), 4, true},
		{"4-byte lengths, RADL_N", avcc(nal(6)), 4, false},
		{"Annex-B despite hvcC", append([]byte{0, 0, 0, 1}, append(nal(8), 0, 0, 1, 2, 1)...), 4, true},
		{"Annex-B, AUD first", append([]byte{0, 0, 1}, append([]byte{35 << 1, 1, 0x50}, append([]byte{0, 0, 1}, nal(9)...)...)...), 0, true},
		{"Annex-B without a start code", nal(8), 0, false},
		{"truncated", len3(nal(8))[:4], 3, false},
	} {
		if got := hevcIsRASL(c.data, c.lenSize); got != c.want {
			t.Errorf("%s: RASL %v, want %v", c.name, got, c.want)
		}
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
