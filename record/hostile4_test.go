package record

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestNumbersRanged (issue 40): config_meta's frames, width, height and max_pixels beyond the flags'
// ranges, and a duration that is a number but not a finite one ≥ 0, are refused on read and on write,
// naming the file, the line and the field. (frames 999999999999 at 65536² once made a negative cost.)
func TestNumbersRanged(t *testing.T) {
	const base = `{"item_id":"a","config":"c","correct":true`
	for _, c := range []struct{ tail, want string }{
		{`,"config_meta":{"frames":999999999999}}`, "config_meta.frames 999999999999: out of range (want 0..131072)"},
		{`,"config_meta":{"frames":131073}}`, "config_meta.frames 131073: out of range"},
		{`,"config_meta":{"frames":-1}}`, "config_meta.frames -1: out of range"},
		{`,"config_meta":{"frames":8,"width":65537,"height":8}}`, "config_meta.width 65537: out of range (want 1..65536)"},
		{`,"config_meta":{"frames":8,"width":8,"height":0}}`, "config_meta.height 0: out of range"},
		{`,"config_meta":{"frames":8,"max_pixels":4294967297}}`, "config_meta.max_pixels 4294967297: out of range (want 1..4294967296)"},
		{`,"config_meta":{"max_pixels":0}}`, "config_meta.max_pixels 0: out of range"},
		{`,"duration":"-5"}`, `duration -5: out of range (want a finite number ≥ 0)`},
		{`,"duration":"NaN"}`, `duration NaN: not a number`},
		{`,"duration":"Inf"}`, `duration +Inf: not finite`},
		{`,"duration":"1e999"}`, `duration "1e999": not finite`},
	} {
		line := base + c.tail
		_, err := Read(strings.NewReader(`{"item_id":"z","config":"c","correct":true}`+"\n"+line+"\n"), "r.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), "r.jsonl:2: validate:") || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s read: %v, want %q", line, err, c.want)
		}
		if _, err := DecodeFull([]byte(line), Source{Path: "f.jsonl", Line: 7}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s DecodeFull: %v", line, err)
		}
	}
	// The bounds themselves, and durations that are group names or seconds, pass; a cost at the bounds
	// (2^17 × 2^32) stays far from int64's end.
	for _, line := range []string{
		base + `,"config_meta":{"frames":131072,"width":65536,"height":65536}}`,
		base + `,"config_meta":{"frames":0,"text_only":true}}`,
		base + `,"config_meta":{"frames":16,"max_pixels":4294967296},"duration":"334.5"}`,
		base + `,"duration":"short"}`,
		base + `,"duration":"0"}`,
	} {
		if _, err := Read(strings.NewReader(line), "ok.jsonl"); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	yes, big := true, 131073
	if err := Write(&bytes.Buffer{}, []Record{{ItemID: "a", Config: "c", Correct: &yes, ConfigMeta: &ConfigMeta{Frames: &big}}}); err == nil || !errors.Is(err, ErrInvalid) {
		t.Errorf("frames %d written: %v", big, err)
	}
}
