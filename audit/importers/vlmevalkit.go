package importers

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/xuri/excelize/v2"
)

// VLMEvalKit imports a prediction (or _score) file: the dataset table plus a `prediction` column, as xlsx
// (the default), tsv, or json (PRED_FORMAT). The format is chosen by content (xlsx is a zip, json starts
// with [ or {) and otherwise by extension. Correctness is the `score` column when the file has one (a
// _score file: 1 correct, 0 wrong, -1 unparseable counts as wrong), else the prediction's option letter
// against the answer's, with `candidates` (a Python list literal, parsed as data) mapping option texts to letters.
func VLMEvalKit(r io.Reader, path string, opt Options) ([]audit.Record, error) {
	if err := opt.check(path); err != nil {
		return nil, err
	}
	if opt.ItemKey == "question" {
		return nil, audit.Errorf(path, 0, "import", audit.ErrBadArgs, "VLMEvalKit files key items by their index column")
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
		header, rows, err = readJSONTable(trim, path)
	case strings.EqualFold(filepath.Ext(path), ".xlsx"):
		err = audit.Errorf(path, 0, "import", audit.ErrFormat, "not an xlsx file (no zip signature)")
	default:
		header, rows, err = readTSV(data, path)
	}
	if err != nil {
		return nil, err
	}
	return vlmRows(header, rows, path, opt)
}

func readXLSX(data []byte, path string) ([]string, [][]string, error) {
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{UnzipSizeLimit: 1 << 30, UnzipXMLSizeLimit: 64 << 20})
	if err != nil {
		return nil, nil, audit.Errorf(path, 0, "import", audit.ErrFormat, "xlsx: %v", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, nil, audit.Errorf(path, 0, "import", audit.ErrEmpty, "xlsx has no sheet")
	}
	rows, err := f.GetRows(sheets[0])
	if err != nil {
		return nil, nil, audit.Errorf(path, 0, "import", audit.ErrFormat, "xlsx sheet %q: %v", sheets[0], err)
	}
	if len(rows) == 0 {
		return nil, nil, audit.Errorf(path, 0, "import", audit.ErrEmpty, "xlsx sheet %q is empty", sheets[0])
	}
	return rows[0], rows[1:], nil
}

func readTSV(data []byte, path string) ([]string, [][]string, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comma = '\t'
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	all, err := cr.ReadAll()
	if err != nil {
		return nil, nil, audit.Errorf(path, 0, "import", audit.ErrSyntax, "tsv: %v", err)
	}
	if len(all) == 0 {
		return nil, nil, audit.Errorf(path, 0, "import", audit.ErrEmpty, "empty tsv")
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
		return nil, nil, audit.Errorf(path, 0, "import", audit.ErrSyntax, "json: %v", err)
	}
	colIndex := map[string]int{}
	var header []string
	col := func(name string) int {
		if i, ok := colIndex[name]; ok {
			return i
		}
		colIndex[name] = len(header)
		header = append(header, name)
		return len(header) - 1
	}
	var rows [][]string
	set := func(row []string, name string, val any) []string {
		i := col(name)
		for len(row) <= i {
			row = append(row, "")
		}
		row[i] = cellString(val)
		return row
	}
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			obj, ok := e.(map[string]any)
			if !ok {
				return nil, nil, audit.Errorf(path, i+1, "import", audit.ErrSyntax, "json row %d is not an object", i)
			}
			var row []string
			for _, k := range sortedKeys(obj) {
				row = set(row, k, obj[k])
			}
			rows = append(rows, row)
		}
	case map[string]any:
		if cols, ok := x["columns"].([]any); ok {
			data, _ := x["data"].([]any)
			for _, c := range cols {
				col(cellString(c))
			}
			for i, e := range data {
				vals, ok := e.([]any)
				if !ok {
					return nil, nil, audit.Errorf(path, i+1, "import", audit.ErrSyntax, "json data row %d is not a list", i)
				}
				row := make([]string, len(header))
				for j, val := range vals {
					if j < len(row) {
						row[j] = cellString(val)
					}
				}
				rows = append(rows, row)
			}
			break
		}
		// orient=columns: {col: {rowkey: value}}; rows ordered by numeric row key when possible.
		rowKeys := map[string]bool{}
		for _, c := range sortedKeys(x) {
			m, ok := x[c].(map[string]any)
			if !ok {
				return nil, nil, audit.Errorf(path, 0, "import", audit.ErrFormat, "json column %q is not an object of rows", c)
			}
			col(c)
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
			row := make([]string, len(header))
			for c, j := range colIndex {
				row[j] = cellString(x[c].(map[string]any)[k])
			}
			rows = append(rows, row)
		}
	default:
		return nil, nil, audit.Errorf(path, 0, "import", audit.ErrFormat, "json is neither a list of rows nor a table object")
	}
	for i := range rows {
		for len(rows[i]) < len(header) {
			rows[i] = append(rows[i], "")
		}
	}
	return header, rows, nil
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
func vlmRows(header []string, rows [][]string, path string, opt Options) ([]audit.Record, error) {
	ci := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := ci[h]; !dup {
			ci[h] = i
		}
	}
	for _, need := range []string{"index", "prediction"} {
		if _, ok := ci[need]; !ok {
			return nil, audit.Errorf(path, 1, "import", audit.ErrFormat, "no %q column (columns: %q)", need, header)
		}
	}
	_, hasScore := ci["score"]
	if _, ok := ci["answer"]; !ok && !hasScore {
		return nil, audit.Errorf(path, 1, "import", audit.ErrFormat, "neither an \"answer\" nor a \"score\" column")
	}
	get := func(row []string, names ...string) string {
		for _, n := range names {
			if i, ok := ci[n]; ok && i < len(row) && strings.TrimSpace(row[i]) != "" {
				return strings.TrimSpace(row[i])
			}
		}
		return ""
	}
	seen := map[string]int{}
	var out []audit.Record
	for ri, row := range rows {
		line := ri + 2
		if len(row) == 0 || (len(row) == 1 && strings.TrimSpace(row[0]) == "") {
			continue
		}
		idx := get(row, "index")
		if idx == "" {
			return nil, audit.Errorf(path, line, "import", audit.ErrInvalid, "row has no index")
		}
		if prev, ok := seen[idx]; ok {
			return nil, audit.Errorf(path, line, "import", audit.ErrDuplicate, "index %q already on line %d", idx, prev)
		}
		seen[idx] = line
		rec := newRecord(opt, idx)
		rec.QuestionID = get(row, "question_id")
		rec.Category = get(row, "task_type", "category", "sub_category", "domain")
		rec.Duration = get(row, "duration")
		rec.Prediction = get(row, "prediction")
		rec.Answer = get(row, "answer")
		var cands []string
		if c := get(row, "candidates"); c != "" {
			var err error
			if cands, err = ParsePyList(c); err != nil {
				return nil, audit.Errorf(path, line, "import", audit.ErrInvalid, "candidates: %v", err)
			}
		}
		switch {
		case opt.OpenEnded:
			sc := audit.TokenF1(rec.Prediction, rec.Answer)
			rec.Score = &sc
		case hasScore && get(row, "score") != "":
			v, err := strconv.ParseFloat(get(row, "score"), 64)
			if err != nil {
				return nil, audit.Errorf(path, line, "import", audit.ErrInvalid, "score %q is not a number", get(row, "score"))
			}
			ok := v > 0
			rec.Correct = &ok
		default:
			if rec.Answer == "" {
				return nil, audit.Errorf(path, line, "import", audit.ErrInvalid, "index %q: no answer to compare with", idx)
			}
			ok := sameAnswer(rec.Prediction, rec.Answer, cands)
			rec.Correct = &ok
		}
		if l := choice(rec.Answer, cands); l != "" {
			rec.Answer = l
		}
		if l := choice(rec.Prediction, cands); l != "" && !opt.OpenEnded {
			rec.Prediction = l
		}
		rec.Source = audit.Source{Path: path, Line: line}
		if err := rec.Validate(); err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if len(out) == 0 {
		return nil, audit.Errorf(path, 0, "import", audit.ErrEmpty, "no prediction rows")
	}
	return out, nil
}
