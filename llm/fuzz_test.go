package llm

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
)

// FuzzExtract: the parsers never panic and only ever return "" or one of the offered letters.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{"A", "(B) x", "The best answer is C", ")", "According", "Best Option: (D)", "\xff)"} {
		f.Add(s)
	}
	letters := []string{"A", "B", "C", "D"}
	f.Fuzz(func(t *testing.T, s string) {
		if got := ExtractVideoMME(s); got != "" && !slices.Contains(letters, got) {
			t.Fatalf("videomme %q -> %q", s, got)
		}
		if got := ExtractMLVU(s, letters); got != "" && !slices.Contains(letters, got) {
			t.Fatalf("mlvu %q -> %q", s, got)
		}
		if got := ExtractGeneric(s, letters); got != "" && !slices.Contains(letters, got) {
			t.Fatalf("generic %q -> %q", s, got)
		}
	})
}

// FuzzLetterProbs: whatever the scores, the result is nil or a distribution over the letters.
func FuzzLetterProbs(f *testing.F) {
	f.Add(1.0, -2.0, 0.5, true)
	f.Add(math.Inf(1), math.NaN(), math.Inf(-1), true)
	f.Add(math.NaN(), math.NaN(), math.NaN(), false)
	f.Fuzz(func(t *testing.T, a, b, c float64, withC bool) {
		scores := map[string][]float64{"A": {a}, "B": {b, a}}
		if withC {
			scores["C"] = []float64{c}
		}
		p := LetterProbs(scores, []string{"A", "B", "C"})
		if p == nil {
			return
		}
		var sum float64
		for _, v := range p {
			if v < 0 || v > 1 || math.IsNaN(v) {
				t.Fatalf("%v", p)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("sum %v: %v", sum, p)
		}
	})
}

// FuzzParseSpec: the runtime spec parser never panics; an error is ErrBadSpec on one line; an accepted
// spec has a trimmed engine and keys, rebuilds to an equal spec, and its typed accessors do not panic.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"llamacpp:model=m.gguf,mmproj=p.gguf,ctx=16384,image_max_tokens=768",
		"onnx:model=cls.onnx,size=48x192,threads=1",
		"openai:url=http://127.0.0.1:8080/v1,model=qwen2.5-vl,concurrency=8,timeout=60s,image_format=jpeg,quality=90",
		"openai", "openai:", ":x=1", "a:b", "a:=1", "a:k=1,k=2", "a: k = v ,", "a:k=v=w", "a:k=\n", "\xff:k=v",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrBadSpec) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseSpec(%q): %v (want a one-line ErrBadSpec)", s, err)
			}
			return
		}
		if sp.Engine == "" || sp.Engine != strings.TrimSpace(sp.Engine) || strings.Contains(sp.Engine, ":") || sp.Raw != s {
			t.Fatalf("ParseSpec(%q): engine %q raw %q", s, sp.Engine, sp.Raw)
		}
		keys := make([]string, 0, len(sp.Params))
		for k, v := range sp.Params {
			if k == "" || k != strings.TrimSpace(k) || strings.ContainsAny(k, ",=") || strings.Contains(v, ",") {
				t.Fatalf("ParseSpec(%q): param %q=%q", s, k, v)
			}
			keys = append(keys, k)
			if _, err := sp.Int(k, 0, 0, 100); err != nil && !errors.Is(err, ErrBadSpec) {
				t.Fatalf("Int(%q): %v", k, err)
			}
			if _, err := sp.Duration(k, 0); err != nil && !errors.Is(err, ErrBadSpec) {
				t.Fatalf("Duration(%q): %v", k, err)
			}
		}
		slices.Sort(keys)
		var b strings.Builder
		b.WriteString(sp.Engine + ":")
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(k + "=" + sp.Params[k])
		}
		again, err := ParseSpec(b.String())
		if err != nil || again.Engine != sp.Engine || !maps.Equal(again.Params, sp.Params) {
			t.Fatalf("ParseSpec(%q) = %+v; rebuilt %q = %+v, %v", s, sp, b.String(), again, err)
		}
		_ = sp.Check([]string{"model"}, "url")
	})
}
