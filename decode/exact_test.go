package decode

import (
	"math/rand"
	"slices"
	"sort"
	"testing"
)

// cliFirstBarcode is the barcode of the first frame the ffmpeg CLI outputs: fixtures cut by an edit list
// start later than source frame 0, so frame i must show barcode first+i.
func cliFirstBarcode(t *testing.T, path string) int {
	t.Helper()
	raw := cliRGB(t, path, false, 1)
	return barcode(raw, fxW, fxH, 3*fxW)
}

func TestExactAccessFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			path := fixturePath(t, fx)
			v, err := Open(path, Options{NoAutorotate: true})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			n := v.NumFrames()
			if fx.post == nil && n != fx.frames {
				t.Fatalf("NumFrames = %d, want %d", n, fx.frames)
			}
			if want := countFramesFFprobe(t, path); n != want {
				t.Fatalf("NumFrames = %d, ffprobe -count_frames = %d", n, want)
			}
			in := v.Info()
			if in.VFR != (fx.name == "vfr") {
				t.Errorf("vfr = %v", in.VFR)
			}
			if in.IdentifiedBy == "pts" {
				want := ffprobeFramePTS(t, path)
				if !slices.Equal(want, v.Index().PTS) {
					t.Fatalf("index pts differ from ffprobe's frame pts:\n%v\n%v", v.Index().PTS, want)
				}
			} else if fx.ext != "h264" && fx.name != "mpeg4_avi_bframes" {
				t.Errorf("frames identified by output order in a %s file", fx.ext)
			}
			first := cliFirstBarcode(t, path)
			if fx.name == "editlist" && first == 0 {
				t.Fatalf("edit-list fixture starts at source frame 0: the cut did not happen")
			}
			check := func(indices []int) Stats {
				t.Helper()
				want := slices.Clone(indices)
				sort.Ints(want)
				want = slices.Compact(want)
				var got []int
				st, err := v.Read(indices, func(f *Frame) error {
					if f.W != fxW || f.H != fxH {
						t.Fatalf("frame %d is %dx%d", f.Index, f.W, f.H)
					}
					if bc := barcode(f.Pix, f.W, f.H, f.Stride); bc != first+f.Index {
						t.Errorf("frame %d shows source frame %d, want %d", f.Index, bc, first+f.Index)
					}
					if f.PTS != v.Index().PTS[f.Index] {
						t.Errorf("frame %d pts %d, index says %d", f.Index, f.PTS, v.Index().PTS[f.Index])
					}
					got = append(got, f.Index)
					return nil
				})
				if err != nil {
					t.Fatalf("Read(%v): %v", indices, err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("delivered %v, want %v", got, want)
				}
				if st.Converted != len(want) || st.Distinct != len(want) || st.Requested != len(indices) {
					t.Fatalf("stats %+v for %d requested, %d distinct", st, len(indices), len(want))
				}
				return st
			}
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			if st := check(all); st.Decoded < n {
				t.Errorf("full pass decoded %d < %d frames", st.Decoded, n)
			}
			rng := rand.New(rand.NewSource(int64(len(fx.name))))
			for trial := 0; trial < 4; trial++ {
				k := 1 + rng.Intn(12)
				idx := make([]int, k)
				for i := range idx {
					idx[i] = rng.Intn(n)
				}
				idx = append(idx, idx[0]) // a duplicate
				rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
				check(idx)
			}
			// The last frame alone, and sparse far-apart frames: exercises seeks (into open-GOP and
			// B-frame streams) and the end of the stream.
			check([]int{n - 1})
			check([]int{n - 1, 0, n / 2, n/2 + 1, n / 3})
		})
	}
}

func TestSeekIsUsedAndExact(t *testing.T) {
	path := fixturePath(t, fixtureByName("h264_bframes_opengop"))
	v, err := Open(path, Options{NoAutorotate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	// Frames 27..29 are open-GOP leading B-frames of the keyframe at 30 (decode order after it).
	for _, idx := range [][]int{{0, 28, 120}, {27, 29, 149}, {58, 59, 61, 89}, {119}} {
		st, err := v.Read(idx, func(f *Frame) error {
			if bc := barcode(f.Pix, f.W, f.H, f.Stride); bc != f.Index {
				t.Errorf("frame %d shows %d", f.Index, bc)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Converted != len(idx) {
			t.Fatalf("%v: converted %d", idx, st.Converted)
		}
		if idx[len(idx)-1] >= 89 && st.Seeks == 0 {
			t.Errorf("%v: no seek although keyframes lie between the frames (stats %+v)", idx, st)
		}
		if st.Decoded >= v.NumFrames() {
			t.Errorf("%v: decoded %d frames: the pass did not skip anything", idx, st.Decoded)
		}
	}
}

func TestDecodeOnceDenseDoesNotSeek(t *testing.T) {
	path := fixturePath(t, fixtureByName("h264_longgop"))
	v, err := Open(path, Options{NoAutorotate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var idx []int
	for i := 0; i < 300; i += 7 {
		idx = append(idx, i)
	}
	st, err := v.Read(idx, func(*Frame) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	// The last requested frame is 294: the pass stops there (plus the decoder's reorder delay).
	// Non-reference pictures nobody asked for are dropped before the decoder (nonref.go).
	if st.Seeks != 0 || st.Decoded+st.Skipped < 295 || st.Decoded+st.Skipped > 300 || st.Skipped == 0 || st.Converted != len(idx) {
		t.Fatalf("dense request: want one straight pass over frames 0..294, got %+v", st)
	}
}

// TestSeekFallbackExact forces the path taken when a seek cannot be verified: re-open the file and skip
// packets (without decoding) up to the keyframe. Frames must stay exact.
func TestSeekFallbackExact(t *testing.T) {
	for _, name := range []string{"h264_bframes_opengop", "hevc", "vp9", "mpegts"} {
		t.Run(name, func(t *testing.T) {
			v, err := Open(fixturePath(t, fixtureByName(name)), Options{NoAutorotate: true})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			v.noSeek = true
			n := v.NumFrames()
			idx := []int{n - 1, 1, n / 2, n/2 - 3}
			got := 0
			st, err := v.Read(idx, func(f *Frame) error {
				if bc := barcode(f.Pix, f.W, f.H, f.Stride); bc != f.Index {
					t.Errorf("frame %d shows %d", f.Index, bc)
				}
				got++
				return nil
			})
			if err != nil || got != len(idx) {
				t.Fatalf("got %d frames, %v", got, err)
			}
			if st.Seeks != 0 || st.Reopens < 2 {
				t.Fatalf("fallback path not taken: %+v", st)
			}
		})
	}
}
