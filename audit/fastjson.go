package audit

import (
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// decodeRecord parses one canonical record line. A hand-written scanner handles the plain form that
// writers produce (known keys, no \u escapes, no duplicate keys) about five times faster than
// encoding/json; on anything else it gives up and encoding/json decides, so the result is always
// exactly encoding/json's (FuzzDecodeRecord checks that).
func decodeRecord(b []byte, r *Record) error {
	return (&arena{}).decode(b, r)
}

// arena serves the small values records point to from slabs and interns repeated strings (config ids,
// categories, policies…), which removes most of the per-record allocations. One per goroutine.
type arena struct {
	f      []float64
	n      []int
	n64    []int64
	bools  [2]*bool
	intern map[string]string
}

func (a *arena) decode(b []byte, r *Record) error {
	var fast Record
	s := &scan{b: b, a: a}
	if fastRecord(s, &fast) {
		*r = fast
		return nil
	}
	*r = Record{}
	return jsonUnmarshal(b, r)
}

func (a *arena) float(v float64) *float64 {
	if len(a.f) == cap(a.f) {
		a.f = make([]float64, 0, 1024)
	}
	a.f = append(a.f, v)
	return &a.f[len(a.f)-1]
}

func (a *arena) int(v int64) *int {
	if len(a.n) == cap(a.n) {
		a.n = make([]int, 0, 1024)
	}
	a.n = append(a.n, int(v))
	return &a.n[len(a.n)-1]
}

func (a *arena) int64(v int64) *int64 {
	if len(a.n64) == cap(a.n64) {
		a.n64 = make([]int64, 0, 256)
	}
	a.n64 = append(a.n64, v)
	return &a.n64[len(a.n64)-1]
}

// bool returns a shared pointer per value: records never write through it.
func (a *arena) bool(v bool) *bool {
	i := b2i(v)
	if a.bools[i] == nil {
		a.bools[i] = &v
	}
	return a.bools[i]
}

func (a *arena) str(raw []byte) string {
	if len(raw) > 64 {
		return string(raw)
	}
	if v, ok := a.intern[string(raw)]; ok {
		return v
	}
	if a.intern == nil || len(a.intern) > 8192 {
		a.intern = make(map[string]string, 256)
	}
	v := string(raw)
	a.intern[v] = v
	return v
}

type scan struct {
	b []byte
	i int
	a *arena
}

func (s *scan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads a string without \u escapes and with valid UTF-8.
func (s *scan) str() (string, bool) {
	if s.peek() != '"' {
		return "", false
	}
	s.i++
	start := s.i
	esc, ascii := false, true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(raw) {
				return "", false
			}
			if !esc {
				return s.a.str(raw), true
			}
			return unescape(raw)
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return "", false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			default:
				return "", false // \u and invalid escapes: leave to encoding/json
			}
			esc = true
			s.i += 2
		case c < 0x20:
			return "", false
		default:
			if c >= 0x80 {
				ascii = false
			}
			s.i++
		}
	}
	return "", false
}

func unescape(raw []byte) (string, bool) {
	var sb strings.Builder
	sb.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			sb.WriteByte(c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		default:
			sb.WriteByte(raw[i])
		}
	}
	return sb.String(), true
}

// num reads a JSON number token (strict grammar); integer reports no fraction or exponent.
func (s *scan) num() (tok string, integer, ok bool) {
	start := s.i
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		for c := s.peek(); c >= '0' && c <= '9'; c = s.peek() {
			s.i++
		}
	default:
		return "", false, false
	}
	integer = true
	if s.peek() == '.' {
		integer = false
		s.i++
		if c := s.peek(); c < '0' || c > '9' {
			return "", false, false
		}
		for c := s.peek(); c >= '0' && c <= '9'; c = s.peek() {
			s.i++
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		integer = false
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if c := s.peek(); c < '0' || c > '9' {
			return "", false, false
		}
		for c := s.peek(); c >= '0' && c <= '9'; c = s.peek() {
			s.i++
		}
	}
	// The line outlives the parse and is never modified, so a zero-copy view is safe; strconv only reads it.
	return unsafe.String(&s.b[start], s.i-start), integer, true
}

func (s *scan) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// null consumes a null literal.
func (s *scan) null() bool { return s.peek() == 'n' && s.lit("null") }

func (s *scan) optBool() (*bool, bool) {
	switch {
	case s.null():
		return nil, true
	case s.lit("true"):
		return s.a.bool(true), true
	case s.lit("false"):
		return s.a.bool(false), true
	}
	return nil, false
}

func (s *scan) optFloat() (*float64, bool) {
	if s.null() {
		return nil, true
	}
	tok, _, ok := s.num()
	if !ok {
		return nil, false
	}
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return nil, false
	}
	return s.a.float(v), true
}

func (s *scan) optInt() (*int64, bool) {
	if s.null() {
		return nil, true
	}
	tok, integer, ok := s.num()
	if !ok || !integer {
		return nil, false
	}
	v, err := strconv.ParseInt(tok, 10, 64)
	if err != nil {
		return nil, false
	}
	return s.a.int64(v), true
}

// optString: null leaves the field as it was (encoding/json's rule for non-pointer strings).
func (s *scan) optString(dst *string) bool {
	if s.null() {
		return true
	}
	v, ok := s.str()
	if ok {
		*dst = v
	}
	return ok
}

// object walks an object's members, calling field for each key; unknown keys are skipped unless they
// could match a field case-insensitively (encoding/json would fill it).
func (s *scan) object(known []string, field func(key string) bool, depth int) bool {
	s.ws()
	if s.peek() != '{' || depth > 64 {
		return false
	}
	s.i++
	var seenBuf [16]string
	seen := seenBuf[:0]
	s.ws()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		s.ws()
		key, ok := s.str()
		if !ok {
			return false
		}
		for _, k := range seen {
			if k == key {
				return false // duplicate keys: encoding/json merges objects; let it
			}
		}
		seen = append(seen, key)
		s.ws()
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.ws()
		isKnown := false
		for _, k := range known {
			if k == key {
				isKnown = true
				break
			}
		}
		if !isKnown {
			for _, k := range known {
				if strings.EqualFold(k, key) {
					return false // encoding/json would fill the field case-insensitively
				}
			}
		}
		if isKnown {
			if !field(key) {
				return false
			}
		} else {
			for j := 0; j < len(key); j++ {
				if key[j] >= 0x80 {
					return false // Unicode case folding: let encoding/json decide
				}
			}
			if !s.skip(depth + 1) {
				return false
			}
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// skip passes over any value of an unknown key.
func (s *scan) skip(depth int) bool {
	if depth > 64 {
		return false
	}
	switch c := s.peek(); {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		return s.object(nil, func(string) bool { return false }, depth+1)
	case c == '[':
		s.i++
		s.ws()
		if s.peek() == ']' {
			s.i++
			return true
		}
		for {
			s.ws()
			if !s.skip(depth + 1) {
				return false
			}
			s.ws()
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	default:
		_, _, ok := s.num()
		return ok
	}
}

var recordKeys = []string{"item_id", "config", "run", "correct", "score", "prediction", "answer", "confidence", "category",
	"duration", "question_id", "task", "doc_hash", "config_meta", "latency_s", "harness", "status", "error", "cascade"}

var metaKeys = []string{"frames", "text_only", "width", "height", "policy", "preset", "seed", "pipeline", "indices"}

var harnessKeys = []string{"metric", "kind", "value", "counted", "left_out", "skip", "flipped"}

func (s *scan) toInt(p *int64) *int {
	if p == nil {
		return nil
	}
	return s.a.int(*p)
}

func fastRecord(s *scan, r *Record) bool {
	ok := s.object(recordKeys, func(key string) bool {
		var ok bool
		switch key {
		case "item_id":
			return s.optString(&r.ItemID)
		case "config":
			return s.optString(&r.Config)
		case "run":
			var v *int64
			v, ok = s.optInt()
			r.Run = s.toInt(v)
		case "correct":
			r.Correct, ok = s.optBool()
		case "score":
			r.Score, ok = s.optFloat()
		case "confidence":
			r.Confidence, ok = s.optFloat()
		case "latency_s":
			r.LatencyS, ok = s.optFloat()
		case "prediction":
			return s.optString(&r.Prediction)
		case "answer":
			return s.optString(&r.Answer)
		case "category":
			return s.optString(&r.Category)
		case "duration":
			return s.optString(&r.Duration)
		case "question_id":
			return s.optString(&r.QuestionID)
		case "task":
			return s.optString(&r.Task)
		case "doc_hash":
			return s.optString(&r.DocHash)
		case "cascade":
			return false // rare (online cascade runs): encoding/json decodes these records
		case "status":
			return s.optString(&r.Status)
		case "error":
			return s.optString(&r.Error)
		case "config_meta":
			if s.null() {
				r.ConfigMeta = nil
				return true
			}
			m := &ConfigMeta{}
			r.ConfigMeta = m
			return fastMeta(s, m)
		case "harness":
			if s.null() {
				r.Harness = nil
				return true
			}
			h := &Harness{}
			r.Harness = h
			return fastHarness(s, h)
		}
		return ok
	}, 0)
	if !ok {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func fastMeta(s *scan, m *ConfigMeta) bool {
	return s.object(metaKeys, func(key string) bool {
		var ok bool
		var v *int64
		switch key {
		case "frames":
			v, ok = s.optInt()
			m.Frames = s.toInt(v)
		case "width":
			v, ok = s.optInt()
			m.Width = s.toInt(v)
		case "height":
			v, ok = s.optInt()
			m.Height = s.toInt(v)
		case "seed":
			m.Seed, ok = s.optInt()
		case "text_only":
			m.TextOnly, ok = s.optBool()
		case "policy":
			return s.optString(&m.Policy)
		case "preset":
			return s.optString(&m.Preset)
		case "pipeline":
			return s.optString(&m.Pipeline)
		case "indices":
			if s.null() {
				m.Indices = nil
				return true
			}
			if s.peek() != '[' {
				return false
			}
			s.i++
			m.Indices = []int{}
			s.ws()
			if s.peek() == ']' {
				s.i++
				return true
			}
			for {
				s.ws()
				x, ok := s.optInt()
				if !ok || x == nil {
					return false
				}
				m.Indices = append(m.Indices, int(*x))
				s.ws()
				switch s.peek() {
				case ',':
					s.i++
				case ']':
					s.i++
					return true
				default:
					return false
				}
			}
		}
		return ok
	}, 1)
}

// fastHarness reads the canonical harness object; a null member (which encoding/json leaves as the zero
// value of these non-pointer fields) or any other oddity goes to encoding/json.
func fastHarness(s *scan, h *Harness) bool {
	return s.object(harnessKeys, func(key string) bool {
		if s.peek() == 'n' {
			return false
		}
		switch key {
		case "metric":
			return s.optString(&h.Metric)
		case "kind":
			return s.optString(&h.Kind)
		case "value":
			v, ok := s.optFloat()
			if ok {
				h.Value = *v
			}
			return ok
		case "counted", "left_out":
			v, ok := s.optInt()
			if !ok || *v != int64(int(*v)) {
				return false
			}
			if key == "counted" {
				h.Counted = int(*v)
			} else {
				h.LeftOut = int(*v)
			}
			return true
		case "skip", "flipped":
			v, ok := s.optBool()
			if ok {
				if key == "skip" {
					h.Skip = *v
				} else {
					h.Flipped = *v
				}
			}
			return ok
		}
		return false
	}, 1)
}
