package decode

import (
	"bytes"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// readRGB returns the first max frames (all when max ≤ 0) as one packed RGB24 buffer.
func readRGB(t *testing.T, path string, opts Options, max int) ([]byte, int, int) {
	t.Helper()
	v, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	n := v.NumFrames()
	if max > 0 && max < n {
		n = max
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	var buf []byte
	w, h := 0, 0
	if _, err := v.Read(idx, func(f *Frame) error {
		w, h = f.W, f.H
		buf = append(buf, f.Packed()...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return buf, w, h
}

func compareRGB(t *testing.T, got, want []byte, w, h int) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	fs := 3 * w * h
	if len(got) != len(want) {
		t.Fatalf("got %d bytes (%d frames of %dx%d), the CLI %d bytes", len(got), len(got)/max(fs, 1), w, h, len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("first difference in frame %d at byte %d: %d vs CLI %d", i/fs, i%fs, got[i], want[i])
		}
	}
}

// TestRGBMatchesCLI: RGB24 equals `ffmpeg -i V -pix_fmt rgb24 -f rawvideo -` bit for bit at source
// size, frame by frame, on real videos: 8/10-bit, 4:2:0/4:4:4, full-range MJPEG, VP9, AV1, HEVC, odd
// sizes, rotation and reflection.
func TestRGBMatchesCLI(t *testing.T) {
	requireFFmpeg(t)
	dir := testenv.SharedVideos(t)
	cases := []struct {
		rel    string
		max    int
		noRot  bool
		wantWH [2]int // expected output size (after orientation); zero = do not check
	}{
		{rel: "torchcodec/h264_10bits.mp4"},
		{rel: "torchcodec/h265_10bits.mp4"},
		{rel: "torchcodec/h265_video.mp4"},
		{rel: "torchcodec/var_fps_video.mp4", max: 60}, // H.264 4:4:4
		{rel: "androidx-media/iibbibb_editlist_videoonly.mp4"},
		{rel: "androidx-media/roadtrip-vp92-10bit.webm"},
		{rel: "androidx-media/bear-vp9-odd-dimensions.webm"},
		{rel: "nwb-video-widgets/stub_mjpeg.avi"},
		{rel: "torchcodec/av1_video.mkv", max: 8},
		{rel: "moviepy/test_video.mp4"},
		{rel: "androidx-media/sample.avi", max: 8},
		{rel: "decord/video_90.mov", wantWH: [2]int{320, 568}},
		{rel: "decord/video_270.mov", wantWH: [2]int{320, 568}},
		{rel: "decord/video_90.mov", noRot: true, wantWH: [2]int{568, 320}},
		{rel: "androidx-media/sample_rotate_and_reflect.mp4", max: 3, wantWH: [2]int{720, 1080}},
	}
	for _, c := range cases {
		name := c.rel
		if c.noRot {
			name += "/noautorotate"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, c.rel)
			got, w, h := readRGB(t, path, Options{NoAutorotate: c.noRot}, c.max)
			if c.wantWH != [2]int{} && (w != c.wantWH[0] || h != c.wantWH[1]) {
				t.Fatalf("output %dx%d, want %dx%d", w, h, c.wantWH[0], c.wantWH[1])
			}
			compareRGB(t, got, cliRGB(t, path, c.noRot, c.max), w, h)
		})
	}
}

// TestRGBMatchesCLIFixtures covers the generated 10-bit/4:4:4/HEVC 10-bit/VP9 10-bit/rotated fixtures.
func TestRGBMatchesCLIFixtures(t *testing.T) {
	for _, name := range []string{"h264_10bit", "h264_444", "hevc_10bit", "vp9_10bit", "mjpeg", "rotated"} {
		t.Run(name, func(t *testing.T) {
			path := fixturePath(t, fixtureByName(name))
			got, w, h := readRGB(t, path, Options{}, 0)
			if name == "rotated" && (w != fxH || h != fxW) {
				t.Fatalf("rotated fixture not rotated: %dx%d", w, h)
			}
			compareRGB(t, got, cliRGB(t, path, false, 0), w, h)
		})
	}
}

// TestExplicitColourOptions checks the colour options the GPU path passes to the scaler (GPU frames lose
// their colour properties): on CPU frames of tagged streams they must reproduce the CLI exactly.
func TestExplicitColourOptions(t *testing.T) {
	dir := testenv.SharedVideos(t)
	for _, rel := range []string{"decord/video_90.mov", "torchcodec/nasa_13013.mp4", "nwb-video-widgets/stub_mjpeg.avi", "androidx-media/roadtrip-vp92-10bit.webm"} {
		t.Run(rel, func(t *testing.T) {
			path := filepath.Join(dir, rel)
			v, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			v.explicitColour = true
			var got []byte
			w, h := 0, 0
			if _, err := v.Read([]int{0, 1, 2}, func(f *Frame) error {
				w, h = f.W, f.H
				got = append(got, f.Packed()...)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			compareRGB(t, got, cliRGBMap(t, path, fmt.Sprintf("0:%d", v.Info().StreamIndex), false, 3), w, h)
		})
	}
}

// TestRandomAccessMatchesCLI: on real videos (B-pyramids, long GOPs, open GOP + edit list, VFR 4:4:4,
// MPEG-TS, fragmented MP4, hidden VP9 frames), random index sets served with seeks return exactly the
// bytes of the CLI's frame i.
func TestRandomAccessMatchesCLI(t *testing.T) {
	requireFFmpeg(t)
	dir := testenv.SharedVideos(t)
	for _, rel := range []string{"torchcodec/nasa_13013.mp4", "torchcodec/var_fps_video.mp4", "torchcodec/h265_video.mp4",
		"androidx-media/sample_h264.ts", "androidx-media/roadtrip-vp92-10bit.webm", "androidx-media/iibbibb_editlist_videoonly.mp4",
		"androidx-media/sample_fragmented.mp4", "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4"} {
		t.Run(rel, func(t *testing.T) {
			path := filepath.Join(dir, rel)
			v, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			n := v.NumFrames()
			want := cliRGBMap(t, path, fmt.Sprintf("0:%d", v.Info().StreamIndex), false, 0)
			fs := 3 * v.Info().OutWidth * v.Info().OutHeight
			if len(want) != n*fs {
				t.Fatalf("CLI gave %d bytes for %d frames of %d bytes", len(want), n, fs)
			}
			rng := rand.New(rand.NewSource(7))
			seeks := 0
			for trial := 0; trial < 4; trial++ {
				idx := make([]int, 1+rng.Intn(6))
				for i := range idx {
					idx[i] = rng.Intn(n)
				}
				st, err := v.Read(idx, func(f *Frame) error {
					if !bytes.Equal(f.Packed(), want[f.Index*fs:(f.Index+1)*fs]) {
						t.Errorf("frame %d differs from the CLI's frame %d", f.Index, f.Index)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				seeks += st.Seeks
			}
			t.Logf("%d frames, %d seeks over 4 random sets", n, seeks)
		})
	}
}
