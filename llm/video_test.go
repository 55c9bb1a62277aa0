package llm

import (
	"errors"
	"math"
	"testing"

	"github.com/framesweep/framesweep/rgb"
)

func TestVideoTiming(t *testing.T) {
	fr := []*rgb.Image{rgb.New(4, 4), rgb.New(4, 4), rgb.New(4, 4)}
	ok := &VideoTiming{TimestampsS: []float64{0, 0.5, 1}, Indices: []int{0, 15, 30}, SourceFPS: 30, TotalFrames: 300}
	r := &Request{Question: "q", Frames: fr, Video: ok}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]*VideoTiming{
		"count":      {TimestampsS: []float64{0, 1}},
		"backwards":  {TimestampsS: []float64{0, 1, 0.5}},
		"nan":        {TimestampsS: []float64{0, math.NaN(), 1}},
		"indices":    {TimestampsS: []float64{0, 0.5, 1}, Indices: []int{0, 15}},
		"past-total": {TimestampsS: []float64{0, 0.5, 1}, Indices: []int{0, 15, 30}, TotalFrames: 20},
		"neg-fps":    {TimestampsS: []float64{0, 0.5, 1}, SourceFPS: -1},
	} {
		r.Video = v
		if err := r.Validate(); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, c := range []struct {
		v    VideoTiming
		fps  float64
		from string
	}{
		{VideoTiming{TimestampsS: []float64{0, 0.5, 1}, SampleFPS: 2}, 2, FPSGiven},
		{*ok, 3.0 / 300 * 30, FPSSampled},
		{VideoTiming{TimestampsS: []float64{0, 0.5, 1}}, 2, FPSTimestamps},
	} {
		fps, from, err := c.v.FPS(3)
		if err != nil || fps != c.fps || from != c.from {
			t.Errorf("%+v: %v %q %v, want %v %q", c.v, fps, from, err, c.fps, c.from)
		}
	}
	if _, _, err := (&VideoTiming{TimestampsS: []float64{1}}).FPS(1); !errors.Is(err, ErrBadRequest) {
		t.Errorf("one frame, no fps: %v", err)
	}
	if got := PairTimes([]float64{0, 1, 2}); len(got) != 2 || got[0] != 0.5 || got[1] != 2 {
		t.Errorf("PairTimes %v", got)
	}
	if TimestampText(0.25) != "<0.2 seconds>" || TimestampText(1.35) != "<1.4 seconds>" {
		t.Errorf("%s %s", TimestampText(0.25), TimestampText(1.35))
	}
}
