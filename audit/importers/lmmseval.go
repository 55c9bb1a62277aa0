package importers

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit"
)

// Per-item metric payloads of the target tasks (ECOSYSTEM.md A1.1). MLVU's key carries upstream's typo.
var knownPayloads = []string{"videomme_perception_score", "mlvu_percetion_score", "mlvu_perception_score"}

// LmmsEval imports one lmms-eval log file: a legacy `<task>.json` holding {"logs": [...]}, or a
// `*_samples_<task>.jsonl` in the nested (v0.3–v0.6) or flattened (v0.7) form. path names the file in
// errors and gives the task name when opt.Task is empty.
func LmmsEval(r io.Reader, path string, opt Options) ([]audit.Record, error) {
	if err := opt.check(path); err != nil {
		return nil, err
	}
	data, err := readAll(r, path)
	if err != nil {
		return nil, err
	}
	task := opt.Task
	base := filepath.Base(path)
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, audit.Errorf(path, 0, "import", audit.ErrEmpty, "empty file")
	}
	// Legacy: one JSON object with "logs" (the whole file is one value).
	if trimmed[0] == '{' {
		var legacy struct {
			Logs         []json.RawMessage `json:"logs"`
			ModelConfigs struct {
				Task any `json:"task"`
			} `json:"model_configs"`
		}
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if err := dec.Decode(&legacy); err == nil && !dec.More() && legacy.Logs != nil {
			if task == "" {
				task = scalarString(legacy.ModelConfigs.Task)
			}
			if task == "" {
				task = strings.TrimSuffix(base, filepath.Ext(base))
			}
			var out []audit.Record
			seen := map[string]int{}
			for i, raw := range legacy.Logs {
				rec, err := lmmsSample(raw, path, i+1, task, opt, seen)
				if err != nil {
					return nil, err
				}
				out = append(out, rec)
			}
			if len(out) == 0 {
				return nil, audit.Errorf(path, 0, "import", audit.ErrEmpty, "\"logs\" is empty")
			}
			return out, nil
		}
	}
	if task == "" {
		stem := strings.TrimSuffix(base, filepath.Ext(base))
		if i := strings.Index(stem, "_samples_"); i >= 0 {
			task = stem[i+len("_samples_"):]
		} else {
			task = stem
		}
	}
	var out []audit.Record
	seen := map[string]int{}
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec, err := lmmsSample(line, path, n+1, task, opt, seen)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if len(out) == 0 {
		return nil, audit.Errorf(path, 0, "import", audit.ErrEmpty, "no samples")
	}
	return out, nil
}

// lmmsSample converts one sample object; line is the JSONL line (or the 1-based index in "logs").
func lmmsSample(raw []byte, path string, line int, task string, opt Options, seen map[string]int) (audit.Record, error) {
	var s map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return audit.Record{}, fmtErr(path, line, "not a JSON object: %v", err)
	}
	if dec.More() {
		return audit.Record{}, fmtErr(path, line, "more than one JSON value")
	}
	if s == nil {
		return audit.Record{}, fmtErr(path, line, "sample is null")
	}
	docID := scalarString(s["doc_id"])
	if docID == "" {
		return audit.Record{}, audit.Errorf(path, line, "import", audit.ErrInvalid, "sample has no doc_id")
	}
	if prev, ok := seen[docID]; ok {
		return audit.Record{}, audit.Errorf(path, line, "import", audit.ErrDuplicate, "doc_id %q already at %d", docID, prev)
	}
	seen[docID] = line
	doc, _ := s["doc"].(map[string]any)
	payload := findPayload(s)
	get := func(keys ...string) string {
		for _, src := range []map[string]any{payload, doc} {
			for _, k := range keys {
				if v := scalarString(src[k]); v != "" {
					return v
				}
			}
		}
		return ""
	}
	// Responses: filtered_resps, else resps; string | list | list of lists.
	resp, haveResp := firstString(s["filtered_resps"])
	if !haveResp {
		resp, haveResp = firstString(s["resps"])
	}
	var targets []string
	if t, ok := s["target"]; ok {
		targets = stringsOf(t)
	}
	item := task + ":" + docID
	if opt.ItemKey == "question" {
		q := get("question_id")
		if q == "" {
			return audit.Record{}, audit.Errorf(path, line, "import", audit.ErrInvalid, "doc_id %q: no question_id for --item-id question", docID)
		}
		item = q
	}
	rec := newRecord(opt, item)
	rec.Task = task
	rec.DocHash = scalarString(s["doc_hash"])
	rec.QuestionID = get("question_id")
	rec.Category = get("task_category", "task_type", "category", "sub_category")
	rec.Duration = get("duration")
	var candidates []string
	if doc != nil {
		if c, ok := doc["candidates"].([]any); ok {
			candidates = stringsOf(c)
		} else if c, ok := doc["options"].([]any); ok {
			candidates = stringsOf(c)
		}
	}
	switch {
	case opt.OpenEnded:
		if !haveResp {
			return audit.Record{}, audit.Errorf(path, line, "import", audit.ErrInvalid, "doc_id %q: no response to score", docID)
		}
		if len(targets) == 0 {
			if a := get("answer"); a != "" {
				targets = []string{a}
			}
		}
		sc := audit.TokenF1(resp, targets...)
		rec.Score, rec.Prediction = &sc, resp
		if len(targets) > 0 {
			rec.Answer = targets[0]
		}
	case payload != nil:
		pred, gold := scalarString(payload["pred_answer"]), scalarString(payload["answer"])
		ok := sameAnswer(pred, gold, candidates)
		rec.Correct, rec.Prediction, rec.Answer = &ok, pred, gold
	default:
		if !haveResp || len(targets) == 0 {
			return audit.Record{}, audit.Errorf(path, line, "import", audit.ErrInvalid,
				"doc_id %q: no per-item metric payload and no response/target pair for exact match", docID)
		}
		ok := sameAnswer(resp, targets[0], candidates)
		rec.Correct, rec.Prediction, rec.Answer = &ok, resp, targets[0]
	}
	rec.Source = audit.Source{Path: path, Line: line}
	if err := rec.Validate(); err != nil {
		return audit.Record{}, err
	}
	return rec, nil
}

// findPayload returns the task's per-item metric dict: a known key, else the first (sorted) dict-valued
// key holding both pred_answer and answer.
func findPayload(s map[string]any) map[string]any {
	for _, k := range knownPayloads {
		if m, ok := s[k].(map[string]any); ok {
			return m
		}
	}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "doc" {
			continue
		}
		if m, ok := s[k].(map[string]any); ok {
			_, p := m["pred_answer"]
			_, a := m["answer"]
			if p && a {
				return m
			}
		}
	}
	return nil
}
