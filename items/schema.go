package items

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/record"
)

// A release's rows are read strictly: every key (JSON) or column (Parquet, CSV) must be one the
// format knows, each of the type it has there, and the required ones present. A key the importer
// does not know is an error naming it and the file (a misspelt "candidates" would otherwise import
// as open-ended items, a renamed "options" column as items without options), and so is a value of
// the wrong type. A release that names a field otherwise is read with --map FIELD=KEY; a key to leave
// out knowingly is named with --ignore KEY.

// kind is the type of a release field.
type kind int

const (
	kString kind = iota
	kList        // a list of strings
	kNumber
	kAny // known and not read: any JSON value
)

func (k kind) String() string {
	if k < 0 || k > kAny {
		return "of another type"
	}
	return [...]string{"a string", "a list of strings", "a number", "any value"}[k]
}

// field is one key of a release row.
type field struct {
	name     string
	kind     kind
	required bool
}

// schema is a release format's row.
type schema struct {
	format string // as --format names it
	what   string // for messages: "Video-MME's release"
	fields []field
}

// videoMMESchema is a row of Video-MME's release (the parquet of lmms-lab/Video-MME, or the same
// rows as JSON): url, domain, sub_category and video_id are known and not used.
var videoMMESchema = schema{format: "videomme", what: "Video-MME's release", fields: []field{
	{"video_id", kString, false}, {"duration", kString, false}, {"domain", kString, false},
	{"sub_category", kString, false}, {"url", kString, false}, {"videoID", kString, true},
	{"question_id", kString, true}, {"task_type", kString, false}, {"question", kString, true},
	{"options", kList, true}, {"answer", kString, true},
}}

// mlvuSchema is a question of an MLVU task file (MLVU/json/*.json); a generation task has no
// candidates.
var mlvuSchema = schema{format: "mlvu", what: "an MLVU task file", fields: []field{
	{"video", kString, true}, {"duration", kNumber, false}, {"question", kString, true},
	{"candidates", kList, false}, {"answer", kString, true}, {"question_type", kString, false},
}}

// mlvuGenSchema is a question of an MLVU generation task file (8_sub_scene.json, 9_summary.json):
// MLVU's fields without candidates (a row with them is a multiple-choice task, refused by name);
// scoring_points, the points MLVU's judge scores a sub-scene caption by, is known and not read.
var mlvuGenSchema = schema{format: "mlvu-gen", what: "an MLVU generation task file", fields: []field{
	{"video", kString, true}, {"duration", kNumber, false}, {"question", kString, true},
	{"candidates", kAny, false}, {"answer", kString, true}, {"question_type", kString, true},
	{"scoring_points", kAny, false},
}}

// keyMap is the names a release gives the fields: --map FIELD=KEY (a field named otherwise) and
// --ignore KEY (a key left out).
type keyMap struct {
	key    map[string]string // field → the release's key
	field  map[string]string // the release's key → field
	ignore map[string]bool
}

// newKeyMap checks the mapping against s: a field it does not have, or two fields on one key, is
// an error naming the flag.
func newKeyMap(s *schema, o ImportOptions) (*keyMap, error) {
	km := &keyMap{key: map[string]string{}, field: map[string]string{}, ignore: map[string]bool{}}
	known := map[string]bool{}
	for _, f := range s.fields {
		known[f.name] = true
	}
	for f, k := range o.Map {
		if !known[f] {
			return nil, fmt.Errorf("--map %s=%s: %s has no field %q (fields: %s)", f, k, s.what, f, s.names())
		}
		if prev, dup := km.field[k]; dup {
			return nil, fmt.Errorf("--map: %s and %s both read key %q", prev, f, k)
		}
		km.key[f], km.field[k] = k, f
	}
	for _, f := range s.fields {
		if _, mapped := km.key[f.name]; !mapped {
			if prev, taken := km.field[f.name]; taken {
				return nil, fmt.Errorf("--map %s=%s: the release's %q is its own field too; map %s as well", prev, f.name, f.name, f.name)
			}
			km.key[f.name], km.field[f.name] = f.name, f.name
		}
	}
	for _, k := range o.Ignore {
		if _, used := km.field[k]; used {
			return nil, fmt.Errorf("--ignore %s: that key is read (as %s)", k, km.field[k])
		}
		km.ignore[k] = true
	}
	return km, nil
}

func (s *schema) names() string {
	var out []string
	for _, f := range s.fields {
		out = append(out, f.name)
	}
	return strings.Join(out, ", ")
}

func (s *schema) fieldByName(name string) field {
	for _, f := range s.fields {
		if f.name == name {
			return f
		}
	}
	return field{}
}

// unknownKey is the error of a key the format does not know.
func (s *schema) unknownKey(src, at, key string) error {
	return fmt.Errorf("%s: %sunknown key %q: not a key of %s (%s; a field the release names otherwise: --map FIELD=%s; a key to leave out: --ignore %s)",
		src, at, key, s.what, s.names(), key, key)
}

// missingKey is the error of a required field the row lacks.
func (s *schema) missingKey(src, at string, km *keyMap, name string) error {
	k := km.key[name]
	hint := fmt.Sprintf("if the release names it otherwise: --map %s=KEY", name)
	if k != name {
		hint = fmt.Sprintf("--map %s=%s", name, k)
	}
	return fmt.Errorf("%s: %sno %q, which %s has (%s)", src, at, k, s.what, hint)
}

// row is one release row: the fields present, by the format's names.
type row map[string]any

func (r row) str(name string) string {
	s, _ := r[name].(string)
	return s
}

func (r row) list(name string) []string {
	l, _ := r[name].([]string)
	return l
}

func (r row) number(name string) float64 {
	f, _ := r[name].(float64)
	return f
}

// readJSONRows reads a release as JSON (an array of objects, or JSON lines), each row strictly by s.
// The file must be valid UTF-8 without escaped lone surrogates or a key twice in an object
// (record.CheckJSON): encoding/json would turn an invalid byte into U+FFFD, and two ids differing
// only there into one.
func readJSONRows(path string, s *schema, km *keyMap) ([]row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = record.TrimBOM(b)
	if err := record.CheckJSON(b); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var raws []json.RawMessage
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &raws); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var r json.RawMessage
			if err := dec.Decode(&r); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			raws = append(raws, r)
		}
	}
	out := make([]row, 0, len(raws))
	for i, raw := range raws {
		r, err := s.jsonRow(path, fmt.Sprintf("row %d: ", i+1), raw, km)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// jsonRow reads one JSON object by s: its keys known, its values typed, the required ones there.
func (s *schema) jsonRow(src, at string, raw json.RawMessage, km *keyMap) (row, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%s: %snot an object: %v", src, at, err)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	r := row{}
	for _, k := range keys {
		if km.ignore[k] {
			continue
		}
		name, ok := km.field[k]
		if !ok {
			return nil, s.unknownKey(src, at, k)
		}
		if string(bytes.TrimSpace(obj[k])) == "null" {
			continue
		}
		f := s.fieldByName(name)
		v, err := decodeKind(obj[k], f.kind)
		if err != nil {
			return nil, fmt.Errorf("%s: %s%q is not %s", src, at, k, f.kind)
		}
		r[name] = v
	}
	return r, s.checkRow(src, at, r, km)
}

// decodeKind decodes a JSON value of kind k.
func decodeKind(raw json.RawMessage, k kind) (any, error) {
	switch k {
	case kList:
		var x []string
		err := json.Unmarshal(raw, &x)
		return x, err
	case kNumber:
		var x float64
		err := json.Unmarshal(raw, &x)
		return x, err
	case kAny:
		return raw, nil
	}
	var x string
	err := json.Unmarshal(raw, &x)
	return x, err
}

// checkRow checks the values of r that a sweep would refuse or misread, then that it has every
// required field: a list that is there but empty (Video-MME's "options": [] once became an
// open-ended item whose reference is "A", so a model answering "A" scored 1) and a number that is NaN
// or infinite (Parquet doubles can be).
func (s *schema) checkRow(src, at string, r row, km *keyMap) error {
	for _, f := range s.fields {
		switch v := r[f.name].(type) {
		case []string:
			if len(v) == 0 {
				return fmt.Errorf("%s: %s%q is an empty list (a multiple-choice row needs its options; leave the key out of an open-ended one)", src, at, km.key[f.name])
			}
		case float64:
			if err := num.Any.Float(strconv.Quote(km.key[f.name]), v); err != nil {
				return fmt.Errorf("%s: %s%v", src, at, err)
			}
		}
	}
	return s.required(src, at, r, km)
}

// required checks that r has every required field.
func (s *schema) required(src, at string, r row, km *keyMap) error {
	for _, f := range s.fields {
		if _, ok := r[f.name]; f.required && !ok {
			return s.missingKey(src, at, km, f.name)
		}
	}
	return nil
}
