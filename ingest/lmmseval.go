package ingest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/framesweep/framesweep/ingest/pyval"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/score"
)

// LmmsEval imports one lmms-eval log file: a legacy `<task>.json` holding {"logs": [...]}, or a
// `*_samples_<task>.jsonl` in the nested (v0.3–v0.6) or flattened (v0.7) form. path names the file in
// errors and gives the task name when opt.Task is empty.
//
// Each sample's verdict is the harness's own, read from the payload its task's process_results wrote
// (lmmstasks.go); the file's aggregate is recomputed with the task's aggregation and stamped on every
// record. A sample whose payload the importer does not know is an error naming its keys, unless
// opt.CorrectFrom, opt.PredField/AnswerField, opt.OpenEnded or opt.Rescore says how to score it.
func LmmsEval(r io.Reader, path string, opt Options) (*Result, error) {
	if err := opt.check(path); err != nil {
		return nil, err
	}
	if opt.Meta != nil { // one config_meta, shared by every record (records treat it as read-only)
		m := *opt.Meta
		opt.Meta = &m
	}
	b := &lmmsBuild{path: path, opt: opt, seen: map[string]int{}, strs: map[string]string{}}
	rs, twice := r.(io.ReadSeeker)
	var start int64
	if twice {
		var err error
		if start, err = rs.Seek(0, io.SeekCurrent); err != nil {
			twice = false
		}
	}
	if n := lineHint(r); n > 0 {
		b.items = make([]lmmsKept, 0, n)
		if !twice || opt.Emit == nil {
			b.recs = make([]record.Record, 0, n)
		}
	}
	br := bufio.NewReaderSize(r, 1<<20)
	if !samplesFile(br) {
		return b.whole(br)
	}
	// JSON lines, one sample each: read one at a time, so memory holds the records, not the file.
	b.task = samplesTask(path, opt.Task)
	if twice && opt.Emit != nil {
		return b.twoPasses(rs, start, br)
	}
	if err := b.stream(br); err != nil {
		return nil, err
	}
	return b.finish()
}

// whole reads a file that is not JSON lines of samples (a legacy <task>.json holding "logs") whole.
func (b *lmmsBuild) whole(br *bufio.Reader) (*Result, error) {
	data, err := readAll(br, b.path)
	if err != nil {
		return nil, err
	}
	if err := textOK(data, b.path, true); err != nil {
		return nil, err
	}
	raws, lines, task, err := lmmsSamples(data, b.path, b.opt.Task)
	if err != nil {
		return nil, err
	}
	b.task = task
	for i, raw := range raws {
		if err := b.sample(raw, lines[i]); err != nil {
			return nil, err
		}
	}
	return b.finish()
}

// twoPasses reads a samples file twice (Options.Emit): the first pass converts and checks every
// sample, keeping what the aggregate reads; the second converts them again and emits each record
// with the aggregate stamped. The two passes must read the same bytes.
func (b *lmmsBuild) twoPasses(rs io.ReadSeeker, start int64, br *bufio.Reader) (*Result, error) {
	b.pass, b.sum = passVerdicts, sha256.New()
	if err := b.stream(br); err != nil {
		return nil, err
	}
	res, err := b.finish()
	if err != nil {
		return nil, err
	}
	first := b.sum.Sum(nil)
	if _, err := rs.Seek(start, io.SeekStart); err != nil {
		return nil, &record.Error{Path: b.path, Op: "read", Err: err}
	}
	br.Reset(rs)
	b.pass, b.sum, b.seen = passRecords, sha256.New(), nil
	if res.Rescored != nil {
		b.counts = &RescoreCount{}
	}
	if err := b.stream(br); err != nil {
		return nil, err
	}
	if b.next != len(b.items) || !bytes.Equal(first, b.sum.Sum(nil)) {
		return nil, record.Errorf(b.path, 0, "read", record.ErrFormat, "the file changed while it was read (%d samples, then %d): the records emitted are not the file's", len(b.items), b.next)
	}
	res.Imported, res.Rescored, res.task, res.hits = b.next, b.counts, b.task, b.hits
	return res, nil
}

// samplesFile reports whether br holds a samples file of JSON lines (its first line one JSON object
// with a doc_id), which is read a sample at a time; a legacy <task>.json (one object holding "logs")
// or anything else is read whole.
func samplesFile(br *bufio.Reader) bool {
	head, _ := br.Peek(br.Size())
	head = record.TrimBOM(head)
	i := bytes.IndexByte(head, '\n')
	if i < 0 {
		return false
	}
	var first struct {
		DocID json.RawMessage `json:"doc_id"`
		Logs  json.RawMessage `json:"logs"`
	}
	return json.Unmarshal(head[:i], &first) == nil && first.DocID != nil && first.Logs == nil
}

// stream reads a samples file line by line (record.ReadLine): each line checked (record.CheckLine:
// UTF-8, no lone surrogate, no key twice) and converted; blank lines are skipped, a line over
// record.MaxLineBytes or one that does not convert is an error naming it, and a last line without its
// newline is read as the others (harness logs are written whole; a cut one does not decode).
func (b *lmmsBuild) stream(br *bufio.Reader) error {
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	for line := 1; ; line++ {
		raw, err := record.ReadLine(br, record.MaxLineBytes)
		if errors.Is(err, record.ErrTooLong) {
			return record.Errorf(b.path, line, "read", record.ErrTooLong, "over %d bytes", record.MaxLineBytes)
		}
		if err != nil && err != io.EOF {
			return &record.Error{Path: b.path, Line: line, Op: "read", Err: err}
		}
		if b.sum != nil {
			b.sum.Write(raw)
		}
		if t := bytes.TrimSpace(raw); len(t) > 0 {
			if cerr := record.CheckLine(t); cerr != nil {
				return &record.Error{Path: b.path, Line: line, Op: "read", Err: cerr}
			}
			if serr := b.sample(t, line); serr != nil {
				return serr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// samplesTask is the task of a samples file: opt.Task, else the file name's part after "_samples_".
func samplesTask(path, task string) string {
	if task != "" {
		return task
	}
	base := filepath.Base(path)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	if i := strings.Index(stem, "_samples_"); i >= 0 {
		return stem[i+len("_samples_"):]
	}
	return stem
}

// lmmsSamples splits a file into its samples (raw JSON) with their line numbers (legacy: the 1-based
// index in "logs") and finds the task name.
func lmmsSamples(data []byte, path, task string) ([][]byte, []int, string, error) {
	base := filepath.Base(path)
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil, "", record.Errorf(path, 0, "import", record.ErrEmpty, "empty file")
	}
	// Legacy: one JSON object with "logs" (the whole file is one value, and not itself a sample).
	if trimmed[0] == '{' {
		raws, lines, legacyTask, isLegacy, err := lmmsLegacy(data, path)
		if err != nil {
			return nil, nil, "", err
		}
		if isLegacy {
			if task == "" {
				task = legacyTask
			}
			if task == "" {
				task = strings.TrimSuffix(base, filepath.Ext(base))
			}
			if len(raws) == 0 {
				return nil, nil, "", record.Errorf(path, 0, "import", record.ErrEmpty, "\"logs\" is empty")
			}
			return raws, lines, task, nil
		}
	}
	task = samplesTask(path, task)
	var raws [][]byte
	var lines []int
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		raws = append(raws, line)
		lines = append(lines, n+1)
	}
	return raws, lines, task, nil
}

// lmmsLegacy reads a ≤v0.2 <task>.json: one object whose "logs" is the list of samples. It returns each
// sample with the file line it starts on, and model_configs.task. isLegacy is false when data is not one
// JSON object with a "logs" key and no "doc_id" (then it is a samples file of one line); a "logs" that is
// not a list is an error that says so, not a sample without a doc_id.
func lmmsLegacy(data []byte, path string) (raws [][]byte, lines []int, task string, isLegacy bool, err error) {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if dec.Decode(&top) != nil || dec.More() {
		return nil, nil, "", false, nil
	}
	logs, ok := top["logs"]
	if _, isSample := top["doc_id"]; !ok || isSample {
		return nil, nil, "", false, nil
	}
	var mc struct {
		Task any `json:"task"`
	}
	_ = json.Unmarshal(top["model_configs"], &mc)
	// Walk the file's tokens to the "logs" list so that each sample is named by the line it starts on.
	dec = json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return nil, nil, "", true, fmtErr(path, 0, "%v", err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, nil, "", true, fmtErr(path, 0, "%v", err)
		}
		if key != "logs" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, nil, "", true, fmtErr(path, 0, "%v", err)
			}
			continue
		}
		if k := jsonKind(logs); k != "list" {
			at := int(dec.InputOffset())
			at += bytes.IndexFunc(data[at:], func(r rune) bool { return !unicode.IsSpace(r) && r != ':' })
			return nil, nil, "", true, fmtErr(path, lineAt(data, at), "\"logs\" is %s, want the list of samples (lmms-eval ≤ 0.2 <task>.json)", withArticle(k))
		}
		if _, err := dec.Token(); err != nil { // [
			return nil, nil, "", true, fmtErr(path, 0, "%v", err)
		}
		for dec.More() {
			at := dec.InputOffset() // after the previous token: the sample starts past spaces and a comma
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, nil, "", true, fmtErr(path, lineAt(data, int(at)), "%v", err)
			}
			start := int(at) + bytes.IndexFunc(data[at:], func(r rune) bool { return !unicode.IsSpace(r) && r != ',' })
			raws, lines = append(raws, raw), append(lines, lineAt(data, start))
		}
		break // a second "logs" key: encoding/json keeps the last, the list read here is the first
	}
	return raws, lines, scalarString(mc.Task), true, nil
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int) int {
	if off < 0 || off > len(data) {
		return 0
	}
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// jsonKind names the kind of one JSON value by its first byte.
func jsonKind(raw []byte) string {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "object"
	case '[':
		return "list"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func withArticle(kind string) string {
	switch kind {
	case "object":
		return "an object"
	case "null", "nothing":
		return kind
	}
	return "a " + kind
}

// lmmsBuild accumulates the records of one file.
type lmmsBuild struct {
	path, task string
	opt        Options
	seen       map[string]int
	known      *lmmsTask // the task payload of the file's samples
	knownLine  int
	bareLine   int // the first sample without a payload the importer knows
	recs       []record.Record
	items      []lmmsKept
	rescore    []rescoreInput
	strs       map[string]string // one copy of each repeated string of the records
	// noTarget is the first sample a rescore has no gold answer for (line, item): an error when no
	// harness verdict is there instead.
	noTarget     int
	noTargetItem string
	// Reading twice (twoPasses): the pass, the digest of what it read, and in the second pass the
	// next sample's index, the aggregate's stamps, the rescore's counts.
	pass     int
	sum      hash.Hash
	next     int
	stamps   *[2]*record.Harness
	harnessV bool // the records carry the harness's verdicts (a rescore counts changes)
	counts   *RescoreCount
	hits     float64 // the verdicts emitted (Result.hits)
}

// Passes of lmmsBuild: one (records held), or two (twoPasses).
const (
	passHold = iota
	passVerdicts
	passRecords
)

// str is s, shared with the records that repeat it (a file of a million samples repeats its
// categories, durations, answers and predictions).
func (b *lmmsBuild) str(s string) string {
	if t, ok := b.strs[s]; ok {
		return t
	}
	if len(b.strs) < 1<<16 {
		b.strs[s] = s
	}
	return s
}

func (b *lmmsBuild) errf(line int, sentinel error, format string, a ...any) error {
	return record.Errorf(b.path, line, "import", sentinel, format, a...)
}

// sample converts one sample object.
func (b *lmmsBuild) sample(raw []byte, line int) error {
	s, err := decodeSample(raw, b.path, line)
	if err != nil {
		return err
	}
	docID := scalarString(s["doc_id"])
	if docID == "" {
		return b.errf(line, record.ErrInvalid, "sample has no doc_id (keys: %s)", keyList(s, nil))
	}
	if b.pass != passRecords { // the first pass checked them
		if prev, ok := b.seen[docID]; ok {
			return b.errf(line, record.ErrDuplicate, "doc_id %q already at %d", docID, prev)
		}
		b.seen[docID] = line
	}
	sm := lmmsSample{s: s, line: line, docID: docID, known: findTask(s)}
	sm.doc, _ = s["doc"].(map[string]any)
	// Responses: filtered_resps, else resps; string | list | list of lists.
	sm.resp, sm.haveResp = firstString(s["filtered_resps"])
	if !sm.haveResp {
		sm.resp, sm.haveResp = firstString(s["resps"])
	}
	if t, ok := s["target"]; ok {
		sm.targets = stringsOf(t)
	}
	if err := b.samePayload(&sm); err != nil {
		return err
	}
	it, err := b.verdict(&sm)
	if err != nil {
		return err
	}
	return b.add(&sm, it)
}

// lmmsSample is one sample being converted.
type lmmsSample struct {
	s        map[string]any
	doc      map[string]any
	line     int
	docID    string
	known    *lmmsTask // the task payload this importer knows, nil when none
	resp     string
	haveResp bool
	targets  []string
}

// decodeSample parses one sample line: exactly one JSON object.
func decodeSample(raw []byte, path string, line int) (map[string]any, error) {
	if k := jsonKind(raw); k != "object" && k != "null" {
		return nil, fmtErr(path, line, "a sample is a JSON object, this is %s", withArticle(k))
	}
	var s map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmtErr(path, line, "not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, fmtErr(path, line, "more than one JSON value")
	}
	if s == nil {
		return nil, fmtErr(path, line, "sample is null")
	}
	return s, nil
}

// samePayload checks that the file's samples agree on carrying a known task payload (unless flags map
// the verdicts), and notes the first payload seen under mapped verdicts.
func (b *lmmsBuild) samePayload(sm *lmmsSample) error {
	opt, known, line := b.opt, sm.known, sm.line
	byPayload := opt.CorrectFrom == "" && opt.PredField == "" && !opt.OpenEnded
	if b.known != nil && known == nil && byPayload {
		return b.errf(line, record.ErrInvalid, "doc_id %q has no %q payload, while line %d had one", sm.docID, b.known.key, b.knownLine)
	}
	if known == nil && b.bareLine == 0 {
		b.bareLine = line
	}
	if known != nil && b.bareLine > 0 && byPayload {
		return b.errf(line, record.ErrInvalid, "doc_id %q carries the %s payload %q, while line %d had none", sm.docID, known.bench, known.key, b.bareLine)
	}
	if known != nil && b.known == nil && (opt.CorrectFrom != "" || opt.PredField != "") {
		b.known, b.knownLine = known, line // mapped over a known payload: noted in finish
	}
	return nil
}

// verdict is the sample's verdict: a field --correct-from names, exact match of --pred-field and
// --answer-field, Token-F1 of the response (--open-ended), the known task payload's, or none yet
// (--rescore text scores it in finish).
func (b *lmmsBuild) verdict(sm *lmmsSample) (lmmsItem, error) {
	opt, s, line, docID, known := b.opt, sm.s, sm.line, sm.docID, sm.known
	var it lmmsItem
	switch {
	case opt.CorrectFrom != "":
		v, ok := pathValue(s, opt.CorrectFrom)
		if !ok {
			return it, b.errf(line, record.ErrInvalid, "doc_id %q: no field %s (keys: %s)", docID, opt.CorrectFrom, keyList(s, nil))
		}
		if opt.OpenEnded {
			f, ok := numFloat(v)
			if !ok || !(f >= 0 && f <= 1) {
				return it, b.errf(line, record.ErrInvalid, "doc_id %q: %s = %s is not a score in [0,1]", docID, opt.CorrectFrom, pyval.Str(v))
			}
			it.score = &f
			return it, nil
		}
		ok, isV := verdictOf(v)
		if !isV {
			return it, b.errf(line, record.ErrInvalid, "doc_id %q: %s = %s is not a verdict (true/false or 1/0); a score in [0,1] needs --open-ended", docID, opt.CorrectFrom, pyval.Str(v))
		}
		it.correct = &ok
	case opt.PredField != "":
		pv, ok1 := pathValue(s, opt.PredField)
		av, ok2 := pathValue(s, opt.AnswerField)
		if !ok1 || !ok2 {
			return it, b.errf(line, record.ErrInvalid, "doc_id %q: no field %s or %s (keys: %s)", docID, opt.PredField, opt.AnswerField, keyList(s, nil))
		}
		it.pred, it.gold = strings.TrimSpace(scalarString(pv)), strings.TrimSpace(scalarString(av))
		if it.gold == "" {
			return it, b.errf(line, record.ErrInvalid, "doc_id %q: %s is empty: nothing to match %s against", docID, opt.AnswerField, opt.PredField)
		}
		ok := it.pred == it.gold
		it.correct = &ok
	case known != nil && opt.OpenEnded:
		return it, b.errf(line, ErrBadArgs, "doc_id %q: the %s payload %q holds the harness's verdicts; --open-ended would re-score them with Token-F1 (drop it)", docID, known.bench, known.key)
	case opt.OpenEnded:
		if !sm.haveResp {
			return it, b.errf(line, record.ErrInvalid, "doc_id %q: no response to score", docID)
		}
		sc := score.TokenF1(sm.resp, sm.targets...)
		it.score, it.pred = &sc, sm.resp
	case known != nil:
		return b.payloadVerdict(sm)
	case opt.Rescore == RescoreText:
		// No harness verdict: the opt-in rescore in finish scores the response against the target.
	default:
		return it, b.unknownPayload(s, line, docID)
	}
	return it, nil
}

// payloadVerdict is the verdict of a task payload this importer knows (one task per file; a task
// whose harness scores nothing is refused).
func (b *lmmsBuild) payloadVerdict(sm *lmmsSample) (lmmsItem, error) {
	known, line := sm.known, sm.line
	if b.known == nil {
		if known.refuse != nil {
			if why := known.refuse(b.task); why != "" {
				return lmmsItem{}, b.errf(line, record.ErrFormat, "task %q: %s", b.task, why)
			}
		}
		b.known, b.knownLine = known, line
	} else if b.known != known {
		return lmmsItem{}, b.errf(line, record.ErrFormat, "doc_id %q carries the %s payload %q, but line %d carried %q; one file holds one task", sm.docID, known.bench, known.key, b.knownLine, b.known.key)
	}
	it, err := known.item(sm.s[known.key], sm.s, b.task)
	if err != nil {
		return it, b.errf(line, record.ErrInvalid, "doc_id %q: %v", sm.docID, err)
	}
	return it, nil
}

// add makes the sample's record: the item key (doc or question id), its fields from the payload, else
// the doc, the response and target as prediction and answer (an option index shown as its letter).
// itemID is the sample's item id under --item-id: task:doc_id by default, the question_id, or the
// value at a path of the sample.
func (b *lmmsBuild) itemID(sm *lmmsSample, questionID string) (string, error) {
	switch opt := b.opt; {
	case opt.byDoc():
		return b.task + ":" + sm.docID, nil
	case opt.ItemKey == "question":
		if questionID == "" {
			return "", b.errf(sm.line, record.ErrInvalid, "doc_id %q: no question_id for --item-id question", sm.docID)
		}
		return questionID, nil
	default:
		v, _ := pathValue(sm.s, opt.ItemKey)
		item := scalarString(v)
		if item == "" {
			return "", b.errf(sm.line, record.ErrInvalid, "doc_id %q: no value at %s for --item-id (keys: %s)", sm.docID, opt.ItemKey, keyList(sm.s, nil))
		}
		return item, nil
	}
}

func (b *lmmsBuild) add(sm *lmmsSample, it lmmsItem) error {
	opt, s := b.opt, sm.s
	get := func(keys ...string) string {
		for _, src := range []map[string]any{it.payload, sm.doc} {
			for _, k := range keys {
				if v := scalarString(src[k]); v != "" {
					return v
				}
			}
		}
		return ""
	}
	if it.questionID == "" {
		it.questionID = get("question_id")
	}
	item, err := b.itemID(sm, it.questionID)
	if err != nil {
		return err
	}
	rec := newRecord(opt, item)
	rec.Task = b.task
	rec.DocHash = scalarString(s["doc_hash"])
	rec.QuestionID = it.questionID
	rec.Category = it.category
	if rec.Category == "" {
		rec.Category = get("task_category", "task_type", "category", "sub_category")
	}
	rec.Duration = it.duration
	if rec.Duration == "" {
		rec.Duration = get("duration")
	}
	if rec.Duration, err = opt.Durations.group(rec.Duration); err != nil { // MLVU's doc gives seconds
		return b.errf(sm.line, record.ErrInvalid, "doc_id %q: %v", sm.docID, err)
	}
	rec.Prediction, rec.Answer = it.pred, it.gold
	if rec.Prediction == "" || rec.Prediction == "None" {
		rec.Prediction = sm.resp
	}
	if (rec.Answer == "" || rec.Answer == "None") && len(sm.targets) > 0 {
		rec.Answer = sm.targets[0]
	}
	index := sm.known != nil && sm.known.targetIndex(b.task)
	if index {
		// The task's target is a 0-based option index: show the letters (LongVideoBench "1" → "B").
		if l := letterOfIndex(rec.Answer); l != "" {
			rec.Answer = l
		}
		if l := letterOfIndex(rec.Prediction); l != "" && pyval.IsIntLiteral(rec.Prediction) {
			rec.Prediction = l
		}
	}
	rec.Correct, rec.Score = it.correct, it.score
	rec.Unparsed = it.unparsed && rec.Correct != nil && !*rec.Correct
	rec.Source = record.Source{Path: b.path, Line: sm.line}
	rec.Task, rec.Category, rec.Duration = b.str(rec.Task), b.str(rec.Category), b.str(rec.Duration)
	rec.Prediction, rec.Answer = b.str(rec.Prediction), b.str(rec.Answer)
	it.payload = aggPayload(it.payload) // the aggregations read a few keys of it; the rest is let go
	it.category = b.str(it.category)
	if g := it.v2; g != nil {
		g.group, g.groupType, g.groupStructure = b.str(g.group), b.str(g.groupType), b.str(g.groupStructure)
	}
	gold := it.gold
	if gold == "" || gold == "None" {
		gold = rec.Answer
	}
	var in rescoreInput
	if opt.Rescore != "" {
		in = rescoreInput{response: sm.resp, gold: gold, index: index, cands: candidatesOf(sm.doc, promptOf(s))}
		if _, ok := in.verdict(); !ok && b.noTarget == 0 {
			b.noTarget, b.noTargetItem = sm.line, rec.ItemID
		}
	}
	switch b.pass {
	case passHold:
		b.recs = append(b.recs, rec)
		b.items = append(b.items, it.lmmsKept)
		if opt.Rescore != "" {
			b.rescore = append(b.rescore, in)
		}
		return nil
	case passVerdicts:
		b.items = append(b.items, it.lmmsKept)
		// Checked as it will be written, but for the aggregate (not known yet): a record the second
		// pass would refuse stops the import before anything is emitted.
		if opt.Rescore != "" {
			rescoreOne(&rec, in, true, &RescoreCount{})
		}
		if err := rec.Validate(); err != nil {
			return err
		}
		return rec.CheckSize()
	}
	return b.emit(&rec, in)
}

// emit finishes one record of the second pass (the aggregate stamped, the rescore applied), checks
// it and hands it to Options.Emit.
func (b *lmmsBuild) emit(rec *record.Record, in rescoreInput) error {
	i := b.next
	if i >= len(b.items) {
		return b.errf(rec.Source.Line, record.ErrFormat, "the file changed while it was read (more samples the second time)")
	}
	b.next++
	if b.stamps != nil {
		rec.Harness = b.stamps[b2i(b.items[i].skip)]
	}
	if b.counts != nil {
		rescoreOne(rec, in, b.harnessV, b.counts)
	}
	if err := rec.Validate(); err != nil {
		return err
	}
	b.hits += hit(rec)
	return b.opt.Emit(rec)
}

// unknownPayload is the error for a sample without a verdict the importer knows: it names the sample's
// keys and the flags that map them, never a guess.
func (b *lmmsBuild) unknownPayload(s map[string]any, line int, docID string) error {
	extra := keyList(s, standardKeys)
	if extra == "submission" || strings.HasPrefix(extra, "submission{") {
		return b.errf(line, record.ErrFormat, "doc_id %q: task %q writes only a submission payload: lmms-eval does not score it (its answers are hidden; e.g. egoschema, perceptiontest_test_mc)", docID, b.task)
	}
	var hint []string
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if standardKeys[k] {
			continue
		}
		if isVerdict(s[k]) {
			hint = append(hint, k)
		}
		if m, ok := s[k].(map[string]any); ok {
			sub := make([]string, 0, len(m))
			for kk := range m {
				sub = append(sub, kk)
			}
			sort.Strings(sub)
			for _, kk := range sub {
				if isVerdict(m[kk]) {
					hint = append(hint, k+"."+kk)
				}
			}
		}
	}
	example := "FIELD"
	if len(hint) > 0 {
		example = hint[0]
	}
	if extra == "" {
		extra = "none besides " + keyList(s, nil)
	}
	return b.errf(line, record.ErrFormat, "doc_id %q of task %q: no per-item verdict this importer knows (metric keys: %s); map one with --correct-from %s (a true/false or 1/0 field), or --pred-field F --answer-field F (exact match), or score the response by option text with --rescore text",
		docID, b.task, extra, example)
}

// finish computes the harness's aggregate, applies an opt-in rescore and validates the records.
func (b *lmmsBuild) finish() (*Result, error) {
	if len(b.items) == 0 {
		return nil, record.Errorf(b.path, 0, "import", record.ErrEmpty, "no samples")
	}
	res := &Result{Records: b.recs}
	mapped := b.opt.CorrectFrom != "" || b.opt.PredField != "" || b.opt.OpenEnded
	b.aggregate(res, mapped)
	if b.opt.Rescore != "" {
		b.harnessV = b.known != nil || mapped
		// Without a harness verdict a record with nothing to score against is an error, not a guess.
		if !b.harnessV && b.noTarget > 0 {
			return nil, b.errf(b.noTarget, record.ErrInvalid, "item %q: no target to score the response against", b.noTargetItem)
		}
		res.Rescored = &RescoreCount{}
	}
	if b.pass != passHold {
		return res, nil // the second pass finishes the records
	}
	if b.stamps != nil {
		for i := range res.Records {
			res.Records[i].Harness = b.stamps[b2i(b.items[i].skip)]
		}
	}
	if b.opt.Rescore != "" {
		res.Rescored = rescore(res.Records, b.rescore, b.harnessV)
	}
	for i := range res.Records {
		if err := res.Records[i].Validate(); err != nil {
			return nil, err
		}
		if err := res.Records[i].CheckSize(); err != nil {
			return nil, err
		}
	}
	return res, res.emit(b.opt)
}

// aggregate computes the harness's aggregate over the samples (the records' stamps) and notes why
// there is none.
func (b *lmmsBuild) aggregate(res *Result, mapped bool) {
	switch {
	case b.known != nil && !mapped:
		t := b.known
		a, why := t.agg(b.task, b.items)
		if a == nil {
			res.Notes = append(res.Notes, fmt.Sprintf("no harness aggregate for %s: %s (%s)", b.task, why, t.source))
			break
		}
		res.Aggregate = &Aggregate{Harness: "lmms-eval", Task: b.task, Metric: t.metricName(), Label: a.label, Source: t.source,
			Kind: a.kind, Raw: a.raw, Scale: a.scale, Counted: a.counted, LeftOut: a.leftOut}
		h := res.Aggregate.harness()
		b.stamps = &h
		if a.leftOut > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("the harness's aggregate counts %d of %d samples (%s); the %d left out count as wrong item by item", a.counted, len(b.items), a.label, a.leftOut))
		}
	case b.known != nil:
		res.Notes = append(res.Notes, fmt.Sprintf("verdicts mapped by flags, not the %s payload %q: the harness's aggregate is not reproduced", b.known.bench, b.known.key))
	case mapped:
		res.Notes = append(res.Notes, "verdicts mapped by flags: the harness's aggregate is not reproduced")
	}
}
