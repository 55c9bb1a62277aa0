package audit

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeRecord parses one canonical record line. A hand-written scanner handles the plain form that
// writers produce (known keys, no \u escapes, no duplicate keys) about five times faster than
// encoding/json; on anything else it gives up and encoding/json decides, so the result is always
// exactly encoding/json's (FuzzDecodeRecord checks that).
func decodeRecord(b []byte, r *Record) error {
	var fast Record
	if fastRecord(b, &fast) {
		*r = fast
		return nil
	}
	*r = Record{}
	return jsonUnmarshal(b, r)
}

type scan struct {
	b []byte
	i int
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
				return string(raw), true
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
	return string(s.b[start:s.i]), integer, true
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
		v := true
		return &v, true
	case s.lit("false"):
		v := false
		return &v, true
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
	return &v, true
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
	return &v, true
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
			if strings.EqualFold(k, key) {
				return false
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
	"duration", "question_id", "task", "doc_hash", "config_meta", "latency_s"}

var metaKeys = []string{"frames", "text_only", "width", "height", "policy", "preset", "seed", "pipeline", "indices"}

func toInt(p *int64) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

func fastRecord(b []byte, r *Record) bool {
	s := &scan{b: b}
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
			r.Run = toInt(v)
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
		case "config_meta":
			if s.null() {
				r.ConfigMeta = nil
				return true
			}
			m := &ConfigMeta{}
			r.ConfigMeta = m
			return fastMeta(s, m)
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
			m.Frames = toInt(v)
		case "width":
			v, ok = s.optInt()
			m.Width = toInt(v)
		case "height":
			v, ok = s.optInt()
			m.Height = toInt(v)
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
