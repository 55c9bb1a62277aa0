package sweep

import (
	"slices"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/pipeline"
)

// frameCache is a pipeline.Source in front of a video's source that keeps the decoded frames a later
// round will ask for (an online cascade's later budgets): a Read decodes only the frames it does not
// hold, in one forward pass over them, and serves the held ones from memory in index order between
// them. Frames no later round wants pass straight through, so a fixed grid (one round) holds none.
type frameCache struct {
	src    pipeline.Source
	frames map[int]*decode.Frame // held frames (copies: the decoder's are borrowed)
	keep   map[int]bool          // the frames a Read keeps: those later rounds want
	peak   int                   // most frames held at once
}

func newFrameCache(src pipeline.Source) *frameCache {
	return &frameCache{src: src, frames: map[int]*decode.Frame{}}
}

func (c *frameCache) Info() decode.Info { return c.src.Info() }
func (c *frameCache) Close() error      { return c.src.Close() }

// retain drops the held frames not in want.
func (c *frameCache) retain(want map[int]bool) {
	for x := range c.frames {
		if !want[x] {
			delete(c.frames, x)
		}
	}
}

// Read implements pipeline.Source. The stats are the underlying decoder's: Converted counts only the
// frames decoded now.
func (c *frameCache) Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error) {
	want := slices.Compact(slices.Sorted(slices.Values(indices)))
	var held, missing []int
	for _, x := range want {
		if _, ok := c.frames[x]; ok {
			held = append(held, x)
		} else {
			missing = append(missing, x)
		}
	}
	next := 0 // the next held frame to serve
	serveBefore := func(limit int) error {
		for ; next < len(held) && held[next] < limit; next++ {
			if err := fn(c.frames[held[next]]); err != nil {
				return err
			}
		}
		return nil
	}
	var st decode.Stats
	var err, fnErr error
	if len(missing) > 0 {
		st, err = c.src.Read(missing, func(f *decode.Frame) error {
			if fnErr = serveBefore(f.Index); fnErr != nil {
				return fnErr
			}
			if c.keep[f.Index] {
				cp := *f
				cp.Image = *f.Image.Clone()
				c.frames[f.Index] = &cp
				c.peak = max(c.peak, len(c.frames))
			}
			fnErr = fn(f)
			return fnErr
		})
	}
	if fnErr == nil {
		// The held frames after the last decoded one (also when a frame failed to decode: the jobs
		// that need only held frames still complete).
		if ferr := serveBefore(int(^uint(0) >> 1)); ferr != nil {
			return st, ferr
		}
	}
	return st, err
}
