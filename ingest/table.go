package ingest

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// Table imports the per-item tables studies publish (`framesweep ingest table`), as CSV, TSV, JSON
// (a list of rows or a pandas orient), JSON lines, or xlsx:
//
//   - long (default): one row per item × config (× model), with the columns of tableFields under
//     their usual names (item_id or sample_id, config, correct, or prediction and answer; optional
//     frames, width/height or size, max_pixels, text_only, policy, task, category, duration, …);
//   - wide (TableOptions.Wide): one row per item, one column per config holding that config's
//     predicted option letter, the answers from an answer column or TableOptions.Items.
//
// Both are strict like the other importers: a column they do not know is an error naming it and
// the flags that map it (--map FIELD=COLUMN) or leave it out (--ignore COLUMN); in a wide table, every
// column that is no known field is a config, and one holding no option letter is an error.
func Table(r io.Reader, path string, opt TableOptions) (*Result, error) {
	if err := opt.check(path); err != nil {
		return nil, err
	}
	data, err := readAll(r, path)
	if err != nil {
		return nil, err
	}
	header, rows, err := readTable(data, path)
	if err != nil {
		return nil, err
	}
	t, err := newTableCols(header, path, opt)
	if err != nil {
		return nil, err
	}
	var res *Result
	if opt.Wide {
		res, err = t.wide(rows)
	} else {
		res, err = t.long(rows)
	}
	if err != nil {
		return nil, err
	}
	if u := unusedMeta(opt.ConfigMeta, t.metas); u != "" {
		return nil, record.Errorf(path, 0, "import", ErrBadArgs, "--config-meta names config(s) %s, which the table does not have (configs: %s)", u, strings.Join(keysSorted(t.metas), ", "))
	}
	for i := range res.Records {
		if err := res.Records[i].Validate(); err != nil {
			return nil, err
		}
	}
	res.Notes = append(res.Notes, t.notes()...)
	res.Notes = append(res.Notes, "a table carries no harness aggregate: the verdicts are the table's, or this importer's letter match of its predictions")
	return res, res.emit(opt.Options)
}

// TableOptions configure Table beyond Options (Config: the config of a long table without a config
// column; Model: the model of a table without a model column; Task: the task of rows without a task
// column; ItemKey, ItemPrefix; OpenEnded; Durations; Meta: the config_meta of the one config a table
// without a config column holds).
type TableOptions struct {
	Options
	Wide bool
	// Map names the column of a field (--map FIELD=COLUMN); Ignore the columns to leave out.
	Map    map[string]string
	Ignore []string
	// Items are the items file's answers and item fields by (task, item id) (--items), for a table
	// without an answer column (a wide table of predictions).
	Items *TableItems
	// ConfigMeta gives configs their config_meta by id (--config-meta, --config-meta-file): in a wide
	// table, or a long one whose configs' names and columns do not give their budget. It wins over a
	// name; a row's columns that disagree with it are an error. A config the table lacks is an error.
	ConfigMeta map[string]*record.ConfigMeta
	// EmptyMissing reads an empty prediction cell of a wide table as no answer (no record) instead of
	// an answer with no option letter (unparsed).
	EmptyMissing bool
}

func (o TableOptions) check(path string) error {
	bad := func(format string, a ...any) error {
		return record.Errorf(path, 0, "import", ErrBadArgs, format, a...)
	}
	o.Options.Config = "-" // the config comes from a column or a column name
	if err := o.Options.check(path); err != nil {
		return err
	}
	switch {
	case o.Wide && o.Meta != nil:
		return bad("a wide table's configs are its columns: give each its budget with --config-meta CONFIG=frames:N[,max_pixels:N] or a --config-meta-file table, not --frames, --size, --max-pixels or --text-only")
	case o.Meta != nil && len(o.ConfigMeta) > 0:
		return bad("--frames, --size, --max-pixels and --text-only describe a table's one config; --config-meta describes configs by id: give one or the other")
	case !o.Wide && o.EmptyMissing:
		return bad("empty prediction cells are a wide table's")
	case o.Rescore != "" || o.CorrectFrom != "" || o.PredField != "":
		return bad("a table's verdicts come from its correct column or its predictions: map columns with --map FIELD=COLUMN")
	}
	for f := range o.Map {
		if tableFieldByName(f) == nil {
			return bad("--map %s=…: %s is no field of a table (fields: %s)", f, f, tableFieldNames())
		}
	}
	return nil
}

// tableField is a field a table may have, under any of its usual column names.
type tableField struct {
	name    string
	aliases []string
	wide    bool // a field of a wide table too (a per-item field)
}

// tableFields are the fields of a table and the column names that give them, ours and those of the
// tables studies and harnesses publish: the study's per_item.csv (sample_id, split, frame_count,
// pixel_count, predicted_option, ground_truth_option, source_tag, protocol_note), lmms-eval's
// (doc_id, target, pred_answer, parsed_pred, question_id, task_type) and VLMEvalKit's (index,
// prediction, answer, category, hit, score). docs/audit.md "Table columns" lists them; keep the two
// in step.
var tableFields = []tableField{
	{"item_id", []string{"item_id", "sample_id", "item", "id", "index", "doc_id"}, true},
	{"question_id", []string{"question_id", "qid"}, true},
	{"answer", []string{"answer", "gold", "gt", "gt_answer", "ground_truth", "ground_truth_option", "gt_option", "target", "label"}, true},
	{"task", []string{"task", "split", "dataset", "benchmark"}, true},
	{"category", []string{"category", "task_type", "question_type", "task_category"}, true},
	{"duration", []string{"duration", "duration_group"}, true},
	{"source_tag", []string{"source_tag"}, true},
	{"protocol_note", []string{"protocol_note"}, true},
	{"model", []string{"model", "model_name"}, false},
	{"config", []string{"config", "config_id", "configuration"}, false},
	{"correct", []string{"correct", "is_correct", "hit", "acc"}, false},
	{"score", []string{"score"}, false},
	{"prediction", []string{"prediction", "pred", "pred_answer", "parsed_pred", "predicted", "predicted_option", "pred_option"}, false},
	{"confidence", []string{"confidence"}, false},
	{"run", []string{"run"}, false},
	{"frames", []string{"frames", "num_frames", "nframes", "nframe", "n_frames", "frame_count"}, false},
	{"width", []string{"width"}, false},
	{"height", []string{"height"}, false},
	{"size", []string{"size", "resolution"}, false},
	{"max_pixels", []string{"max_pixels", "pixel_count"}, false},
	{"text_only", []string{"text_only"}, false},
	{"policy", []string{"policy"}, false},
}

func tableFieldByName(name string) *tableField {
	for i := range tableFields {
		if tableFields[i].name == name {
			return &tableFields[i]
		}
	}
	return nil
}

func tableFieldNames() string {
	var n []string
	for _, f := range tableFields {
		n = append(n, f.name)
	}
	return strings.Join(n, ", ")
}

// tableCols is a table's header read: the column of each field, and (wide) the config columns; and
// what the rows read so far said: each config's config_meta, the origins, the verdicts that
// disagree with their letters.
type tableCols struct {
	path    string
	opt     TableOptions
	col     map[string]int // field → column
	configs []int          // wide: the config columns, in order
	header  []string
	metas   map[string]*metaSeen
	named   map[string]*record.ConfigMeta    // the config_meta each config's name gives
	origins map[record.Origin]*record.Origin // one copy per distinct origin
	// disagree counts the rows whose correct column is not what their prediction's and answer's
	// option letters say (firstDisagree: the first such line).
	disagree, firstDisagree int
}

// newTableCols maps the header's columns to fields: --map first, then the usual names; --ignore
// leaves a column out; any other column is an error (long) or a config (wide).
func newTableCols(header []string, path string, opt TableOptions) (*tableCols, error) {
	t := &tableCols{path: path, opt: opt, col: map[string]int{}, header: header, metas: map[string]*metaSeen{}, named: map[string]*record.ConfigMeta{}, origins: map[record.Origin]*record.Origin{}}
	colErr := func(format string, a ...any) error {
		return record.Errorf(path, 1, "import", record.ErrFormat, format, a...)
	}
	ignore := map[string]bool{}
	for _, c := range opt.Ignore {
		ignore[c] = true
	}
	byMap := map[string]string{}
	for f, c := range opt.Map {
		byMap[c] = f
	}
	seen := map[string]bool{}
	var unknown []string
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		header[i] = h
		if seen[h] {
			return nil, colErr("column %q twice", h)
		}
		seen[h] = true
		if ignore[h] {
			continue
		}
		f := byMap[h]
		if f == "" && !mappedAway(opt.Map, h) {
			f = aliasField(h)
		}
		if fd := tableFieldByName(f); fd != nil && (fd.wide || !opt.Wide) {
			if prev, dup := t.col[f]; dup {
				return nil, colErr("columns %q and %q both give %s: --ignore one of them, or --map %s=COLUMN", header[prev], h, f, f)
			}
			t.col[f] = i
			continue
		}
		if opt.Wide {
			t.configs = append(t.configs, i)
			continue
		}
		unknown = append(unknown, h)
	}
	for f, c := range opt.Map {
		if !seen[c] {
			return nil, colErr("--map %s=%s: no column %q (columns: %q)", f, c, c, header)
		}
	}
	if len(unknown) > 0 {
		return nil, colErr("unknown column(s) %q: map each to a field with --map FIELD=COLUMN (fields: %s), or leave it out with --ignore COLUMN", unknown, tableFieldNames())
	}
	return t, t.need()
}

// mappedAway reports whether column c is an alias some --map moved to another column.
func mappedAway(m map[string]string, c string) bool {
	f := aliasField(c)
	_, moved := m[f]
	return moved && m[f] != c
}

// aliasField is the field whose usual names include column c (case-insensitive), "" for none.
func aliasField(c string) string {
	lc := strings.ToLower(c)
	for _, f := range tableFields {
		for _, a := range f.aliases {
			if lc == a {
				return f.name
			}
		}
	}
	return ""
}

// need checks the columns a table must have: an item column (or the one --item-id names); a long
// table a config (column or --config) and a verdict (correct, score, or prediction with answers); a
// wide table config columns and answers.
func (t *tableCols) need() error {
	colErr := func(format string, a ...any) error {
		return record.Errorf(t.path, 1, "import", record.ErrFormat, format+" (columns: %q)", append(a, t.header)...)
	}
	has := func(f string) bool { _, ok := t.col[f]; return ok }
	if k := t.opt.ItemKey; !t.opt.byDoc() && k != "question" {
		if i := indexOf(t.header, k); i >= 0 {
			t.col["item_id"] = i
		} else {
			return colErr("--item-id %s: no such column", k)
		}
	}
	switch {
	case t.opt.ItemKey == "question" && !has("question_id"):
		return colErr("--item-id question: no question_id column")
	case t.opt.ItemKey != "question" && !has("item_id"):
		return colErr("no item column (item_id, sample_id, …): name it with --map item_id=COLUMN")
	case t.opt.Wide && len(t.configs) == 0:
		return colErr("a wide table needs one column of predicted letters per config")
	case t.opt.Wide && !has("answer") && t.opt.Items == nil:
		return colErr("no answer column: give the answers with --items ITEMS.jsonl, or --map answer=COLUMN")
	case t.opt.Wide:
		return nil
	case !has("config") && t.opt.Config == "":
		return colErr("no config column: name the file's one config with --config ID, or --map config=COLUMN")
	case has("config") && t.opt.Meta != nil:
		return colErr("--frames, --size, --max-pixels and --text-only describe the one config of a table without a config column; give this table's configs theirs with --config-meta CONFIG=frames:N,… (or --config-meta-file), or in frames, size or max_pixels columns")
	case has("config") && t.opt.Config != "":
		return colErr("--config names the config of a table without a config column; this one has one")
	case has("model") && t.opt.Model != "":
		return colErr("--model names the model of a table without a model column; this one has one")
	case !has("correct") && !has("score") && !has("prediction"):
		return colErr("no verdict: a long table needs a correct column, or prediction and answer columns")
	case !has("correct") && !has("score") && !has("answer") && t.opt.Items == nil:
		return colErr("predictions but no answer column: give the answers with --items ITEMS.jsonl, or --map answer=COLUMN")
	}
	return nil
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// readTable reads a table file: xlsx (a zip), Parquet (flat columns), JSON (a list of rows, a pandas
// orient), JSON lines (one row object a line), else CSV or TSV (delimiter).
func readTable(data []byte, path string) ([]string, [][]string, error) {
	trim := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return readXLSX(data, path)
	case bytes.HasPrefix(data, []byte("PAR1")):
		return readParquetTable(data, path)
	case len(trim) > 0 && (trim[0] == '[' || trim[0] == '{'):
		if err := textOK(trim, path, true); err != nil {
			return nil, nil, err
		}
		if isJSONLines(trim) {
			return readJSONLinesTable(trim, path)
		}
		return readJSONTable(trim, path)
	case strings.EqualFold(filepath.Ext(path), ".xlsx"):
		return nil, nil, record.Errorf(path, 0, "import", record.ErrFormat, "not an xlsx file (no zip signature)")
	}
	if err := textOK(data, path, false); err != nil {
		return nil, nil, err
	}
	return readDelimited(data, path, delimiter(data, path))
}

// isJSONLines reports whether data holds more than one JSON value (JSON lines), by decoding the first.
func isJSONLines(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	return dec.Decode(&v) == nil && dec.More()
}

// readJSONLinesTable reads JSON lines of row objects as a table (columns in first-seen order).
func readJSONLinesTable(data []byte, path string) ([]string, [][]string, error) {
	t := &jsonTable{path: path, index: map[string]int{}}
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
			return nil, nil, record.Errorf(path, n+1, "import", record.ErrSyntax, "a line of a JSON lines table is one row object")
		}
		if err := t.records([]any{obj}); err != nil {
			return nil, nil, err
		}
	}
	for i := range t.rows {
		for len(t.rows[i]) < len(t.header) {
			t.rows[i] = append(t.rows[i], "")
		}
	}
	return t.header, t.rows, nil
}

// rowErr is an error about one row (line: 1-based, the header is line 1).
func (t *tableCols) rowErr(line int, format string, a ...any) error {
	return record.Errorf(t.path, line, "import", record.ErrInvalid, format, a...)
}
