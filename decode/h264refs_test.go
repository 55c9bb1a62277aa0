package decode

import (
	"bytes"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/sampler"
)

// Fixtures for the reference analysis (h26x/h264refs.go): x264's fast presets make reference B-frames no
// P-frame uses (ref=1, B-pyramid), also with several slices per picture and a strict pyramid; an
// interlaced stream is outside the model.
var refFixtures = []fixture{
	{name: "h264_pyramid_veryfast", ext: "mkv", encoder: "libx264", frames: 200,
		args: []string{"-c:v", "libx264", "-preset", "veryfast", "-g", "100", "-pix_fmt", "yuv420p"}},
	{name: "h264_pyramid_slices", ext: "mp4", encoder: "libx264", frames: 120,
		args: []string{"-c:v", "libx264", "-preset", "faster", "-slices", "3", "-x264-params", "b-pyramid=strict:bframes=4:ref=1", "-g", "60", "-pix_fmt", "yuv420p"}},
	{name: "h264_interlaced", ext: "mp4", encoder: "libx264", frames: 60,
		args: []string{"-c:v", "libx264", "-flags", "+ildct", "-x264-params", "interlaced=1", "-g", "30", "-pix_fmt", "yuv420p"}},
}

// TestRefSkipIdentical: frames read with the unused reference pictures left out are byte-identical to
// the same frames with every packet decoded (Options.DecodeAll), with one decoder and one thread, one
// decoder with frame threads, and segments on two decoders at once, for random and lmms-eval-like
// index sets, on the fixtures above and on real files; the fast-preset fixtures do leave pictures out,
// the interlaced one is decoded as before.
func TestRefSkipIdentical(t *testing.T) {
	var paths []string
	for _, fx := range refFixtures {
		paths = append(paths, fixturePath(t, fx))
	}
	shared := testenv.SharedVideos(t)
	for _, name := range []string{"androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4", "torchcodec/nasa_13013.mp4",
		"decord/flipping_a_pancake.mkv"} {
		paths = append(paths, filepath.Join(shared, name))
	}
	for k, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			v, err := Open(p, Options{})
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
				want := readAll(t, p, Options{NoAutorotate: true, DecodeAll: true}, 0, idx)
				for _, c := range []struct {
					name    string
					opts    Options
					workers int
				}{{"one thread", Options{Threads: 1}, 0}, {"frame threads", Options{Threads: 3}, 0}, {"two decoders", Options{}, 2}} {
					c.opts.NoAutorotate = true
					got := readAll(t, p, c.opts, c.workers, idx)
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
					left += got.st.SkippedReferences
				}
			}
			switch {
			case k < 2 && (!modelled || left == 0):
				t.Errorf("fast-preset fixture: modelled %v, %d reference pictures left out", modelled, left)
			case k == 2 && (modelled || left != 0):
				t.Errorf("interlaced fixture: modelled %v, %d reference pictures left out", modelled, left)
			}
			t.Logf("%d frames, modelled %v: %d reference pictures left out over %d index sets × 3 plans", n, modelled, left, len(sets))
		})
	}
}

// lmmsIndices is the union of lmms-eval's read_video_pyav indices for 8, 16, 32 and 64 frames.
func lmmsIndices(n int) []int {
	seen := map[int]bool{}
	var out []int
	for _, k := range []int{8, 16, 32, 64} {
		for _, x := range sampler.NumpyLinspace(0, float64(n-1), k) {
			if i := int(x); !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}
