package ingest

import (
	"encoding/json"
	"fmt"
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

// base is the record of one row before its config and verdict: item, model, task, origin and the
// item's fields (from the row, else from the items file, matched by (task, item id)).
func (t *tableCols) base(row []string, line int) (record.Record, TableItem, error) {
	opt := t.opt
	id := t.cell(row, "item_id")
	if opt.ItemKey == "question" {
		id = t.cell(row, "question_id")
	}
	if id == "" {
		return record.Record{}, TableItem{}, t.rowErr(line, "no item id")
	}
	task := t.cell(row, "task")
	if task == "" {
		task = opt.Task
	}
	var it TableItem
	if opt.Items != nil {
		var ok bool
		var err error
		if it, ok, err = opt.Items.lookup(task, id, opt.ItemPrefix); err != nil {
			return record.Record{}, TableItem{}, t.rowErr(line, "%v", err)
		} else if !ok && task != "" && opt.Items.tasksOf(id, opt.ItemPrefix) != "" {
			return record.Record{}, TableItem{}, t.rowErr(line, "item %q of task %q is not in the items file (--items), which has it in task(s) %s", id, task, opt.Items.tasksOf(id, opt.ItemPrefix))
		} else if !ok {
			return record.Record{}, TableItem{}, t.rowErr(line, "item %q is not in the items file (--items)", id)
		}
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
	dur, err := opt.Durations.group(pick("duration", it.Duration))
	if err != nil {
		return rec, it, t.rowErr(line, "item %q: %v", id, err)
	}
	rec.Duration = dur
	rec.Origin = t.origin(row)
	if a := t.cell(row, "answer"); a != "" && it.Answer != "" && !strings.EqualFold(choiceOr(a), choiceOr(it.Answer)) {
		return rec, it, t.rowErr(line, "item %q: answer %q here, %q in the items file", id, a, it.Answer)
	}
	it.Answer = pick("answer", it.Answer)
	return rec, it, nil
}

// origin is a row's source_tag and protocol_note (nil when it has neither), one copy per distinct pair.
func (t *tableCols) origin(row []string) *record.Origin {
	o := record.Origin{SourceTag: t.cell(row, "source_tag"), ProtocolNote: t.cell(row, "protocol_note")}
	if o == (record.Origin{}) {
		return nil
	}
	if p := t.origins[o]; p != nil {
		return p
	}
	p := &o
	t.origins[o] = p
	return p
}

// itemName is an item as errors name it: its id, and its task when it has one.
func itemName(rec *record.Record) string {
	if rec.Task == "" {
		return fmt.Sprintf("item %q", rec.ItemID)
	}
	return fmt.Sprintf("item %q (task %q)", rec.ItemID, rec.Task)
}

// choiceOr is a gold answer's option letter, else the answer itself.
func choiceOr(s string) string {
	if l := choice(s, nil); l != "" {
		return l
	}
	return strings.TrimSpace(s)
}

// long reads a long table: one record per row. A record is (model, task, item, config, run): the
// same id in two tasks (splits) is two items.
func (t *tableCols) long(rows [][]string) (*Result, error) {
	res := &Result{}
	seen := map[string]int{}
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
			return nil, t.rowErr(line, "%s: no config", itemName(&rec))
		}
		if err := t.rowMeta(&rec, row, line); err != nil {
			return nil, err
		}
		if err := t.longVerdict(&rec, row, it.Answer, line); err != nil {
			return nil, err
		}
		key := strings.Join([]string{rec.Model, rec.Task, rec.ItemID, rec.Config, strconv.Itoa(rec.RunIndex())}, "\x00")
		if prev, dup := seen[key]; dup {
			return nil, record.Errorf(t.path, line, "import", record.ErrDuplicate, "%s config %q already on line %d", itemName(&rec), rec.Config, prev)
		}
		seen[key] = line
		res.Records = append(res.Records, rec)
	}
	if len(res.Records) == 0 {
		return nil, record.Errorf(t.path, 0, "import", record.ErrEmpty, "no rows")
	}
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
		t.checkLetters(ok, pred, gold, line)
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

// checkLetters counts a row whose verdict (correct) is not what its prediction's and answer's option
// letters say, when both have one: the table's verdict stands (it is the study's, as a harness's
// is), and the import's notes say how many rows disagree and where the first is.
func (t *tableCols) checkLetters(correct bool, pred, gold string, line int) {
	pl, gl := choice(pred, nil), choice(gold, nil)
	if pl == "" || gl == "" || (pl == gl) == correct {
		return
	}
	if t.disagree == 0 {
		t.firstDisagree = line
	}
	t.disagree++
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

// wide reads a wide table: one record per row and config column; a row is an item, (task, item id).
func (t *tableCols) wide(rows [][]string) (*Result, error) {
	res := &Result{}
	letters := make([]int, len(t.configs)) // cells that hold an option letter, per config column
	words := make([]int, len(t.configs))   // cells that hold text that is no number or true/false
	seen := map[itemKey]int{}
	for ri, row := range rows {
		line := ri + 2
		if blankRow(row) {
			continue
		}
		rec0, it, err := t.base(row, line)
		if err != nil {
			return nil, err
		}
		k := itemKey{rec0.Task, rec0.ItemID}
		if prev, dup := seen[k]; dup {
			return nil, record.Errorf(t.path, line, "import", record.ErrDuplicate, "%s already on line %d", itemName(&rec0), prev)
		}
		seen[k] = line
		if it.Answer == "" {
			return nil, t.rowErr(line, "%s: no answer to score the predictions against", itemName(&rec0))
		}
		for k, ci := range t.configs {
			pred := strings.TrimSpace(row[ci])
			if pred == "" && t.opt.EmptyMissing {
				continue
			}
			rec := rec0
			rec.Config = t.header[ci]
			var from metaFrom
			rec.ConfigMeta, from = t.nameMeta(rec.Config)
			if t.metas[rec.Config] == nil { // one shared config_meta per config column
				t.sameMeta(rec.Config, rec.ConfigMeta, line, from)
			}
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

// metaSeen is the config_meta a config's first record carried, where, and where it came from.
type metaSeen struct {
	meta string
	line int
	from metaFrom
}

// metaFrom is where a config's config_meta came from.
type metaFrom int

const (
	fromColumns metaFrom = iota // the row's columns (with --config-meta), or --frames & co.
	fromName                    // the config's name
	fromFlag                    // --config-meta alone
)

// rowMeta sets a long table row's config_meta: its columns (with what --config-meta says of its
// config), else the flags (a table of one config), else --config-meta, else the budget the config's
// name gives; a policy column adds the policy. The config's rows must agree.
func (t *tableCols) rowMeta(rec *record.Record, row []string, line int) error {
	fields := map[string]string{}
	for _, f := range ConfigMetaKeys {
		fields[f] = t.cell(row, f)
	}
	if s := t.cell(row, "size"); s != "" {
		w, h, ok := parseSize(s)
		if !ok {
			return t.rowErr(line, "size %q is not WxH", s)
		}
		fields["width"], fields["height"] = strconv.Itoa(w), strconv.Itoa(h)
	}
	if fields["frames"] != "" && fields["max_pixels"] != "" {
		if v, ok := pyval.Float(fields["frames"]); ok && v == 0 {
			fields["max_pixels"] = "" // the pixel count of no frame: a text-only row's says nothing
		}
	}
	any := false
	for _, v := range fields {
		any = any || v != ""
	}
	m, from := (*record.ConfigMeta)(nil), fromColumns
	switch {
	case any:
		cols, err := metaFromFields(fields)
		if err != nil {
			return t.rowErr(line, "%s config %q: %s", itemName(rec), rec.Config, t.columnNames(err.Error()))
		}
		if m, err = mergeMeta(cols, t.opt.ConfigMeta[rec.Config]); err != nil {
			return t.rowErr(line, "config %q: %v", rec.Config, err)
		}
	case t.opt.Meta != nil:
		m = t.opt.Meta
	default:
		m, from = t.nameMeta(rec.Config)
	}
	if p := t.cell(row, "policy"); p != "" {
		var mm record.ConfigMeta
		if m != nil {
			mm = *m
		}
		mm.Policy = p
		m = &mm
	}
	rec.ConfigMeta = m
	return t.sameMeta(rec.Config, m, line, from)
}

// columnNames puts the table's own column names into a message about fields (frame_count for frames).
func (t *tableCols) columnNames(msg string) string {
	for _, f := range ConfigMetaKeys {
		if i, ok := t.col[f]; ok && t.header[i] != f && strings.HasPrefix(msg, f+" ") {
			return t.header[i] + strings.TrimPrefix(msg, f)
		}
	}
	return msg
}

// sameMeta requires the records of one config to carry one config_meta.
func (t *tableCols) sameMeta(config string, m *record.ConfigMeta, line int, from metaFrom) error {
	b, _ := json.Marshal(m)
	if s := t.metas[config]; s != nil && s.meta != string(b) {
		return record.Errorf(t.path, line, "import", record.ErrConflict, "config %q: config_meta %s here but %s on line %d", config, b, s.meta, s.line)
	} else if s == nil {
		t.metas[config] = &metaSeen{meta: string(b), line: line, from: from}
	}
	return nil
}

// nameMeta is a config's config_meta when no column gives it: --config-meta's, else its name's (nil
// when the name gives none), one copy shared by every record of the config.
func (t *tableCols) nameMeta(config string) (*record.ConfigMeta, metaFrom) {
	if m := t.opt.ConfigMeta[config]; m != nil {
		return m, fromFlag
	}
	m, ok := t.named[config]
	if !ok {
		m = configFromName(config)
		t.named[config] = m
	}
	return m, fromName
}

// notes are what the rows said that the user should know: which configs' config_meta came from their
// names or --config-meta, which have no budget (and the flags that give one), and the verdicts that
// disagree with their letters.
func (t *tableCols) notes() []string {
	var named, none, flagged []string
	kilo := false
	for _, c := range keysSorted(t.metas) {
		s := t.metas[c]
		switch {
		case s.from == fromFlag:
			flagged = append(flagged, c)
		case s.from != fromName:
		case s.meta == "null":
			none = append(none, c)
		default:
			named = append(named, c+" "+s.meta)
			kilo = kilo || reKiloPixels.MatchString(c[strings.LastIndexAny(c, "_-")+1:])
		}
	}
	var out []string
	if len(named) > 0 {
		n := "config_meta from the config names: " + strings.Join(named, ", ")
		if kilo {
			n += " (a name's K thousand pixels is its rounding: --config-meta CONFIG=max_pixels:N gives the exact budget)"
		}
		out = append(out, n)
	}
	if len(flagged) > 0 {
		out = append(out, "config_meta from --config-meta: "+strings.Join(flagged, ", "))
	}
	if len(none) > 0 {
		how := "a frames column, "
		if t.opt.Wide {
			how = ""
		}
		out = append(out, fmt.Sprintf("configs %s name no frame budget: their cost is unknown, and every metric that orders configs is undefined (give each its budget with --config-meta CONFIG=frames:N[,max_pixels:N|,width:W,height:H] or --config-meta-file TABLE, %sor name them 16f, 16f_151k, 128f_input224, textonly)", strings.Join(none, ", "), how))
	}
	if t.disagree > 0 {
		out = append(out, fmt.Sprintf("%d rows' correct column is not what their predicted and gold letters say (first: line %d): the table's verdicts are kept", t.disagree, t.firstDisagree))
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
