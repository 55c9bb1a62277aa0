package num

import (
	"errors"
	"math"
	"testing"
)

// TestRange: NaN and ±Inf are refused whatever the bounds (a check written "v < lo" passes NaN), the
// bounds are inclusive unless LoOpen, and every error names the number and says what was wanted.
func TestRange(t *testing.T) {
	for _, c := range []struct {
		r    Range
		v    float64
		want string // "" = in range
	}{
		{In(0, 2), 0, ""},
		{In(0, 2), 2, ""},
		{In(0, 2), -1, "--temperature -1: out of range (want 0..2)"},
		{In(0, 2), math.NaN(), "--temperature NaN: not a number (want 0..2)"},
		{In(0, 2), math.Inf(1), "--temperature +Inf: not finite (want 0..2)"},
		{AtLeast(0), math.Inf(1), "--temperature +Inf: not finite (want a finite number ≥ 0)"},
		{Any, math.Inf(-1), "--temperature -Inf: not finite (want any finite number)"},
		{Any, math.NaN(), "--temperature NaN: not a number (want any finite number)"},
		{Above(0, 10), 0, "--temperature 0: out of range (want > 0 and ≤ 10)"},
		{Above(0, 10), 1e-300, ""},
		{Range{Lo: 0, Hi: 60, Unit: "s"}, 61, "--temperature 61: out of range (want 0..60 s)"},
	} {
		err := c.r.Float("--temperature", c.v)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v in %v: %v", c.v, c.r, err)
		case c.want != "" && (err == nil || err.Error() != c.want || !errors.Is(err, ErrRange)):
			t.Errorf("%v in %v: %v, want %q", c.v, c.r, err, c.want)
		}
		if (c.r.Check(c.v) == nil) != (c.want == "") {
			t.Errorf("Check(%v) in %v disagrees with Float", c.v, c.r)
		}
	}
	if err := In(0, 100000).Int("--resamples", 1000000000); err == nil || err.Error() != "--resamples 1000000000: out of range (want 0..100000)" {
		t.Errorf("Int: %v", err)
	}
	if err := AtLeast(0).Int("--rlimit-data", -5); err == nil || err.Error() != "--rlimit-data -5: out of range (want an integer ≥ 0)" {
		t.Errorf("Int, one side: %v", err)
	}
	if err := Above(0, 5).CheckInt(0); err == nil {
		t.Error("CheckInt: 0 is not > 0")
	}
	for _, c := range []struct{ s, want string }{
		{"Inf", "duration_s Inf: not finite (want a finite number ≥ 0)"},
		{" 12.5 ", ""},
		{"nan", "duration_s nan: not a number (want a finite number ≥ 0)"},
		{"1e999", `duration_s "1e999": not finite (want a finite number ≥ 0)`},
		{"x", `duration_s "x": not a number (want a finite number ≥ 0)`},
		{"-1", "duration_s -1: out of range (want a finite number ≥ 0)"},
	} {
		_, err := AtLeast(0).ParseFloat("duration_s", c.s)
		if (err == nil) != (c.want == "") || err != nil && err.Error() != c.want {
			t.Errorf("ParseFloat(%q): %v, want %q", c.s, err, c.want)
		}
	}
	if _, err := In(1, 64).ParseInt("--budgets", "99999999999999999999"); err == nil || err.Error() != `--budgets "99999999999999999999": out of range (want 1..64)` {
		t.Errorf("ParseInt overflow: %v", err)
	}
	if v, err := In(1, 64).ParseInt("--budgets", " 16"); v != 16 || err != nil {
		t.Errorf("ParseInt: %d %v", v, err)
	}
}
