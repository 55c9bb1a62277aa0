package importers

import (
	"encoding/json"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/audit"
)

// MaxFileBytes bounds what an importer reads from one file.
const MaxFileBytes = 1 << 30

// Options say which configuration the imported answers belong to.
type Options struct {
	Config string            // required: the config id of every record
	Meta   *audit.ConfigMeta // optional: frames, text_only, width, height, policy
	Task   string            // lmms-eval: task name when the file name does not give it
	// ItemKey is "doc" (default: "<task>:<doc_id>" for lmms-eval, the index column for VLMEvalKit) or
	// "question" (the payload's question_id; lmms-eval only).
	ItemKey string
	// OpenEnded scores each answer with Token-F1 against the target(s) instead of exact match.
	OpenEnded bool
}

func (o Options) check(path string) error {
	if o.Config == "" {
		return audit.Errorf(path, 0, "import", audit.ErrBadArgs, "a config id is required")
	}
	if o.ItemKey != "" && o.ItemKey != "doc" && o.ItemKey != "question" {
		return audit.Errorf(path, 0, "import", audit.ErrBadArgs, "item key %q is not doc or question", o.ItemKey)
	}
	return nil
}

func readAll(r io.Reader, path string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, &audit.Error{Path: path, Op: "read", Err: err}
	}
	if len(b) > MaxFileBytes {
		return nil, audit.Errorf(path, 0, "read", audit.ErrTooLong, "file over %d bytes", MaxFileBytes)
	}
	return b, nil
}

var letterPrefix = regexp.MustCompile(`^\(?([A-Z])[.):]\s*`)

// stripLetter removes an "A. " style prefix from an option text.
func stripLetter(s string) string {
	return strings.TrimSpace(letterPrefix.ReplaceAllString(strings.TrimSpace(s), ""))
}

// choice maps an answer or prediction to an option letter: a letter it starts with, or the text of one
// of the candidates; "" when neither.
func choice(s string, candidates []string) string {
	if l := audit.OptionLetter(s); l != "" {
		return l
	}
	t := strings.ToLower(stripLetter(s))
	if t == "" {
		return ""
	}
	for i, c := range candidates {
		if i < 26 && strings.ToLower(stripLetter(c)) == t {
			if l := audit.OptionLetter(c); l != "" {
				return l
			}
			return string(rune('A' + i))
		}
	}
	return ""
}

// sameAnswer is exact match: option letters when both have one, else trimmed case-insensitive text.
func sameAnswer(pred, gold string, candidates []string) bool {
	gl, pl := choice(gold, candidates), choice(pred, candidates)
	if gl != "" {
		return pl == gl
	}
	return strings.EqualFold(strings.TrimSpace(pred), strings.TrimSpace(gold)) && strings.TrimSpace(gold) != ""
}

// scalarString renders a JSON scalar (string or number) as a string; other kinds give "".
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// firstString digs the first string out of a string, list, or list of lists (lmms-eval resps shapes).
func firstString(v any) (string, bool) {
	for depth := 0; depth < 4; depth++ {
		switch x := v.(type) {
		case string:
			return x, true
		case []any:
			if len(x) == 0 {
				return "", false
			}
			v = x[0]
		default:
			if s := scalarString(x); s != "" {
				return s, true
			}
			return "", false
		}
	}
	return "", false
}

// stringsOf returns a string or the strings of a list (several references).
func stringsOf(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			if s := scalarString(e); s != "" || e == "" {
				out = append(out, s)
			}
		}
		return out
	default:
		if s := scalarString(x); s != "" {
			return []string{s}
		}
	}
	return nil
}

func newRecord(opt Options, item string) audit.Record {
	r := audit.Record{ItemID: item, Config: opt.Config}
	if opt.Meta != nil {
		m := *opt.Meta
		r.ConfigMeta = &m
	}
	return r
}

func fmtErr(path string, line int, format string, a ...any) error {
	return audit.Errorf(path, line, "import", audit.ErrSyntax, format, a...)
}
