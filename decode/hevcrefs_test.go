package decode

import (
	"bytes"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/decode/internal/h26x"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// Fixtures for the HEVC reference analysis (h26x/hevcrefs.go), GOP structures x265 makes: a B-pyramid
// with one reference picture (its middle B-frames are references only the B-frames beside them use),
// the same with open GOPs (CRA pictures with RASL pictures before them on screen), 10-bit with two
// references (P-frames use the middle B-frames: little is left out), and temporal layers (the
// unreferenced B-frames on sub-layer 1).
var hevcRefFixtures = []fixture{
	{name: "hevc_pyramid_ref1", ext: "mkv", encoder: "libx265", frames: 120,
		args: []string{"-c:v", "libx265", "-preset", "superfast", "-x265-params", "log-level=error:keyint=60:min-keyint=60:bframes=4:b-pyramid=1:ref=1:open-gop=0", "-pix_fmt", "yuv420p"}},
	{name: "hevc_opengop_rasl", ext: "mp4", encoder: "libx265", frames: 100,
		args: []string{"-c:v", "libx265", "-preset", "superfast", "-x265-params", "log-level=error:keyint=24:min-keyint=24:scenecut=0:bframes=3:b-pyramid=1:ref=1:open-gop=1", "-pix_fmt", "yuv420p"}},
	{name: "hevc_10bit_ref2", ext: "mkv", encoder: "libx265", frames: 100,
		args: []string{"-c:v", "libx265", "-preset", "veryfast", "-x265-params", "log-level=error:keyint=50:bframes=4:b-pyramid=1:ref=2", "-pix_fmt", "yuv420p10le"}},
	{name: "hevc_temporal_layers", ext: "mkv", encoder: "libx265", frames: 120,
		args: []string{"-c:v", "libx265", "-preset", "superfast", "-x265-params", "log-level=error:keyint=60:bframes=4:b-pyramid=1:ref=1:temporal-layers=1", "-pix_fmt", "yuv420p"}},
}

// TestHEVCRefSkipIdentical: frames read with the unused HEVC reference pictures left out are
// byte-identical to the same frames with every packet decoded (Options.DecodeAll), with one thread,
// frame threads and two decoders at once, for random and lmms-eval-like index sets, on the fixtures
// above, decode's other HEVC fixtures and two real files; the one-reference fixtures do leave pictures
// out.
func TestHEVCRefSkipIdentical(t *testing.T) {
	type video struct {
		path      string
		mustLeave bool
	}
	var videos []video
	for _, fx := range hevcRefFixtures {
		videos = append(videos, video{fixturePath(t, fx), fx.name != "hevc_10bit_ref2"})
	}
	for _, name := range []string{"hevc", "hevc_10bit", "hevc_cra_cut"} {
		videos = append(videos, video{fixturePath(t, fixtureByName(name)), false})
	}
	shared := testenv.SharedVideos(t)
	for _, name := range []string{"torchcodec/h265_video.mp4", "torchcodec/h265_10bits.mp4"} {
		videos = append(videos, video{filepath.Join(shared, name), false})
	}
	for _, vd := range videos {
		t.Run(filepath.Base(vd.path), func(t *testing.T) {
			v, err := Open(vd.path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			n, modelled := v.NumFrames(), v.refs != nil
			v.Close()
			rng := rand.New(rand.NewSource(int64(n)))
			sets := [][]int{{n - 1}, lmmsIndices(n)}
			for _, size := range []int{3, 12} {
				var idx []int
				for i := 0; i < size; i++ {
					idx = append(idx, rng.Intn(n))
				}
				sets = append(sets, idx)
			}
			left := 0
			for _, idx := range sets {
				left += compareWithDecodeAll(t, vd.path, idx)
			}
			if vd.mustLeave && (!modelled || left == 0) {
				t.Errorf("modelled %v, %d reference pictures left out", modelled, left)
			}
			t.Logf("%d frames, modelled %v: %d reference pictures left out over %d index sets × 3 plans", n, modelled, left, len(sets))
		})
	}
}

// compareWithDecodeAll reads idx with one thread, frame threads and two decoders at once, compares
// every frame with the decode of every packet, and returns the reference pictures left out in all.
func compareWithDecodeAll(t *testing.T, path string, idx []int) int {
	t.Helper()
	want := readAll(t, path, Options{NoAutorotate: true, DecodeAll: true}, 0, idx)
	left := 0
	for _, c := range []struct {
		name    string
		opts    Options
		workers int
	}{{"one thread", Options{Threads: 1}, 0}, {"frame threads", Options{Threads: 3}, 0}, {"two decoders", Options{}, 2}} {
		c.opts.NoAutorotate = true
		got := readAll(t, path, c.opts, c.workers, idx)
		if got.err != nil || want.err != nil || len(got.frames) != len(want.frames) {
			t.Fatalf("%s, %d indices: %d frames (%v), every packet: %d frames (%v)", c.name, len(idx), len(got.frames), got.err, len(want.frames), want.err)
		}
		for i, b := range want.frames {
			if !bytes.Equal(got.frames[i], b) {
				t.Fatalf("%s: frame %d differs from the decode of every packet (%d reference pictures left out)", c.name, i, got.st.SkippedReferences)
			}
		}
		if got.st.PacketsSent < got.st.MinPackets {
			t.Errorf("%s: sent %d packets, below the floor %d", c.name, got.st.PacketsSent, got.st.MinPackets)
		}
		if got.st.SingleThreadRedecodes > 0 {
			t.Errorf("%s: %d single-thread re-decodes (a missing reference logged for a picture left out counts as no error)", c.name, got.st.SingleThreadRedecodes)
		}
		left += got.st.SkippedReferences
	}
	return left
}

// TestHEVCLeaveOutNeverNeeded is the property the model must hold, checked against the decoder: for
// random index sets on the fixtures, no picture the plan leaves out is a target, a segment's keyframe
// or a picture decode drops anyway, and the frames read with them left out equal the frames read
// from every packet (so none was a reference of a needed picture).
func TestHEVCLeaveOutNeverNeeded(t *testing.T) {
	for _, fx := range hevcRefFixtures {
		p := fixturePath(t, fx)
		t.Run(fx.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(7))
			left := 0
			for trial := 0; trial < 10; trial++ {
				v, err := Open(p, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := v.refs.(*h26x.HEVCRefs); !ok {
					v.Close()
					t.Fatalf("not modelled (%T)", v.refs)
				}
				n := v.NumFrames()
				idx := []int{rng.Intn(n)}
				if trial%2 == 1 {
					idx = append(idx, rng.Intn(n), rng.Intn(n))
				}
				targets, err := v.distinctTargets(idx)
				if err != nil {
					t.Fatal(err)
				}
				sched, groups := v.scheduleGroups(targets)
				sched.threads = 1
				v.cutSegments(sched, groups)
				for d, skip := range sched.skip {
					if !skip {
						continue
					}
					inside := false
					for _, s := range sched.segments {
						inside = inside || (d > s.key && d <= s.end)
					}
					if !inside || sched.need[d] || v.pkts[d].nonref {
						t.Fatalf("%v: packet %d left out (inside a segment after its keyframe %v, target %v, non-reference %v)", idx, d, inside, sched.need[d], v.pkts[d].nonref)
					}
					left++
				}
				v.Close()
				compareWithDecodeAll(t, p, idx)
			}
			if left == 0 && fx.name != "hevc_10bit_ref2" {
				t.Error("nothing was left out")
			}
			t.Logf("%d pictures left out over 10 index sets", left)
		})
	}
}
