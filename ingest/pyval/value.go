package pyval

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Str is Python's str() of the value json.load gives for v.
func Str(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return x
	case json.Number:
		if IsIntLiteral(string(x)) {
			if n, ok := new(big.Int).SetString(string(x), 10); ok {
				return n.String()
			}
		}
		f, _ := strconv.ParseFloat(string(x), 64) // out of range gives ±Inf, as Python's float() does
		return FloatRepr(f)
	case float64:
		return FloatRepr(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if s, ok := e.(string); ok {
				parts[i] = "'" + s + "'"
			} else {
				parts[i] = Str(e)
			}
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return ""
}

// IsIntLiteral reports whether a JSON number literal is an integer (no fraction, no exponent).
func IsIntLiteral(s string) bool { return !strings.ContainsAny(s, ".eE") }

// FloatRepr is Python's repr(float): the shortest round-trip digits, scientific notation when the
// decimal exponent is below -4 or at least 16, and a ".0" on integral values.
func FloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // "-1.5e+16"
	mant, ex, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(ex)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		es := strconv.Itoa(exp)
		if len(es) < 2 {
			es = "0" + es
		}
		return mant + "e" + sign + es
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// Num returns a JSON number or bool as Python sees it in ==: an exact integer or a float.
func Num(v any) (n *big.Int, f float64, isInt, ok bool) {
	switch x := v.(type) {
	case bool:
		return big.NewInt(int64(boolInt(x))), 0, true, true
	case json.Number:
		if IsIntLiteral(string(x)) {
			if n, good := new(big.Int).SetString(string(x), 10); good {
				return n, 0, true, true
			}
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, 0, false, false
		}
		return nil, f, false, true
	case float64:
		return nil, x, false, true
	case int:
		return big.NewInt(int64(x)), 0, true, true
	}
	return nil, 0, false, false
}

// Eq is Python's == between two json.load values: numbers (and bools, an int subclass) compare by
// value, strings by content, lists element-wise, dicts by keys and values; other mixes are unequal.
func Eq(a, b any) bool {
	if an, af, ai, aok := Num(a); aok {
		bn, bf, bi, bok := Num(b)
		switch {
		case !bok:
			return false
		case ai && bi:
			return an.Cmp(bn) == 0
		case ai:
			return new(big.Float).SetInt(an).Cmp(big.NewFloat(bf)) == 0 && !math.IsInf(bf, 0) && !math.IsNaN(bf)
		case bi:
			return new(big.Float).SetInt(bn).Cmp(big.NewFloat(af)) == 0 && !math.IsInf(af, 0) && !math.IsNaN(af)
		default:
			return af == bf
		}
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Eq(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Eq(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// Float is Python's float(s) for a string: surrounding white space allowed, no hexadecimal.
func Float(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "xXpP") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// Round is Python's round(x, n): the double nearest to x correctly rounded to n decimals.
func Round(x float64, n int) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
	return v
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
