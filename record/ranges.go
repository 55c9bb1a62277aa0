package record

import (
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/internal/num"
)

// The ranges of config_meta's numbers, the same as the flags that set them (`import --frames`,
// `--width`, `--max-pixels`; cmd/framesweep's importRanges): a frame budget of at most MaxFrames
// (sampler.MaxBudget), a side of 1..MaxSide pixels (geom.MaxSide), a per-frame pixel budget of at
// most one frame of that side. Every importer and every reader holds records to them, so a config's
// cost (frames × width × height, at most 2^49) cannot overflow. TestRangesMatchFlags holds the
// constants equal to sampler's and geom's.
const (
	MaxFrames = 1 << 17
	MaxSide   = 1 << 16
	MaxPixels = MaxSide * MaxSide
)

var (
	FramesRange    = num.In(0, MaxFrames)
	SideRange      = num.In(1, MaxSide)
	MaxPixelsRange = num.In(1, MaxPixels)
	// DurationRange is a duration in seconds: finite and ≥ 0.
	DurationRange = num.AtLeast(0)
)

// CheckDuration refuses a duration that is a number but not a finite one ≥ 0 ("-5", "NaN", "Inf"): a
// duration is a group name ("short") or seconds. name says which field in the error.
func CheckDuration(name, v string) error {
	t := strings.TrimSpace(v)
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !isRangeErr(err) {
		return nil // a group name
	}
	if err != nil { // 1e999: ±Inf
		return &num.Error{Name: name, Value: strconv.Quote(v), Why: "not finite", Range: DurationRange}
	}
	return DurationRange.Float(name, f)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// validateRanges checks the numbers of a config_meta against their ranges, naming the field.
func (m *ConfigMeta) validateRanges(config string, src Source) error {
	for _, f := range [...]struct {
		name string
		v    *int
		r    num.Range
	}{{"frames", m.Frames, FramesRange}, {"width", m.Width, SideRange}, {"height", m.Height, SideRange}, {"max_pixels", m.MaxPixels, MaxPixelsRange}} {
		if f.v == nil {
			continue
		}
		if err := f.r.Int("config_meta."+f.name, int64(*f.v)); err != nil {
			return Errorf(src.Path, src.Line, "validate", ErrInvalid, "config %q: %v", config, err)
		}
	}
	return nil
}
