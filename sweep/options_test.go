package sweep

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestCheckDecodingSettings: Options.Check refuses a temperature or a generation bound out of range,
// NaN included, naming the flag (the library guard behind the CLI's parse-time check).
func TestCheckDecodingSettings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		temp float64
		max  int
		want string
	}{
		{math.NaN(), 0, "--temperature NaN: not a number (want 0..2)"},
		{-1, 0, "--temperature -1: out of range (want 0..2)"},
		{math.Inf(1), 0, "--temperature +Inf: not finite"},
		{0, -1, "--max-tokens -1: out of range"},
	} {
		o := Options{Out: "run", Jobs: 1, ChunkRecords: 1, ChunkInterval: 1, Temperature: c.temp, MaxTokens: c.max}
		if err := o.Check(); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("temperature %v max tokens %d: %v, want %q", c.temp, c.max, err, c.want)
		}
	}
	o := Options{Out: "run", Jobs: 1, ChunkRecords: 1, ChunkInterval: 1, Temperature: 0.7, MaxTokens: 64}
	if err := o.Check(); err != nil {
		t.Errorf("in range: %v", err)
	}
}
