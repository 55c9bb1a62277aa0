package pyval

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestPythonSemantics: repr(float), == across numbers, bools and strings, str() and round() as
// Python gives them.
func TestPythonSemantics(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 0.5: "0.5", 1e16: "1e+16", 1.5e-5: "1.5e-05", 0.0001: "0.0001", 123456789.0: "123456789.0", math.Copysign(0, -1): "-0.0"} {
		if got := FloatRepr(f); got != want {
			t.Errorf("repr(%v) = %q, want %q", f, got, want)
		}
	}
	n := func(s string) any { return json.Number(s) }
	eq := []struct {
		a, b any
		want bool
	}{{n("1"), n("1.0"), true}, {n("1"), "1", false}, {true, n("1"), true}, {"B", "B", true}, {nil, nil, true}, {n("2"), n("3"), false},
		{[]any{"A", n("1")}, []any{"A", n("1.0")}, true}}
	for _, c := range eq {
		if Eq(c.a, c.b) != c.want {
			t.Errorf("Eq(%#v, %#v) != %v", c.a, c.b, c.want)
		}
	}
	if Str(n("2.0")) != "2.0" || Str(n("2")) != "2" || Str(true) != "True" || Str(nil) != "None" {
		t.Error("Str")
	}
	if Round(0.123456, 5) != 0.12346 || Round(2.675, 2) != 2.67 {
		t.Error("Round")
	}
}

// TestParseList: flat lists and tuples of strings (every escape and prefix), numbers, None and
// booleans parse; names, calls, nested containers and expressions are ErrList, never evaluated.
func TestParseList(t *testing.T) {
	ok := map[string][]string{
		`['A. x', "B. y's", 'C. \'q\'']`:  {"A. x", "B. y's", "C. 'q'"},
		`('a', 'b',)`:                     {"a", "b"},
		`[]`:                              {},
		`[1, -2.5, None, True]`:           {"1", "-2.5", "", "True"},
		`[u'caf\xe9', r'a\nb', '\u00e9']`: {"café", `a\nb`, "é"},
	}
	for in, want := range ok {
		got, err := ParseList(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("ParseList(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `'a'`, `[a]`, `[os.system('x')]`, `['a' + 'b']`, `[['nested']]`, `['unterminated]`, `['a'] x`, `[1e5, nan]`, `[__import__("os")]`} {
		if _, err := ParseList(bad); !errors.Is(err, ErrList) {
			t.Errorf("ParseList(%s) accepted: %v", bad, err)
		}
	}
}

// FuzzParseList: any input is a list or an error, never a panic or a nil list without error.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{`['A. x', "B. y's"]`, `(1, None)`, `['\x4', '\U0011FFFF']`, `[r'\'']`, `[`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseList(s)
		if err == nil && got == nil {
			t.Fatal("nil list without error")
		}
	})
}
