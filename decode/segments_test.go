package decode

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// segmentPaths lists every generated fixture (the first nFixtures paths), every video in
// testdata/videos and every shared video.
func segmentPaths(t *testing.T) (paths []string, nFixtures int) {
	for _, fx := range fixtures {
		if fx.encoder == "" || haveEncoder(t, fx.encoder) {
			paths = append(paths, fixturePath(t, fx))
		}
	}
	nFixtures = len(paths)
	local, err := filepath.Glob(filepath.Join("..", "testdata", "videos", "*"))
	if err != nil || len(local) == 0 {
		t.Fatalf("testdata/videos: %v", err)
	}
	paths = append(paths, local...)
	dir, rows := readManifest(t)
	for _, row := range rows {
		paths = append(paths, filepath.Join(dir, row["path"]))
	}
	return paths, nFixtures
}

// readOutcome is what a Read gave: the frames' bytes, the failed and the refused frames, the stats.
type readOutcome struct {
	frames           map[int][]byte
	failed, refused  []int
	damagedDelivered []int
	st               Stats
	err              error
}

func readAll(t *testing.T, path string, opts Options, workers int, idx []int) readOutcome {
	t.Helper()
	v, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.forceWorkers = workers
	out := readOutcome{frames: map[int][]byte{}}
	last := -1
	out.st, out.err = v.Read(idx, func(f *Frame) error {
		if f.Index <= last {
			t.Errorf("frame %d delivered after %d", f.Index, last)
		}
		last = f.Index
		out.frames[f.Index] = bytes.Clone(f.Packed())
		if f.Damaged {
			out.damagedDelivered = append(out.damagedDelivered, f.Index)
		}
		return nil
	})
	out.failed, out.refused = FailedFrames(out.err), DamagedFrames(out.err)
	return out
}

// TestSegmentsIdentical: the segments decoded on three decoders at once give what one decoder taking
// them in turn gives, frame for frame and byte for byte (also the frames that fail or are refused as
// damaged), on every fixture, every testdata video and every shared video that opens; 16 frames spread
// over the whole video (many segments), and on the fixtures also 5 clustered at the end.
func TestSegmentsIdentical(t *testing.T) {
	paths, nFixtures := segmentPaths(t)
	shared := filepath.Dir(filepath.Dir(testenv.SharedVideos(t))) // subtests named testdata/videos/…
	parallelRuns := 0
	for k, p := range paths {
		v, err := Open(p, Options{NoAutorotate: true})
		if err != nil {
			continue // videos that do not open are TestManifestVideos's
		}
		n := v.NumFrames()
		v.Close()
		name := strings.TrimPrefix(p, shared+string(os.PathSeparator))
		t.Run(name, func(t *testing.T) {
			var spread []int
			for i := 0; i < 16 && i < n; i++ {
				spread = append(spread, i*n/min(16, n))
			}
			sets := [][]int{append(spread, n-1)}
			if k < nFixtures {
				rng := rand.New(rand.NewSource(int64(n)))
				var tail []int
				for i := 0; i < 5; i++ {
					tail = append(tail, n-1-rng.Intn(min(n, 40)))
				}
				sets = append(sets, tail)
			}
			for _, idx := range sets {
				want := readAll(t, p, Options{NoAutorotate: true}, 1, idx)
				got := readAll(t, p, Options{NoAutorotate: true}, 3, idx)
				if got.st.Decoders > 1 {
					parallelRuns++
				}
				if !slices.Equal(got.failed, want.failed) || !slices.Equal(got.refused, want.refused) || len(got.frames) != len(want.frames) ||
					(got.err == nil) != (want.err == nil) {
					t.Fatalf("%d indices: %d decoders: %d frames, failed %v, refused %v (%v); one decoder: %d frames, failed %v, refused %v (%v)",
						len(idx), got.st.Decoders, len(got.frames), got.failed, got.refused, got.err, len(want.frames), want.failed, want.refused, want.err)
				}
				for i, b := range want.frames {
					if !bytes.Equal(got.frames[i], b) {
						t.Fatalf("frame %d differs between %d decoders at once and one decoder (%d segments)", i, got.st.Decoders, got.st.Segments)
					}
				}
				if got.st.Converted != want.st.Converted || got.st.MinPackets != want.st.MinPackets {
					t.Errorf("converted %d vs %d, floor %d vs %d", got.st.Converted, want.st.Converted, got.st.MinPackets, want.st.MinPackets)
				}
			}
		})
	}
	if parallelRuns < len(paths)/2 {
		t.Errorf("only %d reads of %d videos ran segments at once", parallelRuns, len(paths))
	}
}

// TestReferenceChainFloor: with the default options the pass sends the decoder at most 2 % more
// packets than the reference-chain floor (each frame's start keyframe, the reference pictures from
// there, the frame itself), and never fewer, on every fixture and several index sets. Streams
// identified by output order are decoded from the start until the frames come out: there the
// decoder's reorder delay (a few packets) comes on top of the floor.
func TestReferenceChainFloor(t *testing.T) {
	for _, fx := range fixtures {
		if fx.encoder != "" && !haveEncoder(t, fx.encoder) {
			continue
		}
		p := fixturePath(t, fx)
		t.Run(fx.name, func(t *testing.T) {
			v, err := Open(p, Options{NoAutorotate: true})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			n := v.NumFrames()
			rng := rand.New(rand.NewSource(3))
			sets := [][]int{{n / 2}, {n - 1}}
			for _, k := range []int{8, 16, 32} {
				var u, r []int
				for i := 0; i < k; i++ {
					u = append(u, i*n/k)
					r = append(r, rng.Intn(n))
				}
				sets = append(sets, u, r)
			}
			worst := 0.0
			for _, idx := range sets {
				st, err := v.Read(idx, func(*Frame) error { return nil })
				if err != nil {
					t.Fatal(err)
				}
				worst = max(worst, float64(st.PacketsSent)/float64(st.MinPackets))
				switch {
				case st.PacketsSent < st.MinPackets:
					t.Errorf("%d frames: sent %d packets, below the floor %d: the floor is wrong", len(idx), st.PacketsSent, st.MinPackets)
				case v.counting && st.PacketsSent > st.MinPackets+16:
					t.Errorf("%d frames (output order): sent %d, floor %d", len(idx), st.PacketsSent, st.MinPackets)
				case !v.counting && float64(st.PacketsSent) > 1.02*float64(st.MinPackets):
					t.Errorf("%d frames: sent %d packets, floor %d (%.3f×; %d segments, %d decoders, %s)", len(idx), st.PacketsSent,
						st.MinPackets, float64(st.PacketsSent)/float64(st.MinPackets), st.Segments, st.Decoders, st.Plan)
				}
			}
			t.Logf("largest sent ÷ floor %.3f over %d index sets", worst, len(sets))
		})
	}
}

// TestParallelStops: an error from the callback while segments decode at once ends the Read with that
// error, after the frames before it, in order; no decoder is left running (-tags leakcheck counts
// their handles in TestMain).
func TestParallelStops(t *testing.T) {
	p := fixturePath(t, fixtureByName("h264_bframes_opengop"))
	v, err := Open(p, Options{NoAutorotate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.forceWorkers = 3
	var idx []int
	for i := 0; i < v.NumFrames(); i += 9 {
		idx = append(idx, i)
	}
	stop := errors.New("enough")
	var got []int
	st, err := v.Read(idx, func(f *Frame) error {
		got = append(got, f.Index)
		if len(got) == 7 {
			return stop
		}
		return nil
	})
	if err != stop || !slices.Equal(got, idx[:7]) || st.Decoders < 2 {
		t.Fatalf("got %v (%v, %d decoders), want %v and the callback's error", got, err, st.Decoders, idx[:7])
	}
	// The Video reads on after a stopped Read.
	var again []int
	if _, err := v.Read(idx, func(f *Frame) error { again = append(again, f.Index); return nil }); err != nil || !slices.Equal(again, idx) {
		t.Fatalf("read after a stopped one: %v, %v", again, err)
	}
}
