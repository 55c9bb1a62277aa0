// Package num checks a number from a flag, a file field or a runtime spec key against its range, so
// that every such number is refused the same way and by name: NaN and ±Inf are never in range (a NaN
// compares false with everything, so a check written as "v < lo" lets it through), and an error says
// what was wanted ("--temperature NaN: not a number (want 0..2)").
package num

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrRange marks a number outside its range: errors.Is(err, ErrRange) holds for every *Error.
var ErrRange = errors.New("number out of range")

// Range is an interval, inclusive unless LoOpen (then Lo itself is out). An unbounded side is ±Inf;
// NaN and ±Inf values are refused whatever the bounds. Unit, when set, follows the bounds in
// messages ("0..86400 s").
type Range struct {
	Lo, Hi float64
	LoOpen bool
	Unit   string
}

// In is the inclusive range lo..hi.
func In(lo, hi float64) Range { return Range{Lo: lo, Hi: hi} }

// AtLeast is lo..+Inf (finite values ≥ lo).
func AtLeast(lo float64) Range { return Range{Lo: lo, Hi: math.Inf(1)} }

// Above is (lo, hi]: values strictly above lo.
func Above(lo, hi float64) Range { return Range{Lo: lo, Hi: hi, LoOpen: true} }

// Any is every finite number (a seed, an offset).
var Any = Range{Lo: math.Inf(-1), Hi: math.Inf(1)}

// Error is a number out of its range. Name and Value may be empty: a flag's error is reported by the
// flag package, which names the flag and quotes the value itself.
type Error struct {
	Name, Value string
	Why         string // "not a number", "not finite", "out of range"
	Range       Range
	Integer     bool // the number is an integer (messages say "an integer ≥ 0", not "a finite number")
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s (want %s)", e.Why, e.Range.describe(e.Integer))
	if e.Value != "" {
		msg = e.Value + ": " + msg
	}
	if e.Name != "" {
		msg = e.Name + " " + msg
	}
	return msg
}

// Is makes errors.Is(err, ErrRange) hold.
func (e *Error) Is(target error) bool { return target == ErrRange }

// String is the range as messages give it: "0..2", "a finite number ≥ 0", "any finite number".
func (r Range) String() string { return r.describe(false) }

// describe is String, for an integer when integer is set ("an integer ≥ 0", "any integer").
func (r Range) describe(integer bool) string {
	lo, hi := !math.IsInf(r.Lo, -1), !math.IsInf(r.Hi, 1)
	var s string
	switch {
	case lo && hi && r.LoOpen:
		s = fmt.Sprintf("> %s and ≤ %s", fmtNum(r.Lo), fmtNum(r.Hi))
	case lo && hi:
		s = fmtNum(r.Lo) + ".." + fmtNum(r.Hi)
	case lo && r.LoOpen:
		s = "> " + fmtNum(r.Lo)
	case lo:
		s = "≥ " + fmtNum(r.Lo)
	case hi:
		s = "≤ " + fmtNum(r.Hi)
	default:
		if integer {
			return "any integer"
		}
		return "any finite number"
	}
	if r.Unit != "" {
		s += " " + r.Unit
	}
	if !lo || !hi {
		if integer {
			s = "an integer " + s
		} else {
			s = "a finite number " + s
		}
	}
	return s
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// why says what is wrong with v, "" when it is in range.
func (r Range) why(v float64) string {
	switch {
	case math.IsNaN(v):
		return "not a number"
	case math.IsInf(v, 0):
		return "not finite"
	case v < r.Lo || r.LoOpen && v == r.Lo || v > r.Hi:
		return "out of range"
	}
	return ""
}

// Check refuses v when it is out of r, without a name (for the flag package, which adds one).
func (r Range) Check(v float64) error {
	if w := r.why(v); w != "" {
		return &Error{Why: w, Range: r}
	}
	return nil
}

// CheckInt is Check for an integer. float64(v) rounds only beyond 2^53, where no bound of this
// module lies, so the comparison is exact where it matters.
func (r Range) CheckInt(v int64) error {
	if f := float64(v); f < r.Lo || f > r.Hi || r.LoOpen && f == r.Lo {
		return &Error{Why: "out of range", Range: r, Integer: true}
	}
	return nil
}

// Float refuses v when it is out of r, naming it: "duration_s +Inf: not finite (want ≥ 0)".
func (r Range) Float(name string, v float64) error {
	if w := r.why(v); w != "" {
		return &Error{Name: name, Value: strconv.FormatFloat(v, 'g', -1, 64), Why: w, Range: r}
	}
	return nil
}

// Int refuses v when it is out of r, naming it: "--resamples 1000000000: out of range (want 0..100000)".
func (r Range) Int(name string, v int64) error {
	if err := r.CheckInt(v); err != nil {
		e := err.(*Error)
		e.Name, e.Value = name, strconv.FormatInt(v, 10)
		return e
	}
	return nil
}

// ParseFloat reads s (a decimal or Go float literal; surrounding spaces allowed) and checks it is in r,
// naming it in the error.
func (r Range) ParseFloat(name, s string) (float64, error) {
	t := strings.TrimSpace(s)
	v, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, &Error{Name: name, Value: strconv.Quote(s), Why: "not a number", Range: r}
	}
	if err != nil { // 1e999: ParseFloat gives ±Inf with ErrRange
		return 0, &Error{Name: name, Value: strconv.Quote(s), Why: "not finite", Range: r}
	}
	if w := r.why(v); w != "" {
		return 0, &Error{Name: name, Value: t, Why: w, Range: r}
	}
	return v, nil
}

// ParseInt reads a base-10 integer s (surrounding spaces allowed) and checks it is in r, naming it in
// the error.
func (r Range) ParseInt(name, s string) (int64, error) {
	t := strings.TrimSpace(s)
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		why := "not an integer"
		if errors.Is(err, strconv.ErrRange) {
			why = "out of range"
		}
		return 0, &Error{Name: name, Value: strconv.Quote(s), Why: why, Range: r, Integer: true}
	}
	if err := r.Int(name, v); err != nil {
		return 0, err
	}
	return v, nil
}
