package ingest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/ingest/pyval"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/score"
)

// cell is a row's trimmed value of a field ("" when the table has no such column).
func (t *tableCols) cell(row []string, field string) string {
	if i, ok := t.col[field]; ok && i < len(row) {
		return strings.TrimSpace(row[i])
	}
	return ""
}

// has reports whether the table has a column for field.
func (t *tableCols) has(field string) bool { _, ok := t.col[field]; return ok }

// base is the record of one row before its config and verdict: item, model, task and the item's
// fields (from the row, else from the items file).
func (t *tableCols) base(row []string, line int) (record.Record, TableItem, error) {
	opt := t.opt
	id := t.cell(row, "item_id")
	if opt.ItemKey == "question" {
		id = t.cell(row, "question_id")
	}
	if id == "" {
		return record.Record{}, TableItem{}, t.rowErr(line, "no item id")
	}
	it, ok := opt.Items[id]
	if !ok {
		it, ok = opt.Items[opt.ItemPrefix+id] // the items file may name the ids with their prefix
	}
	if opt.Items != nil && !ok {
		return record.Record{}, TableItem{}, t.rowErr(line, "item %q is not in the items file (--items)", id)
	}
	rec := newRecord(opt.Options, id)
	rec.Source = record.Source{Path: t.path, Line: line}
	rec.QuestionID = t.cell(row, "question_id")
	if m := t.cell(row, "model"); m != "" {
		rec.Model = m
	}
	pick := func(field, fromItems string) string {
		if v := t.cell(row, field); v != "" {
			return v
		}
		return fromItems
	}
	rec.Task = pick("task", it.Task)
	if rec.Task == "" {
		rec.Task = opt.Task
	}
	rec.Category = pick("category", it.Category)
	rec.Duration = opt.Durations.group(pick("duration", it.Duration))
	if a := t.cell(row, "answer"); a != "" && it.Answer != "" && !strings.EqualFold(choiceOr(a), choiceOr(it.Answer)) {
		return rec, it, t.rowErr(line, "item %q: answer %q here, %q in the items file", id, a, it.Answer)
	}
	it.Answer = pick("answer", it.Answer)
	return rec, it, nil
}

// choiceOr is a gold answer's option letter, else the answer itself.
func choiceOr(s string) string {
	if l := choice(s, nil); l != "" {
		return l
	}
	return strings.TrimSpace(s)
}

// long reads a long table: one record per row.
func (t *tableCols) long(rows [][]string) (*Result, error) {
	res := &Result{}
	seen := map[string]int{}
	metas := map[string]*metaSeen{}
	for ri, row := range rows {
		line := ri + 2
		if blankRow(row) {
			continue
		}
		rec, it, err := t.base(row, line)
		if err != nil {
			return nil, err
		}
		rec.Config = t.opt.Config
		if c := t.cell(row, "config"); t.has("config") {
			rec.Config = c
		}
		if rec.Config == "" {
			return nil, t.rowErr(line, "item %q: no config", rec.ItemID)
		}
		if err := t.rowMeta(&rec, row, line, metas); err != nil {
			return nil, err
		}
		if err := t.longVerdict(&rec, row, it.Answer, line); err != nil {
			return nil, err
		}
		key := rec.Model + "\x00" + rec.ItemID + "\x00" + rec.Config + "\x00" + strconv.Itoa(rec.RunIndex())
		if prev, dup := seen[key]; dup {
			return nil, record.Errorf(t.path, line, "import", record.ErrDuplicate, "item %q config %q already on line %d", rec.ItemID, rec.Config, prev)
		}
		seen[key] = line
		res.Records = append(res.Records, rec)
	}
	if len(res.Records) == 0 {
		return nil, record.Errorf(t.path, 0, "import", record.ErrEmpty, "no rows")
	}
	res.Notes = append(res.Notes, framesNotes(metas)...)
	return res, nil
}

// longVerdict sets a long table row's verdict: the correct (or score) column, else the prediction's
// option letter against the answer's; a prediction with no letter is unparsed.
func (t *tableCols) longVerdict(rec *record.Record, row []string, gold string, line int) error {
	pred := t.cell(row, "prediction")
	rec.Prediction, rec.Answer = pred, choiceOr(gold)
	if c := t.cell(row, "confidence"); c != "" {
		v, ok := pyval.Float(c)
		if !ok {
			return t.rowErr(line, "confidence %q is not a number", c)
		}
		rec.Confidence = &v
	}
	if r := t.cell(row, "run"); r != "" {
		n, err := strconv.Atoi(r)
		if err != nil {
			return t.rowErr(line, "run %q is not an integer", r)
		}
		rec.Run = &n
	}
	switch {
	case t.opt.OpenEnded && t.has("score"):
		v, ok := pyval.Float(t.cell(row, "score"))
		if !ok || !(v >= 0 && v <= 1) {
			return t.rowErr(line, "score %q is not in [0,1]", t.cell(row, "score"))
		}
		rec.Score = &v
		return nil
	case t.opt.OpenEnded:
		f1 := score.TokenF1(pred, gold)
		rec.Score = &f1
		return nil
	case t.has("correct") || t.has("score"):
		f := "correct"
		if !t.has("correct") {
			f = "score"
		}
		c := t.cell(row, f)
		if v, ok := pyval.Float(c); ok && v < 0 { // VLMEvalKit's -1: no verdict, no letter found
			rec.Correct, rec.Unparsed = boolPtr(false), true
			break
		}
		ok, isV := tableVerdict(c)
		if !isV {
			return t.rowErr(line, "%s %q is not a verdict (true/false, yes/no, 1/0)", f, c)
		}
		rec.Correct = &ok
		rec.Unparsed = !ok && t.has("prediction") && choice(pred, nil) == ""
	default:
		if gold == "" {
			return t.rowErr(line, "item %q: no answer to score the prediction against", rec.ItemID)
		}
		letterVerdict(rec, pred, gold)
	}
	if l := choice(pred, nil); l != "" {
		rec.Prediction = l
	}
	return nil
}

// letterVerdict scores a prediction against the gold answer by option letter (text when the gold
// answer has none); a prediction without a letter is unparsed.
func letterVerdict(rec *record.Record, pred, gold string) {
	ok := sameAnswer(pred, gold, nil)
	rec.Correct = &ok
	rec.Unparsed = !ok && choice(gold, nil) != "" && choice(pred, nil) == ""
}

// tableVerdict reads a verdict cell: true/false, yes/no, or 1/0.
func tableVerdict(c string) (bool, bool) {
	switch strings.ToLower(c) {
	case "yes", "y", "t":
		return true, true
	case "no", "n", "f":
		return false, true
	}
	return cellVerdict(c)
}

// wide reads a wide table: one record per row and config column.
func (t *tableCols) wide(rows [][]string) (*Result, error) {
	res := &Result{}
	metas := map[string]*metaSeen{}
	letters := make([]int, len(t.configs)) // cells that hold an option letter, per config column
	words := make([]int, len(t.configs))   // cells that hold text that is no number or true/false
	seen := map[string]int{}
	for ri, row := range rows {
		line := ri + 2
		if blankRow(row) {
			continue
		}
		rec0, it, err := t.base(row, line)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[rec0.ItemID]; dup {
			return nil, record.Errorf(t.path, line, "import", record.ErrDuplicate, "item %q already on line %d", rec0.ItemID, prev)
		}
		seen[rec0.ItemID] = line
		if it.Answer == "" {
			return nil, t.rowErr(line, "item %q: no answer to score the predictions against", rec0.ItemID)
		}
		for k, ci := range t.configs {
			pred := ""
			if ci < len(row) {
				pred = strings.TrimSpace(row[ci])
			}
			if pred == "" && t.opt.EmptyMissing {
				continue
			}
			rec := rec0
			rec.Config = t.header[ci]
			rec.ConfigMeta = configFromName(rec.Config)
			t.noteMeta(metas, rec.Config, rec.ConfigMeta, line)
			rec.Answer = choiceOr(it.Answer)
			letterVerdict(&rec, pred, it.Answer)
			if l := choice(pred, nil); l != "" {
				rec.Prediction = l
				letters[k]++
			} else {
				rec.Prediction = pred
				if _, isNum := pyval.Float(pred); pred != "" && !isNum {
					if _, isBool := tableVerdict(pred); !isBool {
						words[k]++
					}
				}
			}
			res.Records = append(res.Records, rec)
		}
	}
	if len(seen) == 0 {
		return nil, record.Errorf(t.path, 0, "import", record.ErrEmpty, "no rows")
	}
	// A per-item tag (0/1, true/false, a number) or an empty column is no config's predictions; a
	// config whose replies all lack a letter (text) is one, unparsed throughout.
	for k, ci := range t.configs {
		if letters[k] == 0 && words[k] == 0 {
			return nil, record.Errorf(t.path, 1, "import", record.ErrFormat, "column %q holds no option letter and no reply in any row (numbers, true/false or nothing): if it is not a config's predictions, leave it out with --ignore %s or map it with --map FIELD=%s (fields: %s)",
				t.header[ci], t.header[ci], t.header[ci], wideFieldNames())
		}
	}
	res.Notes = append(res.Notes, framesNotes(metas)...)
	return res, nil
}

func wideFieldNames() string {
	var n []string
	for _, f := range tableFields {
		if f.wide {
			n = append(n, f.name)
		}
	}
	return strings.Join(n, ", ")
}

// metaSeen is the config_meta a config's first record carried, and where.
type metaSeen struct {
	meta     string
	line     int
	fromName bool
}

// rowMeta sets a long table row's config_meta: its columns, else the flags (a table of one config),
// else the frames the config's name gives; the config's rows must agree.
func (t *tableCols) rowMeta(rec *record.Record, row []string, line int, metas map[string]*metaSeen) error {
	m := &record.ConfigMeta{Policy: t.cell(row, "policy")}
	any := m.Policy != ""
	num := func(f string) (*int, error) {
		c := t.cell(row, f)
		if c == "" {
			return nil, nil
		}
		v, err := strconv.Atoi(c)
		if err != nil {
			if fv, ok := pyval.Float(c); ok && fv == float64(int(fv)) {
				v = int(fv)
			} else {
				return nil, t.rowErr(line, "%s %q is not an integer", f, c)
			}
		}
		any = true
		return &v, nil
	}
	var err error
	if m.Frames, err = num("frames"); err != nil {
		return err
	}
	if m.Width, err = num("width"); err != nil {
		return err
	}
	if m.Height, err = num("height"); err != nil {
		return err
	}
	if m.MaxPixels, err = num("max_pixels"); err != nil {
		return err
	}
	if s := t.cell(row, "size"); s != "" {
		w, h, ok := parseSize(s)
		if !ok {
			return t.rowErr(line, "size %q is not WxH", s)
		}
		m.Width, m.Height, any = &w, &h, true
	}
	if c := t.cell(row, "text_only"); c != "" {
		v, ok := tableVerdict(c)
		if !ok {
			return t.rowErr(line, "text_only %q is not true/false", c)
		}
		m.TextOnly, any = &v, true
	}
	fromName := false
	switch {
	case any:
	case t.opt.Meta != nil:
		m = t.opt.Meta
	default:
		m, fromName = configFromName(rec.Config), true
	}
	rec.ConfigMeta = m
	if fromName {
		return t.noteMeta(metas, rec.Config, m, line)
	}
	return t.sameMeta(metas, rec.Config, m, line)
}

// sameMeta requires the records of one config to carry one config_meta.
func (t *tableCols) sameMeta(metas map[string]*metaSeen, config string, m *record.ConfigMeta, line int) error {
	b, _ := json.Marshal(m)
	if s := metas[config]; s != nil && s.meta != string(b) {
		return record.Errorf(t.path, line, "import", record.ErrConflict, "config %q: config_meta %s here but %s on line %d", config, b, s.meta, s.line)
	} else if s == nil {
		metas[config] = &metaSeen{meta: string(b), line: line}
	}
	return nil
}

// noteMeta records a config_meta read from the config's name (for the notes).
func (t *tableCols) noteMeta(metas map[string]*metaSeen, config string, m *record.ConfigMeta, line int) error {
	if metas[config] == nil {
		b, _ := json.Marshal(m)
		metas[config] = &metaSeen{meta: string(b), line: line, fromName: true}
	}
	return nil
}

// framesNotes say which configs' frames came from their names, and which have none.
func framesNotes(metas map[string]*metaSeen) []string {
	var named, none []string
	for _, c := range keysSorted(metas) {
		s := metas[c]
		switch {
		case !s.fromName:
		case s.meta == "null":
			none = append(none, c)
		default:
			named = append(named, c+" "+s.meta)
		}
	}
	var out []string
	if len(named) > 0 {
		out = append(out, "config_meta from the config names: "+strings.Join(named, ", "))
	}
	if len(none) > 0 {
		out = append(out, fmt.Sprintf("configs %s name no frame budget: their cost is unknown (add a frames column, or name them f16, 16frame, text-only)", strings.Join(none, ", ")))
	}
	return out
}

func keysSorted[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// reBudgetName is a config name that says its frame budget: 16, f16, 16f, 16frame(s), frames16,
// frames_16, nframe16; reTextName one that says text only.
var (
	reBudgetName = regexp.MustCompile(`(?i)^(?:f|frames?_?|nframes?_?)?(\d{1,6})(?:f|frames?)?$`)
	reTextName   = regexp.MustCompile(`(?i)^(?:text|text[-_ ]?only|no[-_]?video|blind|0f|f0|0frames?)$`)
)

// configFromName is the config_meta a config's name gives: frames of a budget name, text_only of a
// text-only name; nil when it gives none.
func configFromName(name string) *record.ConfigMeta {
	if reTextName.MatchString(name) {
		t, z := true, 0
		return &record.ConfigMeta{TextOnly: &t, Frames: &z}
	}
	if m := reBudgetName.FindStringSubmatch(name); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil && n > 0 {
			return &record.ConfigMeta{Frames: &n}
		}
	}
	return nil
}

// parseSize reads "448x448" (or ×).
func parseSize(s string) (int, int, bool) {
	a, b, ok := strings.Cut(strings.ReplaceAll(strings.ToLower(s), "×", "x"), "x")
	if !ok {
		return 0, 0, false
	}
	w, e1 := strconv.Atoi(strings.TrimSpace(a))
	h, e2 := strconv.Atoi(strings.TrimSpace(b))
	return w, h, e1 == nil && e2 == nil && w > 0 && h > 0
}

// blankRow reports whether a row holds nothing (a trailing empty line).
func blankRow(row []string) bool {
	for _, c := range row {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
