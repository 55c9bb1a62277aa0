package ingest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/ingest/pyval"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/score"
)

// VLMEvalKit imports the `_score` file VLMEvalKit's evaluation writes (`{model}_{dataset}_score.xlsx`:
// the dataset table, the `prediction` column and the per-row `score` verdict), as xlsx (the default),
// tsv, or json (PRED_FORMAT). The format is chosen by content (xlsx is a zip, json starts with [ or {)
// and otherwise by extension. The verdict is the `score` column (1 correct; 0 wrong; -1 or empty: no
// verdict, counted wrong); a file without one (the prediction file) needs opt.Rescore "text", which
// scores the prediction's option letter or option text against the answer here, with `candidates` (a
// Python list literal, parsed as data) giving the option texts. For Video-MME and MVBench the dataset's
// rating (the `_rating.json` numbers) is recomputed and stamped on the records.
func VLMEvalKit(r io.Reader, path string, opt Options) (*Result, error) {
	if err := opt.check(path); err != nil {
		return nil, err
	}
	if opt.Meta != nil { // one config_meta, shared by every record (records treat it as read-only)
		m := *opt.Meta
		opt.Meta = &m
	}
	data, err := readAll(r, path)
	if err != nil {
		return nil, err
	}
	var header []string
	var rows [][]string
	trim := bytes.TrimLeft(data, " \t\r\n\xef\xbb\xbf")
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		header, rows, err = readXLSX(data, path)
	case len(trim) > 0 && (trim[0] == '[' || trim[0] == '{'):
		if err := textOK(trim, path, true); err != nil {
			return nil, err
		}
		header, rows, err = readJSONTable(trim, path)
	case strings.EqualFold(filepath.Ext(path), ".xlsx"):
		err = record.Errorf(path, 0, "import", record.ErrFormat, "not an xlsx file (no zip signature)")
	default:
		if err := textOK(data, path, false); err != nil {
			return nil, err
		}
		header, rows, err = readDelimited(data, path, delimiter(data, path))
	}
	if err != nil {
		return nil, err
	}
	return vlmRows(header, rows, path, opt)
}

// delimiter is a text table's field separator: a comma for a .csv file (EVAL_FORMAT=csv, or a table
// saved by pandas' to_csv), else a tab (VLMEvalKit's PRED_FORMAT=tsv), unless the header line has no
// tab and a comma (a CSV by another name).
func delimiter(data []byte, path string) rune {
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return ','
	}
	head, _, _ := bytes.Cut(data, []byte("\n"))
	if !bytes.ContainsRune(head, '\t') && bytes.ContainsRune(head, ',') {
		return ','
	}
	return '\t'
}

// readDelimited reads a CSV or TSV table: its header and rows. The table is rectangular: a row whose
// cell count is not the header's is an error naming its line and both counts (an unquoted separator
// in a cell, "A, or B", would otherwise shift every cell after it); a row of one blank cell is a
// blank line.
func readDelimited(data []byte, path string, comma rune) ([]string, [][]string, error) {
	kind := map[rune]string{',': "csv", '\t': "tsv"}[comma]
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comma = comma
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1 // checked here, to name both counts
	var all [][]string
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, record.Errorf(path, 0, "import", record.ErrSyntax, "%s: %v", kind, err)
		}
		line, _ := cr.FieldPos(0)
		if len(all) > 0 && len(row) != len(all[0]) && !(len(row) == 1 && strings.TrimSpace(row[0]) == "") {
			return nil, nil, record.Errorf(path, line, "import", record.ErrSyntax, "%s row has %d cells, the header %d: a table is rectangular (quote a cell that holds the separator)", kind, len(row), len(all[0]))
		}
		// Row i stays on line i+1 (errors name rows by it): a blank row stands for each line the
		// reader skipped (a blank line) or a cell spanned (a quoted line break).
		for len(all) > 0 && len(all)+1 < line {
			all = append(all, []string{""})
		}
		all = append(all, row)
	}
	if len(all) == 0 {
		return nil, nil, record.Errorf(path, 0, "import", record.ErrEmpty, "empty %s", kind)
	}
	return all[0], all[1:], nil
}

// readJSONTable accepts the shapes pandas and json.dump produce for a table: a list of row objects
// (orient=records), {column: {row: value}} (orient=columns, pandas' default), and {"columns", "data"}
// (orient=split).
func readJSONTable(data []byte, path string) ([]string, [][]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, record.Errorf(path, 0, "import", record.ErrSyntax, "json: %v", err)
	}
	t := &jsonTable{path: path, index: map[string]int{}}
	var err error
	switch x := v.(type) {
	case []any:
		err = t.records(x)
	case map[string]any:
		if cols, ok := x["columns"].([]any); ok {
			err = t.split(cols, x["data"])
		} else {
			err = t.columns(x)
		}
	default:
		err = record.Errorf(path, 0, "import", record.ErrFormat, "json is neither a list of rows nor a table object")
	}
	if err != nil {
		return nil, nil, err
	}
	for i := range t.rows {
		for len(t.rows[i]) < len(t.header) {
			t.rows[i] = append(t.rows[i], "")
		}
	}
	return t.header, t.rows, nil
}

// jsonTable builds a table from pandas' JSON orients: its columns in first-seen order and its rows.
type jsonTable struct {
	path   string
	index  map[string]int
	header []string
	rows   [][]string
}

func (t *jsonTable) col(name string) int {
	if i, ok := t.index[name]; ok {
		return i
	}
	t.index[name] = len(t.header)
	t.header = append(t.header, name)
	return len(t.header) - 1
}

// records reads orient=records: a list of row objects (columns in key order).
func (t *jsonTable) records(list []any) error {
	for i, e := range list {
		obj, ok := e.(map[string]any)
		if !ok {
			return record.Errorf(t.path, i+1, "import", record.ErrSyntax, "json row %d is not an object", i)
		}
		var row []string
		for _, k := range sortedKeys(obj) {
			j := t.col(k)
			for len(row) <= j {
				row = append(row, "")
			}
			row[j] = cellString(obj[k])
		}
		t.rows = append(t.rows, row)
	}
	return nil
}

// split reads orient=split: {"columns": [...], "data": [[...], ...]}.
func (t *jsonTable) split(cols []any, data any) error {
	for _, c := range cols {
		t.col(cellString(c))
	}
	rows, _ := data.([]any)
	for i, e := range rows {
		vals, ok := e.([]any)
		if !ok {
			return record.Errorf(t.path, i+1, "import", record.ErrSyntax, "json data row %d is not a list", i)
		}
		if len(vals) != len(t.header) {
			return record.Errorf(t.path, i+1, "import", record.ErrSyntax, "json data row %d has %d cells, the columns %d: a table is rectangular", i, len(vals), len(t.header))
		}
		row := make([]string, len(t.header))
		for j, val := range vals {
			if j < len(row) {
				row[j] = cellString(val)
			}
		}
		t.rows = append(t.rows, row)
	}
	return nil
}

// columns reads orient=columns: {col: {rowkey: value}}; rows ordered by numeric row key when possible.
func (t *jsonTable) columns(x map[string]any) error {
	rowKeys := map[string]bool{}
	for _, c := range sortedKeys(x) {
		m, ok := x[c].(map[string]any)
		if !ok {
			return record.Errorf(t.path, 0, "import", record.ErrFormat, "json column %q is not an object of rows", c)
		}
		t.col(c)
		for k := range m {
			rowKeys[k] = true
		}
	}
	keys := make([]string, 0, len(rowKeys))
	for k := range rowKeys {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		ia, ea := strconv.Atoi(keys[a])
		ib, eb := strconv.Atoi(keys[b])
		if ea == nil && eb == nil {
			return ia < ib
		}
		return keys[a] < keys[b]
	})
	for _, k := range keys {
		row := make([]string, len(t.header))
		for c, j := range t.index {
			row[j] = cellString(x[c].(map[string]any)[k])
		}
		t.rows = append(t.rows, row)
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// cellString renders a JSON cell; a list (candidates already decoded) becomes a Python-style literal.
func cellString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = strconv.Quote(scalarString(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return scalarString(v)
}

// vlmRows converts the table; line numbers in errors are 1-based data rows + 1 (the header is line 1).
func vlmRows(header []string, rows [][]string, path string, opt Options) (*Result, error) {
	t, err := newVLMTable(header, path, opt)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	res := &Result{}
	var scores []float64 // the score column as the rating reads it (NaN when empty)
	var ins []rescoreInput
	for ri, row := range rows {
		line := ri + 2
		if len(row) == 0 || (len(row) == 1 && strings.TrimSpace(row[0]) == "") {
			continue
		}
		idx := t.get(row, t.idColumn)
		if idx == "" {
			return nil, record.Errorf(path, line, "import", record.ErrInvalid, "row has no %s", t.idColumn)
		}
		if prev, ok := seen[idx]; ok {
			return nil, record.Errorf(path, line, "import", record.ErrDuplicate, "%s %q already on line %d", t.idColumn, idx, prev)
		}
		seen[idx] = line
		rec, in, sc, err := t.row(row, idx, line)
		if err != nil {
			return nil, err
		}
		if t.hasScore {
			scores = append(scores, sc)
		}
		if opt.Rescore != "" {
			ins = append(ins, in)
		}
		res.Records = append(res.Records, rec)
	}
	if len(res.Records) == 0 {
		return nil, record.Errorf(path, 0, "import", record.ErrEmpty, "no prediction rows")
	}
	t.rate(res, scores)
	if opt.Rescore != "" {
		if !t.hasScore && !t.mapped() {
			for i := range res.Records {
				if _, ok := ins[i].verdict(); !ok {
					return nil, record.Errorf(path, res.Records[i].Source.Line, "import", record.ErrInvalid, "index %q: no answer to score the prediction against", res.Records[i].ItemID)
				}
			}
		}
		res.Rescored = rescore(res.Records, ins, t.hasScore || t.mapped())
	}
	for i := range res.Records {
		if err := res.Records[i].Validate(); err != nil {
			return nil, err
		}
		if err := res.Records[i].CheckSize(); err != nil {
			return nil, err
		}
	}
	return res, res.emit(opt)
}

// vlmTable is a VLMEvalKit prediction table's columns and what the import does with them.
type vlmTable struct {
	ci                  map[string]int // column → first position
	path, dataset       string
	idColumn            string // the column naming items: index, or what --item-id names
	hasScore, hasAnswer bool
	opt                 Options
}

// newVLMTable checks the header: index and prediction, the columns the options name, and a score
// column unless the verdicts come from elsewhere.
func newVLMTable(header []string, path string, opt Options) (*vlmTable, error) {
	t := &vlmTable{ci: map[string]int{}, path: path, dataset: opt.Task, opt: opt}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := t.ci[h]; !dup {
			t.ci[h] = i
		}
	}
	colErr := func(format string, a ...any) error {
		return record.Errorf(path, 1, "import", record.ErrFormat, format, a...)
	}
	switch t.idColumn = opt.ItemKey; {
	case opt.byDoc():
		t.idColumn = "index"
	case opt.ItemKey == "question":
		t.idColumn = "question_id"
	}
	for _, need := range []string{t.idColumn, "prediction"} {
		if _, ok := t.ci[need]; !ok {
			return nil, colErr("no %q column (columns: %q)", need, header)
		}
	}
	_, t.hasScore = t.ci["score"]
	_, t.hasAnswer = t.ci["answer"]
	for _, c := range []string{opt.CorrectFrom, opt.PredField, opt.AnswerField} {
		if _, ok := t.ci[c]; c != "" && !ok {
			return nil, colErr("no %q column (columns: %q)", c, header)
		}
	}
	switch {
	case opt.CorrectFrom != "" || opt.PredField != "":
	case opt.OpenEnded || opt.Rescore != "":
		if !t.hasAnswer {
			return nil, colErr("no \"answer\" column to score the predictions against")
		}
	case !t.hasScore:
		return nil, colErr("no \"score\" column: this is a prediction file, not the _score file VLMEvalKit's evaluation writes beside it ({model}_{dataset}_score.xlsx); import that file, or pass --rescore text to score the predictions here by option letter or text")
	}
	if t.dataset == "" {
		t.dataset = vlmDataset(path, opt.Model)
	}
	return t, nil
}

// mapped reports whether flags, not VLMEvalKit's score column, give the verdicts.
func (t *vlmTable) mapped() bool {
	return t.opt.CorrectFrom != "" || t.opt.PredField != "" || t.opt.OpenEnded
}

// get is the first non-empty cell of the named columns.
func (t *vlmTable) get(row []string, names ...string) string {
	for _, n := range names {
		if i, ok := t.ci[n]; ok && i < len(row) && strings.TrimSpace(row[i]) != "" {
			return strings.TrimSpace(row[i])
		}
	}
	return ""
}

// row is one prediction row's record, its rescore input, and its score cell as the rating reads it
// (NaN when empty; only with a score column).
func (t *vlmTable) row(row []string, idx string, line int) (record.Record, rescoreInput, float64, error) {
	rowErr := func(format string, a ...any) error {
		return record.Errorf(t.path, line, "import", record.ErrInvalid, "index %q: %s", idx, fmt.Sprintf(format, a...))
	}
	rec := newRecord(t.opt, idx)
	rec.Task = t.dataset
	rec.QuestionID = t.get(row, "question_id")
	rec.Category = t.get(row, "task_type", "category", "sub_category", "domain")
	dur, err := t.opt.Durations.group(t.get(row, "duration")) // MLVU's table gives seconds
	if err != nil {
		return rec, rescoreInput{}, 0, rowErr("%v", err)
	}
	rec.Duration = dur
	rec.Prediction = t.get(row, "prediction")
	rec.Answer = t.get(row, "answer")
	var cands []string
	if c := t.get(row, "candidates"); c != "" {
		if cands, err = pyval.ParseList(c); err != nil {
			return rec, rescoreInput{}, 0, rowErr("candidates: %v", err)
		}
	}
	sc := math.NaN()
	if c := t.get(row, "score"); t.hasScore && c != "" {
		v, ok := pyval.Float(c)
		if !ok {
			return rec, rescoreInput{}, 0, rowErr("score %q is not a number", c)
		}
		sc = v
	}
	if err := t.verdict(&rec, row, sc, rowErr); err != nil {
		return rec, rescoreInput{}, 0, err
	}
	in := rescoreInput{response: rec.Prediction, gold: rec.Answer, cands: cands}
	if l := choice(rec.Answer, cands); l != "" {
		rec.Answer = l
	}
	if l := choice(rec.Prediction, cands); l != "" && !t.opt.OpenEnded {
		rec.Prediction = l
	}
	rec.Source = record.Source{Path: t.path, Line: line}
	return rec, in, sc, nil
}

// verdict sets rec's correct or score: from the column --correct-from names, by exact match of
// --pred-field and --answer-field, by Token-F1 (--open-ended), or from VLMEvalKit's score (sc).
func (t *vlmTable) verdict(rec *record.Record, row []string, sc float64, rowErr func(string, ...any) error) error {
	opt := t.opt
	switch {
	case opt.CorrectFrom != "":
		c := t.get(row, opt.CorrectFrom)
		if opt.OpenEnded {
			v, ok := pyval.Float(c)
			if !ok || !(v >= 0 && v <= 1) {
				return rowErr("%s %q is not a score in [0,1]", opt.CorrectFrom, c)
			}
			rec.Score = &v
			return nil
		}
		ok, isV := cellVerdict(c)
		if !isV {
			return rowErr("%s %q is not a verdict (true/false or 1/0)", opt.CorrectFrom, c)
		}
		rec.Correct = &ok
	case opt.PredField != "":
		p, a := t.get(row, opt.PredField), t.get(row, opt.AnswerField)
		if a == "" {
			return rowErr("%s is empty: nothing to match %s against", opt.AnswerField, opt.PredField)
		}
		ok := p == a
		rec.Correct = &ok
	case opt.OpenEnded:
		f1 := score.TokenF1(rec.Prediction, rec.Answer)
		rec.Score = &f1
	case t.hasScore:
		switch {
		case sc == 1:
			rec.Correct = boolPtr(true)
		case sc == 0:
			rec.Correct = boolPtr(false)
		case sc < 0 || math.IsNaN(sc):
			rec.Correct = boolPtr(false) // -1 or empty: VLMEvalKit found no verdict (no option in the reply)
			rec.Unparsed = true
		default:
			return rowErr("score %v is not 1, 0 or -1: not a multiple-choice verdict (an open-ended score needs --open-ended --correct-from score)", sc)
		}
	}
	return nil
}

// rate reproduces VLMEvalKit's rating of the dataset from the score column, when the verdicts are
// VLMEvalKit's and a rule is known; else it notes why not.
func (t *vlmTable) rate(res *Result, scores []float64) {
	switch {
	case t.mapped():
		res.Notes = append(res.Notes, "verdicts mapped by flags: VLMEvalKit's rating is not reproduced")
	case !t.hasScore:
		res.Notes = append(res.Notes, "no score column: every verdict is this importer's (--rescore text), not VLMEvalKit's, and its rating is not reproduced")
	default:
		rule := vlmRuleFor(t.dataset)
		if rule == nil {
			res.Notes = append(res.Notes, fmt.Sprintf("no rating rule for VLMEvalKit dataset %q here: the verdicts are its score column, its rating is not reproduced", t.dataset))
			return
		}
		a, skip, note := rule.agg(scores)
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
		if a != nil {
			a.Harness, a.Task, a.Source = "VLMEvalKit", t.dataset, rule.source
			res.Aggregate = a
			a.stamp(res.Records, skip)
		}
	}
}

// cellVerdict reads a table cell as a verdict: true/false (any case) or a number equal to 1 or 0.
func cellVerdict(c string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(c)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	v, ok := pyval.Float(c)
	switch {
	case ok && v == 1:
		return true, true
	case ok && v == 0:
		return false, true
	}
	return false, false
}

// vlmRule recomputes a dataset's rating from the score column.
type vlmRule struct {
	source string
	agg    func(scores []float64) (a *Aggregate, skip []bool, note string)
}

// The dataset is matched without case, '-' or '_', so a task named as lmms-eval names it
// (`import vlmevalkit --task videomme`, to pair with lmms-eval's records: an item is its task and its id)
// keeps VLMEvalKit's rating rule.
func vlmRuleFor(dataset string) *vlmRule {
	d := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(dataset))
	switch {
	case strings.HasPrefix(d, "videomme"):
		return &vlmRule{source: "vlmeval/dataset/utils/videomme.py (get_dimension_rating)", agg: videoMMERating}
	case strings.HasPrefix(d, "mvbench"):
		return &vlmRule{source: "vlmeval/dataset/mvbench.py (get_dimension_rating)", agg: mvbenchRating}
	}
	return nil
}

// videoMMERating is get_dimension_rating's overall/overall: np.mean of the scores that are ≥ 0 (a -1
// or a missing score, NaN, is left out), as a fraction (the json holds it formatted "%.2f").
func videoMMERating(scores []float64) (*Aggregate, []bool, string) {
	skip := make([]bool, len(scores))
	sum, n := 0.0, 0
	for i, s := range scores {
		if !(s >= 0) {
			skip[i] = true
			continue
		}
		sum += s
		n++
	}
	left := len(scores) - n
	note := ""
	if left > 0 {
		note = fmt.Sprintf("VLMEvalKit's Video-MME rating leaves out %d of %d rows whose score is below 0 or missing; the audit counts them wrong item by item and leaves them out of the harness number, as the rating does", left, len(scores))
	}
	if n == 0 {
		return nil, skip, "every row's score is below 0 or missing: VLMEvalKit's rating is nan"
	}
	return &Aggregate{Metric: "overall", Label: "mean score over rows with score ≥ 0", Kind: record.HarnessMicro,
		Raw: sum / float64(n), Scale: 100, Counted: n, LeftOut: left}, skip, note
}

// mvbenchRating is MVBench's get_dimension_rating overall: [hits, total, "xx.xx%"], where a row is a
// hit when `if item['score']` is true — any non-zero score, so a -1 (failed answer) or a missing score
// (NaN) counts as a hit there, while the item-level verdict counts it wrong.
func mvbenchRating(scores []float64) (*Aggregate, []bool, string) {
	hits, odd := 0, 0
	for _, s := range scores {
		if s != 0 {
			hits++
			if s != 1 {
				odd++
			}
		}
	}
	note := ""
	if odd > 0 {
		note = fmt.Sprintf("VLMEvalKit's MVBench rating counts %d rows whose score is -1 or missing as hits (`if item['score']`); their item-level verdicts are wrong", odd)
	}
	a := &Aggregate{Metric: "overall", Label: "hits/total, a hit being any non-zero score", Kind: record.HarnessOther,
		Raw: float64(hits) / float64(len(scores)) * 100, Scale: 1, Counted: len(scores)}
	return a, make([]bool, len(scores)), note
}

// vlmStem is the file name without extension and VLMEvalKit's _score suffix.
func vlmStem(path string) string {
	base := filepath.Base(path)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	return strings.TrimSuffix(stem, "_score")
}

// vlmDataset finds the dataset, the records' split, in `{model}_{dataset}[_score].xlsx`: from a known
// dataset name on (Video-MME, MVBench), else the stem without the model's name when it is given;
// without the frame budget, which is the config (Video-MME_16frame and Video-MME_64frame are one
// split, Video-MME; Video-MME_64frame_subs is Video-MME_subs).
func vlmDataset(path, model string) string {
	stem := vlmStem(path)
	known := false
	for _, d := range []string{"Video-MME", "MVBench"} {
		if i := strings.Index(stem, d); i >= 0 {
			stem, known = stem[i:], true
			break
		}
	}
	if !known && model != "" {
		stem = strings.TrimPrefix(stem, model+"_")
	}
	if m := budgetPart.FindStringSubmatchIndex(stem); m != nil {
		stem = stem[:m[0]] + stem[m[4]:] // keep the "_" (or end) after the budget
	}
	return stem
}

// budgetPart is a VLMEvalKit dataset config's budget: `_16frame`, `_1fps`, `_0.5fps`, followed by
// another part or the end.
var budgetPart = regexp.MustCompile(`_(\d+frame|\d+(?:\.\d+)?fps)(_|$)`)

// VLMEvalKitBudget is the budget part of a VLMEvalKit file name (`16frame`, `1fps`), the config id an
// import takes when none is given; ok is false when the name has none.
func VLMEvalKitBudget(path string) (string, bool) {
	m := budgetPart.FindStringSubmatch(vlmStem(path))
	if m == nil {
		return "", false
	}
	return m[1], true
}

var frameSuffix = regexp.MustCompile(`_(\d+)frame(?:_nopack)?(?:_subs|_nosubs)?$`)

// VLMEvalKitFrames reads the frame budget from a VLMEvalKit file name: the 2024 form
// `{model}_{dataset}_{N}frame[_nopack][_subs|_nosubs].xlsx` and the 2025+ `{model}_Video-MME_{N}frame.xlsx`
// (dataset configs of vlmeval/dataset/video_dataset_config.py), with or without `_score`.
func VLMEvalKitFrames(path string) (int, bool) {
	m := frameSuffix.FindStringSubmatch(vlmStem(path))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n <= 0 || n > 1<<20 {
		return 0, false
	}
	return n, true
}
