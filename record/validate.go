package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"
)

// One validator for every record line, whoever reads or writes it: the sweep (before a line is
// written, and on --resume), merge, import (record.Write) and the audit (record.Read). A line is a
// record when CheckLine accepts its bytes (length, UTF-8, no ambiguous JSON), it decodes into the
// typed schema (a value of the wrong type is an error, not a zero), and Validate accepts the values.
// What one of them refuses, none of them accepts.

// Error kinds of an error record (`error_kind`): why a pair got no answer, so a later session knows
// whether asking again can help. A sweep never records a cancellation, a full disk or a store failure:
// those stop the session and leave the pair to do.
const (
	// ErrorTransient: the runtime could not be reached or failed on its side after its own retries
	// (llm.ErrServer); `sweep --resume` asks again.
	ErrorTransient = "transient"
	// ErrorInput: the video cannot be read, opened or planned for the config, or a frame does not
	// decode; the same input fails again (`--retry-errors` asks again, e.g. once the file is there).
	ErrorInput = "input"
	// ErrorRuntime: the runtime refused or failed this request (a prompt over the context, too many
	// images, a reply that is not an answer); `--retry-errors` asks again.
	ErrorRuntime = "runtime"
)

// ErrorKinds are the values error_kind may take.
var ErrorKinds = []string{ErrorTransient, ErrorInput, ErrorRuntime}

// CheckLine checks the bytes of one record line before it is decoded: at most MaxLineBytes, valid
// UTF-8, no escaped lone surrogate (\ud800 alone decodes to U+FFFD, so two ids that differ only
// there would become one), and no key twice in one object (readers would disagree on which value
// counts). The errors wrap ErrTooLong or ErrSyntax. b must be one JSON value (the decoder checks the
// rest of the syntax).
func CheckLine(b []byte) error { return checkLine(b, nil, nil) }

// checkLine is CheckLine that also finds where the top-level values of the keys of capture lie.
func checkLine(b []byte, capture []string, spans []span) error {
	if len(b) > MaxLineBytes {
		return fmt.Errorf("%w: %d bytes, over %d", ErrTooLong, len(b), MaxLineBytes)
	}
	return checkText(b, capture, spans)
}

// CheckJSON is CheckLine without the length limit, for any JSON text (an importer's release file):
// valid UTF-8, no escaped lone surrogate, no key twice in one object. Errors wrap ErrSyntax.
func CheckJSON(b []byte) error { return checkText(b, nil, nil) }

// checkText is what CheckLine and CheckJSON both check: valid UTF-8, then scanJSON.
func checkText(b []byte, capture []string, spans []span) error {
	if !utf8.Valid(b) {
		return fmt.Errorf("%w: invalid UTF-8 (byte %d)", ErrSyntax, InvalidUTF8At(b))
	}
	return scanJSON(b, capture, spans)
}

// InvalidUTF8At is the offset of b's first byte that is not valid UTF-8 (len(b) when there is none).
func InvalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// span is where a value lies in a line: b[from:to] (to == 0: not found or not closed).
type span struct{ from, to int }

func (s span) found() bool { return s.to > s.from }

// scanJSON walks b's strings and objects: escaped surrogates must pair, and an object's keys must
// differ. It does not check the rest of the syntax; a malformed b gets whatever error (or none). For
// each name of capture, spans gets where the top-level object's value of that key lies when it is an
// object or a list. It allocates nothing for lines of usual depth and width.
func scanJSON(b []byte, capture []string, spans []span) error {
	type level struct {
		obj     bool
		wantKey bool
		from    int // this level's first key in keys
	}
	var stackBuf [16]level
	var keyBuf [64][]byte
	stack, keys := stackBuf[:0], keyBuf[:0]
	pending, at := -1, 0 // the capture whose value comes next, and the depth it opens
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			if pending >= 0 && len(stack) == 1 && at == 0 {
				// A second top-level value of a malformed line may name the key again: its span
				// starts afresh (to 0 until it closes), never pairing with the first value's end.
				spans[pending], at = span{from: i}, 2
			}
			stack = append(stack, level{obj: b[i] == '{', wantKey: true, from: len(keys)})
		case '}', ']':
			if n := len(stack); n > 0 {
				if at == n {
					spans[pending].to, pending, at = i+1, -1, 0
				}
				keys = keys[:stack[n-1].from]
				stack = stack[:n-1]
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].wantKey = true
				if n == 1 && at == 0 {
					pending = -1 // a scalar value of a captured key
				}
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].wantKey = false
			}
		case '"':
			end, escaped, err := scanString(b, i)
			if err != nil {
				return err
			}
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
				key := b[i+1 : end]
				if escaped && end < len(b) { // an unterminated string is the decoder's error to report
					var s string
					if json.Unmarshal(b[i:end+1], &s) == nil {
						key = []byte(s)
					}
				}
				for _, k := range keys[stack[n-1].from:] {
					if bytes.Equal(k, key) {
						return fmt.Errorf("%w: key %q twice in one object (byte %d)", ErrSyntax, key, i)
					}
				}
				keys = append(keys, key)
				stack[n-1].wantKey = false
				if n == 1 {
					for k, c := range capture {
						if string(key) == c {
							pending = k
						}
					}
				}
			}
			i = end
		}
	}
	return nil
}

// scanString reads the JSON string starting at b[i] (a quote): the index of its closing quote,
// whether it holds escapes, and an error for an escaped surrogate that does not pair.
func scanString(b []byte, i int) (end int, escaped bool, err error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j, escaped, nil
		case '\\':
			escaped = true
			if j+1 >= len(b) {
				return len(b), escaped, nil
			}
			j++
			if b[j] != 'u' {
				continue
			}
			v, ok := hex4(b, j+1)
			if !ok {
				continue
			}
			j += 4
			switch {
			case v >= 0xDC00 && v <= 0xDFFF:
				return 0, escaped, fmt.Errorf("%w: an escaped lone surrogate \\u%04x (byte %d)", ErrSyntax, v, j-5)
			case v >= 0xD800 && v <= 0xDBFF:
				if j+2 < len(b) && b[j+1] == '\\' && b[j+2] == 'u' {
					if w, ok := hex4(b, j+3); ok && w >= 0xDC00 && w <= 0xDFFF {
						j += 6
						continue
					}
				}
				return 0, escaped, fmt.Errorf("%w: an escaped lone surrogate \\u%04x (byte %d)", ErrSyntax, v, j-5)
			}
		}
	}
	return len(b), escaped, nil
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(v), err == nil
}

// DecodeFull decodes one line of a sweep's records (Record and Provenance) and validates it: the
// checks of CheckLine, the types of the schema (a value of the wrong type is an error), Validate.
// Unknown keys are ignored, as every reader ignores them. Errors are *Error naming src.
func DecodeFull(b []byte, src Source) (*Full, error) {
	if err := CheckLine(b); err != nil {
		return nil, &Error{Path: src.Path, Line: src.Line, Op: "parse", Err: err}
	}
	var f Full
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, Errorf(src.Path, src.Line, "parse", ErrSyntax, "%v", err)
	}
	f.Source = src
	f.Upgrade()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Canonical re-encodes one JSON value so that two encodings of the same value are the same bytes:
// object keys sorted, no white space, strings as encoding/json writes them, and numbers by value
// (0.5, 5e-1 and 0.50 are one number; an integer is written without exponent or fraction). It is
// what merge compares records by.
func Canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeCanonical(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeCanonical(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteByte(':')
			if err := writeCanonical(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case json.Number:
		buf.WriteString(CanonicalNumber(string(x)))
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

// CanonicalNumber writes a JSON number by its value: an integer (also 1e3 or 2.0) as digits, any other
// number as the shortest decimal that reads back as the same float64. A number beyond float64's range
// stays as written.
func CanonicalNumber(s string) string {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// MaxLoaderBytes bounds config_meta.loader, a harness loader's name (loader.Names).
const MaxLoaderBytes = 128

// validStrings checks that the record's text fields are UTF-8: encoding/json would write an invalid
// byte as U+FFFD, so two ids that differ only there would become one record.
func (r *Record) validStrings() error {
	var meta [4]string
	if m := r.ConfigMeta; m != nil {
		meta = [4]string{m.Policy, m.Preset, m.Pipeline, m.Loader}
	}
	var metric string
	if r.Harness != nil {
		metric = r.Harness.Metric
	}
	var origin Origin
	if r.Origin != nil {
		origin = *r.Origin
	}
	for _, f := range [...]struct{ name, s string }{{"item_id", r.ItemID}, {"config", r.Config}, {"prediction", r.Prediction},
		{"answer", r.Answer}, {"category", r.Category}, {"duration", r.Duration}, {"question_id", r.QuestionID},
		{"task", r.Task}, {"doc_hash", r.DocHash}, {"error", r.Error}, {"model", r.Model},
		{"config_meta.policy", meta[0]}, {"config_meta.preset", meta[1]}, {"config_meta.pipeline", meta[2]},
		{"config_meta.loader", meta[3]}, {"harness.metric", metric}, {"origin.source_tag", origin.SourceTag},
		{"origin.protocol_note", origin.ProtocolNote}} {
		if !utf8.ValidString(f.s) {
			return Errorf(r.Source.Path, r.Source.Line, "validate", ErrInvalid, "%s %q is not valid UTF-8", f.name, f.s)
		}
	}
	if n := max(len(origin.SourceTag), len(origin.ProtocolNote)); n > MaxOriginBytes {
		return Errorf(r.Source.Path, r.Source.Line, "validate", ErrInvalid, "item %q config %q: an origin text of %d bytes (at most %d)", r.ItemID, r.Config, n, MaxOriginBytes)
	}
	if len(meta[3]) > MaxLoaderBytes {
		return Errorf(r.Source.Path, r.Source.Line, "validate", ErrInvalid, "config %q: config_meta.loader of %d bytes (at most %d)", r.Config, len(meta[3]), MaxLoaderBytes)
	}
	return nil
}

// checkErrorKind checks error_kind: only on an error record, one of ErrorKinds.
func (r *Record) checkErrorKind() error {
	if r.ErrorKind == "" {
		return nil
	}
	if r.Status != StatusError {
		return Errorf(r.Source.Path, r.Source.Line, "validate", ErrInvalid, "item %q config %q: error_kind %q on a record that is not an error", r.ItemID, r.Config, r.ErrorKind)
	}
	if slices.Contains(ErrorKinds, r.ErrorKind) {
		return nil
	}
	return Errorf(r.Source.Path, r.Source.Line, "validate", ErrInvalid, "item %q config %q: error_kind %q (want transient, input or runtime)", r.ItemID, r.Config, r.ErrorKind)
}

// Transient reports whether r is an error record whose error may not happen again (ErrorTransient).
func (r *Record) Transient() bool { return r.Failed() && r.ErrorKind == ErrorTransient }

// Supersede drops the error records that a record of the same pair (model, task, item, config and
// run: another model's answer, or the same id in another split, is another pair) supersedes, compacting recs in place: a sweep's --resume and --retry-errors ask a failed pair again
// and append its new record, so a RUN may hold error records of a pair before (or, read from chunks
// and records.jsonl, beside) its answer. An answer supersedes every error record of its pair; of a
// pair's error records alone, the last one read is kept. It returns the records kept and how many
// were dropped; without error records it touches nothing.
func Supersede(recs []Record) ([]Record, int) {
	type key struct {
		model, task, item, config string
		run                       int
	}
	keyOf := func(r *Record) key { return key{r.Model, r.Task, r.ItemID, r.Config, r.RunIndex()} }
	last := map[key]int{} // a pair's last error record; -1 once an answer is seen
	for i := range recs {
		if recs[i].Failed() {
			last[keyOf(&recs[i])] = i
		}
	}
	if len(last) == 0 {
		return recs, 0
	}
	for i := range recs {
		if !recs[i].Failed() {
			k := keyOf(&recs[i])
			if _, ok := last[k]; ok {
				last[k] = -1
			}
		}
	}
	out := recs[:0]
	for i := range recs {
		if recs[i].Failed() && last[keyOf(&recs[i])] != i {
			continue
		}
		out = append(out, recs[i])
	}
	dropped := len(recs) - len(out)
	clear(recs[len(out):]) // the tail's strings and pointers are garbage now
	return out, dropped
}
