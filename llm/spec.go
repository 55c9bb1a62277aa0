package llm

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/framesweep/framesweep/internal/num"
)

// Spec is a parsed runtime spec "engine:key=value,key=value".
type Spec struct {
	Engine string
	Params map[string]string
	Raw    string
}

// ParseSpec parses "engine:k=v,k=v". Keys must be unique; values may not contain ','.
func ParseSpec(s string) (Spec, error) {
	engine, rest, _ := strings.Cut(s, ":")
	engine = strings.TrimSpace(engine)
	if engine == "" {
		return Spec{}, Errorf("parse spec", "", ErrBadSpec, "%q: missing engine (want engine:key=value,…)", s)
	}
	sp := Spec{Engine: engine, Params: map[string]string{}, Raw: s}
	if strings.TrimSpace(rest) == "" {
		return sp, nil
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return Spec{}, Errorf("parse spec", "", ErrBadSpec, "%q: %q is not key=value", s, kv)
		}
		if _, dup := sp.Params[k]; dup {
			return Spec{}, Errorf("parse spec", "", ErrBadSpec, "%q: key %q given twice", s, k)
		}
		sp.Params[k] = strings.TrimSpace(v)
	}
	return sp, nil
}

// Check rejects keys outside allowed and reports missing required ones, so typos are not ignored.
func (s Spec) Check(required []string, optional ...string) error {
	ok := map[string]bool{}
	for _, k := range append(append([]string{}, required...), optional...) {
		ok[k] = true
	}
	var unknown []string
	for k := range s.Params {
		if !ok[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		for i, k := range unknown {
			// Quoted, so a key holding a line break or a comma cannot split the one-line error.
			unknown[i] = strconv.Quote(k)
		}
		return Errorf("parse spec", "", ErrBadSpec, "%s: unknown key(s) %s", s.Engine, strings.Join(unknown, ","))
	}
	for _, k := range required {
		if s.Params[k] == "" {
			return Errorf("parse spec", "", ErrBadSpec, "%s: missing %s=", s.Engine, k)
		}
	}
	return nil
}

// Int returns the integer value of key, def when absent; it rejects values outside lo..hi, naming
// the key ("openai: concurrency=0: out of range (want 1..1024)").
func (s Spec) Int(key string, def, lo, hi int) (int, error) {
	v, ok := s.Params[key]
	if !ok {
		return def, nil
	}
	n, err := num.In(float64(lo), float64(hi)).ParseInt("", v)
	if err != nil {
		return 0, Errorf("parse spec", "", ErrBadSpec, "%s: %s=%v", s.Engine, key, err)
	}
	return int(n), nil
}

// Float returns the number value of key, def when absent; NaN, ±Inf and values outside r are
// refused, naming the key.
func (s Spec) Float(key string, def float64, r num.Range) (float64, error) {
	v, ok := s.Params[key]
	if !ok {
		return def, nil
	}
	f, err := r.ParseFloat("", v)
	if err != nil {
		return 0, Errorf("parse spec", "", ErrBadSpec, "%s: %s=%v", s.Engine, key, err)
	}
	return f, nil
}

// MaxThreads bounds a spec's threads= (llamacpp, onnx).
const MaxThreads = 4096

// MaxSpecDuration bounds a spec's durations (timeout=): a day.
const MaxSpecDuration = 24 * time.Hour

// Input returns the spec's input= value, InputImages or InputVideo, or "" when absent.
func (s Spec) Input() (string, error) {
	v, ok := s.Params["input"]
	if !ok {
		return "", nil
	}
	if v != InputImages && v != InputVideo {
		return "", Errorf("parse spec", "", ErrBadSpec, "%s: input=%q (want images or video)", s.Engine, v)
	}
	return v, nil
}

// Duration returns the duration value of key ("30s", "2m"), def when absent.
func (s Spec) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := s.Params[key]
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > MaxSpecDuration {
		return 0, Errorf("parse spec", "", ErrBadSpec, "%s: %s=%q is not a duration > 0 and ≤ %v", s.Engine, key, v, MaxSpecDuration)
	}
	return d, nil
}

// Opener opens a runtime from a parsed spec.
type Opener func(Spec) (Runtime, error)

// Registry maps engine names to openers. It is an explicit value built by the caller (no init() globals).
type Registry map[string]Opener

// Open parses spec and opens the runtime of its engine.
func (r Registry) Open(spec string) (Runtime, error) {
	sp, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	open, ok := r[sp.Engine]
	if !ok {
		names := make([]string, 0, len(r))
		for n := range r {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, Errorf("open", "", ErrUnknownEngine, "%q (known: %s)", sp.Engine, strings.Join(names, ", "))
	}
	return open(sp)
}
