package decode

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestReadCostIsRead: what ReadCost says a Read decodes (what `plan --grid` prints) is what the Read
// then does, on every fixture, every testdata video and every shared video that reads cleanly: the
// same distinct frames, pictures sent to the decoder equal to Stats.PacketsSent, and one restart per
// segment after the first (and the first's, unless it starts at the first packet), of which the
// demuxer seeks are some (a stream identified by output order stops once its frames are out: there
// the cost bounds what is sent). Two frame sets: the union of uniform 8/16/32 (a grid's, what plan
// prints it for) and the last frame alone.
func TestReadCostIsRead(t *testing.T) {
	paths, _ := segmentPaths(t)
	compared := 0
	for _, p := range paths {
		v, err := Open(p, Options{})
		if err != nil {
			continue // videos that do not open are TestManifestVideos's
		}
		n := v.NumFrames()
		var union []int
		seen := map[int]bool{}
		for _, b := range []int{8, 16, 32} {
			for i := 0; i < b && b <= n; i++ {
				if x := i * (n - 1) / max(b-1, 1); !seen[x] {
					seen[x] = true
					union = append(union, x)
				}
			}
		}
		for _, set := range [][]int{union, {n - 1}} {
			c, err := v.ReadCost(set)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			st, rerr := v.Read(set, func(*Frame) error { return nil })
			if rerr != nil || st.SingleThreadRedecodes > 0 {
				continue // a damaged video decodes more than its plan (retries): not a clean read
			}
			sent := c.FramesDecoded == st.PacketsSent
			if v.counting { // the pass stops once its frames are out: the cost is its bound
				sent = c.FramesDecoded >= st.PacketsSent
			}
			if c.FramesToDecode != st.Distinct || !sent || c.Seeks == nil ||
				*c.Seeks < st.Segments-1 || *c.Seeks > st.Segments || *c.Seeks < st.Seeks {
				t.Errorf("%s %v: cost %d frames, %d decoded, %d seeks; the Read: %d frames, %d sent, %d segments, %d seeks",
					filepath.Base(p), set, c.FramesToDecode, c.FramesDecoded, *c.Seeks, st.Distinct, st.PacketsSent, st.Segments, st.Seeks)
			}
			compared++
		}
		v.Close()
	}
	if compared == 0 {
		t.Fatal("nothing compared")
	}
	t.Logf("%d reads compared", compared)
}

// TestReadCostErrors: ReadCost validates as Read does; no frames cost nothing; ForwardCost decodes
// up to the last frame with seeks unknown.
func TestReadCostErrors(t *testing.T) {
	v, err := Open(filepath.Join("..", "testdata", "videos", "nasa_13013.mp4"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var re *RangeError
	if _, err := v.ReadCost([]int{0, v.NumFrames()}); !errors.As(err, &re) {
		t.Errorf("past the end: %v", err)
	}
	if c, err := v.ReadCost(nil); err != nil || c.FramesToDecode != 0 || c.FramesDecoded != 0 || c.Seeks == nil || *c.Seeks != 0 {
		t.Errorf("no frames: %+v %v", c, err)
	}
	v.Close()
	if _, err := v.ReadCost([]int{0}); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
	if c := ForwardCost([]int{3, 7, 20}); c.FramesToDecode != 3 || c.FramesDecoded != 21 || c.Seeks != nil {
		t.Errorf("ForwardCost: %+v", c)
	}
}
