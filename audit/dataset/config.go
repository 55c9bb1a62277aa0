package dataset

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// Config is one configuration as the audit sees it: its merged metadata and its cost.
type Config struct {
	ID       string `json:"id"`
	Cost     *int64 `json:"cost"` // nil: unknown (frames unknown for a visual config) → incomparable with all
	Frames   *int   `json:"frames"`
	TextOnly bool   `json:"text_only"`
	Width    *int   `json:"width,omitempty"`
	Height   *int   `json:"height,omitempty"`
	Policy   string `json:"policy,omitempty"`
	Preset   string `json:"preset,omitempty"`
	Seed     *int64 `json:"seed,omitempty"`
	Pipeline string `json:"pipeline,omitempty"`
	// MaxPixels is the per-frame pixel budget of a config whose size depends on the video (config_meta
	// max_pixels): without width and height it prices the config.
	MaxPixels *int `json:"max_pixels,omitempty"`
	// CostUnit is "pixels" (frames×width×height), "max_pixels" (frames×max_pixels: the pixels fed at
	// most), "frames" (size unknown) or "none" (text-only).
	CostUnit string `json:"cost_unit"`
	Kind     string `json:"kind"` // "multiple_choice" or "open_ended"
	Records  int    `json:"records"`
	Reruns   int    `json:"reruns"` // distinct run values beyond the first

	textOnlySet bool
	metaSrc     record.Source // the first record whose config_meta priced the config (errors name it)
}

// CostLess reports whether a is strictly cheaper than b; equal or unknown costs are incomparable.
func CostLess(a, b *Config) bool {
	return a.Cost != nil && b.Cost != nil && *a.Cost < *b.Cost
}

// SizeKey is "WxH", "max_pixels N" when only the pixel budget is known, or "" when unknown: configs
// of one ladder (cascade, protocol agreement, pipeline flips) share it.
func (c *Config) SizeKey() string {
	if c.Width == nil || c.Height == nil {
		if c.MaxPixels != nil {
			return fmt.Sprintf("max_pixels %d", *c.MaxPixels)
		}
		return ""
	}
	return fmt.Sprintf("%dx%d", *c.Width, *c.Height)
}

// Merge folds one record's config_meta (src: where the record is) into the config, failing on a
// disagreement with what earlier records said.
func (c *Config) Merge(m *record.ConfigMeta, src record.Source) error {
	conflict := func(field string, a, b any) error {
		return record.Errorf(src.Path, src.Line, "config_meta", record.ErrConflict, "config %q: %s %#v here but %#v on an earlier record", c.ID, field, b, a)
	}
	if c.metaSrc.Path == "" && c.metaSrc.Line == 0 && (m.Frames != nil || m.Width != nil || m.Height != nil || m.MaxPixels != nil) {
		c.metaSrc = src
	}
	if m.Frames != nil {
		if c.Frames != nil && *c.Frames != *m.Frames {
			return conflict("frames", *c.Frames, *m.Frames)
		}
		c.Frames = m.Frames
	}
	if m.TextOnly != nil {
		if c.TextOnly != *m.TextOnly && c.textOnlySet {
			return conflict("text_only", c.TextOnly, *m.TextOnly)
		}
		c.TextOnly, c.textOnlySet = *m.TextOnly, true
	}
	if m.Width != nil {
		if c.Width != nil && *c.Width != *m.Width {
			return conflict("width", *c.Width, *m.Width)
		}
		c.Width = m.Width
	}
	if m.Height != nil {
		if c.Height != nil && *c.Height != *m.Height {
			return conflict("height", *c.Height, *m.Height)
		}
		c.Height = m.Height
	}
	if m.Seed != nil {
		if c.Seed != nil && *c.Seed != *m.Seed {
			return conflict("seed", *c.Seed, *m.Seed)
		}
		c.Seed = m.Seed
	}
	if m.MaxPixels != nil {
		if c.MaxPixels != nil && *c.MaxPixels != *m.MaxPixels {
			return conflict("max_pixels", *c.MaxPixels, *m.MaxPixels)
		}
		c.MaxPixels = m.MaxPixels
	}
	for _, f := range []struct {
		name string
		dst  *string
		val  string
	}{{"policy", &c.Policy, m.Policy}, {"preset", &c.Preset, m.Preset}, {"pipeline", &c.Pipeline, m.Pipeline}} {
		if f.val == "" {
			continue
		}
		if *f.dst != "" && *f.dst != f.val {
			return conflict(f.name, *f.dst, f.val)
		}
		*f.dst = f.val
	}
	// frames = 0 means text-only: a config cannot be text-only with frames, nor visual without any,
	// whether one record or two disagreeing records say so.
	if c.Frames != nil && c.textOnlySet && (*c.Frames == 0) != c.TextOnly {
		return record.Errorf(src.Path, src.Line, "config_meta", record.ErrConflict, "config %q: text_only %v with frames %d (frames 0 means text-only)", c.ID, c.TextOnly, *c.Frames)
	}
	return nil
}

// FinishCost applies METRICS.md, once every record is merged: text-only costs 0; a visual config costs frames×width×height, or
// frames×max_pixels when only its pixel budget is known (an import's --max-pixels: the pixels fed at
// most, so that configs of one budget and different max_pixels are ordered, and iso-compute ones
// group), or frames when the size is unknown; frames = 0 means text-only. A negative frame count, a
// size or pixel budget under 1, or a cost beyond int64 (999999999999 frames at 65536² would wrap to a
// negative cost and sort before text-only) is an error naming the record that priced the config.
func (c *Config) FinishCost() error {
	if c.Frames != nil && *c.Frames == 0 {
		c.TextOnly = true
	}
	bad := func(format string, a ...any) error {
		return record.Errorf(c.metaSrc.Path, c.metaSrc.Line, "config_meta", record.ErrInvalid, "config %q: "+format, append([]any{c.ID}, a...)...)
	}
	if c.Frames != nil && *c.Frames < 0 {
		return bad("frames %d (want 0 or more)", *c.Frames)
	}
	factors := []int64{}
	switch {
	case c.TextOnly:
		z := int64(0)
		c.Cost, c.CostUnit = &z, "none"
		return nil
	case c.Frames == nil:
		c.Cost, c.CostUnit = nil, "unknown"
		return nil
	case c.Width != nil && c.Height != nil:
		factors, c.CostUnit = []int64{int64(*c.Frames), int64(*c.Width), int64(*c.Height)}, "pixels"
	case c.MaxPixels != nil:
		factors, c.CostUnit = []int64{int64(*c.Frames), int64(*c.MaxPixels)}, "max_pixels"
	default:
		factors, c.CostUnit = []int64{int64(*c.Frames)}, "frames"
	}
	for _, f := range factors[1:] {
		if f < 1 {
			return bad("width, height and max_pixels must be 1 or more, got %d", f)
		}
	}
	v, ok := mulCost(factors)
	if !ok {
		return bad("cost %s is beyond what the audit orders (int64); frames 0..131072 and sizes 1..65536 are the flags' ranges", costText(factors))
	}
	c.Cost = &v
	return nil
}

// mulCost multiplies non-negative factors, false on int64 overflow.
func mulCost(fs []int64) (int64, bool) {
	v := uint64(1)
	for _, f := range fs {
		hi, lo := bits.Mul64(v, uint64(f))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		v = lo
	}
	return int64(v), true
}

func costText(fs []int64) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = fmt.Sprint(f)
	}
	return strings.Join(s, " × ")
}

// SortConfigs orders configs for display: known costs ascending (text-only first), ties by id, unknown last.
func SortConfigs(cs []*Config) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if (a.Cost == nil) != (b.Cost == nil) {
			return a.Cost != nil
		}
		if a.Cost != nil && *a.Cost != *b.Cost {
			return *a.Cost < *b.Cost
		}
		return a.ID < b.ID
	})
}
