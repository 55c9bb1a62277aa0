package importers

import (
	"encoding/json"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// The harnesses compare values the way Python does after json.load: str() of a number, == between an
// int and a string, round(x, 2). These helpers reproduce exactly those semantics on values decoded with
// json.Decoder.UseNumber, so a verdict recomputed here is the harness's own.

// pyStr is Python's str() of the value json.load gives for v.
func pyStr(v any) string {
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
		if isIntLiteral(string(x)) {
			if n, ok := new(big.Int).SetString(string(x), 10); ok {
				return n.String()
			}
		}
		f, _ := strconv.ParseFloat(string(x), 64) // out of range gives ±Inf, as Python's float() does
		return pyFloatRepr(f)
	case float64:
		return pyFloatRepr(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if s, ok := e.(string); ok {
				parts[i] = "'" + s + "'"
			} else {
				parts[i] = pyStr(e)
			}
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return ""
}

func isIntLiteral(s string) bool { return !strings.ContainsAny(s, ".eE") }

// pyFloatRepr is Python's repr(float): the shortest round-trip digits, scientific notation when the
// decimal exponent is below -4 or at least 16, and a ".0" on integral values.
func pyFloatRepr(f float64) string {
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

// pyNum returns a JSON number or bool as Python sees it in ==: an exact integer or a float.
func pyNum(v any) (n *big.Int, f float64, isInt, ok bool) {
	switch x := v.(type) {
	case bool:
		return big.NewInt(int64(b2i(x))), 0, true, true
	case json.Number:
		if isIntLiteral(string(x)) {
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

// pyEq is Python's == between two json.load values: numbers (and bools, an int subclass) compare by
// value, strings by content, lists element-wise, dicts by keys and values; other mixes are unequal.
func pyEq(a, b any) bool {
	if an, af, ai, aok := pyNum(a); aok {
		bn, bf, bi, bok := pyNum(b)
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
			if !pyEq(x[i], y[i]) {
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
			if !ok || !pyEq(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// pyTruthy is Python's bool() of a json.load value.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	if n, f, isInt, ok := pyNum(v); ok {
		if isInt {
			return n.Sign() != 0
		}
		return f != 0 // NaN is truthy in Python, and NaN != 0
	}
	return false
}

// pyFloat is Python's float(s) for a string: surrounding white space allowed, no hexadecimal.
func pyFloat(s string) (float64, bool) {
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

// pyRound is Python's round(x, n): the double nearest to x correctly rounded to n decimals.
func pyRound(x float64, n int) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
	return v
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keyList describes a sample's keys for an error: dict-valued keys show their own keys, e.g.
// "doc_id, my_metric{gold, pred}, target". A key that is not plain printable text is quoted, so a line
// break in a key cannot split the one-line error.
func keyList(s map[string]any, skip map[string]bool) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for i, k := range keys {
		shown := showKey(k)
		if m, ok := s[k].(map[string]any); ok {
			sub := make([]string, 0, len(m))
			for kk := range m {
				sub = append(sub, kk)
			}
			sort.Strings(sub)
			if len(sub) > 12 {
				sub = append(sub[:12], "…")
			}
			for j := range sub {
				if sub[j] != "…" {
					sub[j] = showKey(sub[j])
				}
			}
			shown += "{" + strings.Join(sub, ", ") + "}"
		}
		keys[i] = shown
	}
	return strings.Join(keys, ", ")
}

func showKey(k string) string {
	for _, r := range k {
		if !unicode.IsPrint(r) || r == ',' || r == '{' || r == '}' {
			return strconv.Quote(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// pathValue follows a dotted path ("my_metric.score") through nested objects.
func pathValue(s map[string]any, path string) (any, bool) {
	var cur any = s
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}
