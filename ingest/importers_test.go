package ingest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/framesweep/framesweep/record"
)

func ip(v int) *int { return &v }

var vmeOpt = Options{Config: "f16", Meta: &record.ConfigMeta{Frames: ip(16), Width: ip(448), Height: ip(448)}}

// Legacy ≤v0.2: <task>.json with args, model_configs and logs (read by lmms_eval/models/simple/from_log.py).
const legacyVideoMME = `{
 "args": {"model": "llava_vid", "tasks": "videomme", "model_args": "max_frames_num=16"},
 "model_configs": {"task": "videomme", "output_type": "generate_until"},
 "logs": [
  {"doc_id": 0, "target": "B", "doc": {"video_id": "001", "question_id": "001-1", "duration": "short", "task_type": "Counting Problem"},
   "arguments": [["Question...", {"max_new_tokens": 16}]], "resps": [["B"]], "filtered_resps": ["B"],
   "videomme_perception_score": {"question_id": "001-1", "duration": "short", "category": "Knowledge", "sub_category": "Humanity & History",
     "task_category": "Counting Problem", "pred_answer": "B", "answer": "B", "score": 1, "videoID": "001"}},
  {"doc_id": 1, "target": "C", "resps": [["A. The man."]], "filtered_resps": ["A. The man."],
   "videomme_perception_score": {"question_id": "001-2", "duration": "short", "category": "Knowledge", "sub_category": "Humanity & History",
     "task_category": "Object Reasoning", "pred_answer": "A", "answer": "C", "score": 0, "videoID": "001"}}
 ]
}`

// v0.3–v0.6 nested samples_*.jsonl: resps [[...]], filtered_resps [...], doc, prompt/target hashes.
const nestedVideoMME = `{"doc_id": 0, "doc": {"videoID": "001", "question_id": "001-1", "duration": "short", "domain": "Knowledge", "task_type": "Counting Problem", "question": "How many?", "options": ["A. 1", "B. 2", "C. 3", "D. 4"], "answer": "B"}, "target": "B", "arguments": [["ctx", {"max_new_tokens": 16}]], "resps": [["B"]], "filtered_resps": ["B"], "doc_hash": "ab12", "prompt_hash": "cd34", "target_hash": "ef56", "videomme_perception_score": {"question_id": "001-1", "duration": "short", "category": "Knowledge", "sub_category": "Humanity & History", "task_category": "Counting Problem", "pred_answer": "B", "answer": "B", "score": 1, "videoID": "001"}}
{"doc_id": 1, "doc": {"videoID": "001", "question_id": "001-2", "duration": "short"}, "target": "C", "arguments": [["ctx", {}]], "resps": [["D"]], "filtered_resps": ["D"], "doc_hash": "ab13", "videomme_perception_score": {"question_id": "001-2", "duration": "short", "category": "Knowledge", "sub_category": "Humanity & History", "task_category": "Object Reasoning", "pred_answer": "D", "answer": "C", "score": 0, "videoID": "001"}}
`

// v0.7 flattened: doc and arguments popped, resps dropped when equal, [["x"]] → "x", target stringified.
const flatMLVU = `{"doc_id": 3, "target": "A", "input": "Question ... Best option: (", "filtered_resps": "C", "token_counts": [12], "doc_hash": "99", "mlvu_percetion_score": {"question_id": "How many cats appear?", "task_type": "count", "pred_answer": "C", "answer": "A"}}
{"doc_id": 4, "target": "B", "input": "...", "filtered_resps": "B", "mlvu_percetion_score": {"question_id": "What is the order?", "task_type": "order", "pred_answer": "B", "answer": "B"}}
`

func TestLmmsEvalGenerations(t *testing.T) {
	cases := []struct {
		name, path, data string
		wantIDs          []string
		wantOK           []bool
		wantCat          []string
		wantDur          string
		wantQ            string
	}{
		{"legacy", "logs/videomme.json", legacyVideoMME, []string{"videomme:0", "videomme:1"}, []bool{true, false},
			[]string{"Counting Problem", "Object Reasoning"}, "short", "001-1"},
		{"nested", "out/llava/20240601_120000_samples_videomme.jsonl", nestedVideoMME, []string{"videomme:0", "videomme:1"}, []bool{true, false},
			[]string{"Counting Problem", "Object Reasoning"}, "short", "001-1"},
		{"flattened", "out/q/2025-01-01T00-00-00_samples_mlvu_dev.jsonl", flatMLVU, []string{"mlvu_dev:3", "mlvu_dev:4"}, []bool{false, true},
			[]string{"count", "order"}, "", "How many cats appear?"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := LmmsEval(strings.NewReader(tc.data), tc.path, vmeOpt)
			if err != nil {
				t.Fatal(err)
			}
			recs := res.Records
			if len(recs) != len(tc.wantIDs) {
				t.Fatalf("%d records", len(recs))
			}
			for i, r := range recs {
				if r.ItemID != tc.wantIDs[i] || *r.Correct != tc.wantOK[i] || r.Category != tc.wantCat[i] || r.Duration != tc.wantDur || r.Config != "f16" || *r.ConfigMeta.Frames != 16 {
					t.Errorf("record %d = %+v", i, r)
				}
			}
			if recs[0].QuestionID != tc.wantQ {
				t.Errorf("question id %q", recs[0].QuestionID)
			}
			// The imported records are valid canonical records.
			var buf bytes.Buffer
			if err := record.Write(&buf, recs); err != nil {
				t.Fatal(err)
			}
			if back, err := record.Read(&buf, "x.jsonl"); err != nil || len(back) != len(recs) {
				t.Errorf("round trip: %v", err)
			}
		})
	}
}

func TestLmmsEvalItemKeyAndOptIns(t *testing.T) {
	o := vmeOpt
	o.ItemKey = "question"
	res, err := LmmsEval(strings.NewReader(nestedVideoMME), "s_samples_videomme.jsonl", o)
	if err != nil || res.Records[1].ItemID != "001-2" {
		t.Fatalf("question key: %v %+v", err, res)
	}
	// No payload the importer knows: an error naming the keys and the flags, never a guess.
	generic := `{"doc_id": 0, "target": "A", "resps": [["(A) a dog"]], "filtered_resps": ["(A) a dog"], "hit": true}
{"doc_id": 1, "target": "yes", "filtered_resps": ["Yes"], "hit": true}
{"doc_id": 2, "target": "B", "filtered_resps": "C", "hit": false}`
	_, err = LmmsEval(strings.NewReader(generic), "x_samples_mytask.jsonl", vmeOpt)
	if !errors.Is(err, record.ErrFormat) || !strings.Contains(err.Error(), "x_samples_mytask.jsonl:1") ||
		!strings.Contains(err.Error(), "metric keys: hit") || !strings.Contains(err.Error(), "--correct-from hit") || !strings.Contains(err.Error(), "--pred-field") {
		t.Errorf("unknown payload: %v", err)
	}
	// The explicit opt-ins: a verdict field, an exact-match pair, option-text rescoring.
	o = vmeOpt
	o.CorrectFrom = "hit"
	res, err = LmmsEval(strings.NewReader(generic), "x_samples_mytask.jsonl", o)
	if err != nil || !*res.Records[0].Correct || !*res.Records[1].Correct || *res.Records[2].Correct || res.Records[0].ItemID != "mytask:0" || res.Aggregate != nil || res.Records[0].Harness != nil {
		t.Fatalf("--correct-from: %v %+v", err, res)
	}
	o = vmeOpt
	o.Rescore = RescoreText
	res, err = LmmsEval(strings.NewReader(generic), "x_samples_mytask.jsonl", o)
	if err != nil || !*res.Records[0].Correct || !*res.Records[1].Correct || *res.Records[2].Correct || res.Rescored.Unscored != 3 {
		t.Fatalf("--rescore text without a harness verdict: %v %+v %+v", err, res, res.Rescored)
	}
	oe := `{"doc_id": 0, "target": ["a red car", "red automobile"], "filtered_resps": "The red car."}`
	o = vmeOpt
	o.OpenEnded = true
	res, err = LmmsEval(strings.NewReader(oe), "x_samples_gen.jsonl", o)
	if err != nil || res.Records[0].Score == nil || *res.Records[0].Score != 1 {
		t.Fatalf("open-ended: %v %+v", err, res)
	}
	// A known payload refuses --open-ended: that would re-score the harness's verdicts.
	if _, err := LmmsEval(strings.NewReader(flatMLVU), "x_samples_mlvu_dev.jsonl", o); !errors.Is(err, ErrBadArgs) {
		t.Errorf("--open-ended over a known payload: %v", err)
	}
}

func TestLmmsEvalErrors(t *testing.T) {
	cases := []struct {
		data string
		want error
		line string
	}{
		{`{"doc_id": 0, "target": "A", "filtered_resps": "A", "exact_match": true}` + "\n" + `{"target": "A"}`, record.ErrInvalid, "f.jsonl:2"},
		{`{"doc_id": 0, "target": "A", "filtered_resps": "A", "exact_match": true}` + "\n" + `{"doc_id": 0, "target": "A", "filtered_resps": "A", "exact_match": true}`, record.ErrDuplicate, "f.jsonl:2"},
		{`{"doc_id": 0, "target": "A", "filtered_resps": "A", "exact_match": true}` + "\n" + `{"doc_id": 1, "target": "A", "filtered_resps": "A"}`, record.ErrInvalid, "f.jsonl:2"},
		{`{"doc_id": 0, "target": "A", "exact_match": true}` + "\n" + `{"doc_id": 1, "lvbench_score": true}`, record.ErrFormat, "f.jsonl:2"},
		{`{"doc_id": 0, "mvbench_accuracy": {"pred_answer": "A", "gt_answer": "A", "score": 2}}`, record.ErrInvalid, "f.jsonl:1"},
		{`{"doc_id": 0, "target": "A", "filtered_resps": "A"}` + "\n" + `{"doc_id": 1, "mlvu_percetion_score": {"pred_answer": "A", "answer": "A", "task_type": "count"}}`, record.ErrFormat, "f.jsonl:1"},
		{"\n\n{\"doc_id\": 0,", record.ErrSyntax, "f.jsonl:3"},
		{`{"doc_id": 0}`, record.ErrFormat, "f.jsonl:1"},
		{`[1,2]`, record.ErrSyntax, "f.jsonl:1"},
		{"  ", record.ErrEmpty, "f.jsonl"},
	}
	for _, tc := range cases {
		_, err := LmmsEval(strings.NewReader(tc.data), "f.jsonl", vmeOpt)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.line) {
			t.Errorf("%q: got %v, want %v at %s", tc.data, err, tc.want, tc.line)
		}
	}
	// The cause named is the cause: a legacy file whose "logs" is not a list is not "a sample without a
	// doc_id"; a sample that is not an object says what it is; legacy samples are named by their line.
	for _, tc := range []struct{ data, msg string }{
		{`{"logs":"x"}`, `f.jsonl:1: import: syntax error: "logs" is a string, want the list of samples`},
		{"{\"model_configs\": {},\n \"logs\":\n  null}", `f.jsonl:3: import: syntax error: "logs" is null, want the list of samples`},
		{`{"logs":[1]}`, "f.jsonl:1: import: syntax error: a sample is a JSON object, this is a number"},
		{`[1,2]`, "f.jsonl:1: import: syntax error: a sample is a JSON object, this is a list"},
		{`{"foo":1}`, "f.jsonl:1: import: invalid record: sample has no doc_id (keys: foo)"},
		{"{\"logs\": [\n  {\"doc_id\": 0, \"target\": \"A\", \"filtered_resps\": \"A\", \"exact_match\": true},\n\n  {\"target\": \"A\"}\n]}", "f.jsonl:4: import: invalid record: sample has no doc_id"},
	} {
		_, err := LmmsEval(strings.NewReader(tc.data), "f.jsonl", vmeOpt)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: got %v, want %q", tc.data, err, tc.msg)
		}
	}
	// With --rescore text a sample without a payload is allowed, but not beside samples that have one.
	mixed := `{"doc_id": 0, "target": "A", "filtered_resps": "A"}` + "\n" + `{"doc_id": 1, "mlvu_percetion_score": {"pred_answer": "A", "answer": "A", "task_type": "count"}}`
	o := vmeOpt
	o.Rescore = RescoreText
	if _, err := LmmsEval(strings.NewReader(mixed), "x_samples_mlvu_dev.jsonl", o); !errors.Is(err, record.ErrInvalid) || !strings.Contains(err.Error(), ":2") || !strings.Contains(err.Error(), "line 1 had none") {
		t.Errorf("mixed payloads under --rescore text: %v", err)
	}
	if _, err := LmmsEval(strings.NewReader(flatMLVU), "f.jsonl", Options{}); !errors.Is(err, ErrBadArgs) {
		t.Errorf("missing config: %v", err)
	}
}

// VLMEvalKit Video-MME prediction table: dataset columns + prediction (videomme.py::generate_tsv order).
var vlmHeader = []string{"index", "video", "video_path", "duration", "domain", "candidates", "sub_category", "task_type", "subtitle_path", "question", "answer", "prediction"}
var vlmRowsData = [][]string{
	{"0", "001", "./video/001.mp4", "short", "Knowledge", `['A. Apples.', 'B. Candles.', "C. Berries' jam.", 'D. The same.']`, "Humanity & History", "Counting Problem", "./subtitle/001.srt", "Which is most?", "C", "C"},
	{"1", "001", "./video/001.mp4", "short", "Knowledge", `['A. A dog', 'B. A cat', 'C. A bird', 'D. None']`, "Humanity & History", "Object Reasoning", "", "Which animal?", "B", "A dog"},
	{"2", "002", "./video/002.mp4", "medium", "Film", `('A. red', 'B. blue', 'C. green', 'D. \u00e9t\u00e9')`, "Animation", "OCR Problems", "", "Colour?", "D", "The answer is D."},
}

func tsvQuoteAll(header []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(`"` + strings.ReplaceAll(c, `"`, `""`) + `"`)
		}
		b.WriteByte('\n')
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
	return b.String()
}

// needXLSX skips a test of the xlsx reader in a build without it (-tags noxlsx), where
// TestXLSXLeftOut checks the refusal instead.
func needXLSX(t *testing.T) {
	t.Helper()
	if !haveXLSX {
		t.Skip("built with -tags noxlsx: the xlsx reader is left out")
	}
}

func xlsxBytes(t testing.TB, header []string, rows [][]string) []byte {
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	all := append([][]string{header}, rows...)
	for i, r := range all {
		cells := make([]any, len(r))
		for j, c := range r {
			cells[j] = c
		}
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := sw.SetRow(cell, cells); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func jsonRecords(header []string, rows [][]string) string {
	var parts []string
	for _, r := range rows {
		var kv []string
		for i, h := range header {
			kv = append(kv, quoteJSON(h)+": "+quoteJSON(r[i]))
		}
		parts = append(parts, "{"+strings.Join(kv, ", ")+"}")
	}
	return "[" + strings.Join(parts, ",\n") + "]"
}

func jsonColumns(header []string, rows [][]string) string {
	var cols []string
	for i, h := range header {
		var kv []string
		for ri, r := range rows {
			kv = append(kv, quoteJSON(strings.Repeat("", ri)+itoa(ri))+": "+quoteJSON(r[i]))
		}
		cols = append(cols, quoteJSON(h)+": {"+strings.Join(kv, ", ")+"}")
	}
	return "{" + strings.Join(cols, ", ") + "}"
}

func itoa(i int) string { return string(rune('0' + i)) }

func quoteJSON(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestVLMEvalKitFormats(t *testing.T) {
	cases := []struct {
		name, path string
		data       []byte
	}{
		{"xlsx", "work/Qwen_Video-MME.xlsx", xlsxBytes(t, vlmHeader, vlmRowsData)},
		{"tsv", "work/Qwen_Video-MME.tsv", []byte(tsvQuoteAll(vlmHeader, vlmRowsData))},
		{"json-records", "work/Qwen_Video-MME.json", []byte(jsonRecords(vlmHeader, vlmRowsData))},
		{"json-columns", "work/Qwen_Video-MME.json", []byte(jsonColumns(vlmHeader, vlmRowsData))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "xlsx" {
				needXLSX(t)
			}
			// A prediction file has no verdict of VLMEvalKit's: refused unless the rescore is asked for.
			_, err := VLMEvalKit(bytes.NewReader(tc.data), tc.path, vmeOpt)
			if !errors.Is(err, record.ErrFormat) || !strings.Contains(err.Error(), `no "score" column`) || !strings.Contains(err.Error(), "--rescore text") {
				t.Fatalf("prediction file without --rescore: %v", err)
			}
			o := vmeOpt
			o.Rescore = RescoreText
			res, err := VLMEvalKit(bytes.NewReader(tc.data), tc.path, o)
			if err != nil {
				t.Fatal(err)
			}
			recs := res.Records
			if res.Rescored == nil || res.Rescored.Unscored != 3 || res.Aggregate != nil || recs[0].Harness != nil {
				t.Errorf("rescore count %+v, aggregate %+v", res.Rescored, res.Aggregate)
			}
			if len(recs) != 3 {
				t.Fatalf("%d records", len(recs))
			}
			want := []struct {
				id, cat, dur, pred string
				ok                 bool
			}{{"0", "Counting Problem", "short", "C", true}, {"1", "Object Reasoning", "short", "A", false}, {"2", "OCR Problems", "medium", "D", true}}
			for i, w := range want {
				r := recs[i]
				if r.ItemID != w.id || r.Category != w.cat || r.Duration != w.dur || r.Prediction != w.pred || *r.Correct != w.ok {
					t.Errorf("row %d = %+v (correct %v), want %+v", i, r, *r.Correct, w)
				}
			}
		})
	}
}

func TestVLMEvalKitScoreFileAndErrors(t *testing.T) {
	h := []string{"index", "question", "answer", "prediction", "score"}
	rows := [][]string{{"7", "q", "A", "A", "1"}, {"8", "q", "B", "garbage", "-1"}, {"9", "q", "C", "D", "0"}}
	res, err := VLMEvalKit(strings.NewReader(tsvQuoteAll(h, rows)), "m_Video-MME_score.tsv", vmeOpt)
	if err != nil {
		t.Fatal(err)
	}
	recs := res.Records
	if !*recs[0].Correct || *recs[1].Correct || *recs[2].Correct {
		t.Errorf("score column: %+v", recs)
	}
	// The rating leaves the -1 row out: 1 of 2.
	if a := res.Aggregate; a == nil || a.Raw != 0.5 || a.Counted != 2 || a.LeftOut != 1 || !recs[1].Harness.Skip || recs[0].Harness.Skip {
		t.Errorf("rating: %+v", res.Aggregate)
	}
	bad := [][]string{{"7", "q", "A", "A", "0.5"}}
	if _, err := VLMEvalKit(strings.NewReader(tsvQuoteAll(h, bad)), "m_Video-MME_score.tsv", vmeOpt); !errors.Is(err, record.ErrInvalid) || !strings.Contains(err.Error(), ":2") {
		t.Errorf("a score of 0.5: %v", err)
	}
	evil := [][]string{{"0", "x", "A", "A", "", `__import__('os').system('touch /tmp/pwned')`}}
	_, err = VLMEvalKit(strings.NewReader(tsvQuoteAll([]string{"index", "question", "answer", "prediction", "score", "candidates"}, evil)), "e.tsv", vmeOpt)
	if !errors.Is(err, record.ErrInvalid) || !strings.Contains(err.Error(), "e.tsv:2") {
		t.Errorf("code in candidates: %v", err)
	}
	_, err = VLMEvalKit(strings.NewReader("a\tb\n1\t2\n"), "n.tsv", vmeOpt)
	if !errors.Is(err, record.ErrFormat) {
		t.Errorf("missing columns: %v", err)
	}
	_, err = VLMEvalKit(strings.NewReader("not a zip"), "x.xlsx", vmeOpt)
	if !errors.Is(err, record.ErrFormat) {
		t.Errorf("fake xlsx: %v", err)
	}
	_, err = VLMEvalKit(bytes.NewReader([]byte("PK\x03\x04garbage")), "x.xlsx", vmeOpt)
	if !errors.Is(err, record.ErrFormat) {
		t.Errorf("corrupt xlsx: %v", err)
	}
	dup := [][]string{{"1", "q", "A", "A", "1"}, {"1", "q", "A", "B", "0"}}
	_, err = VLMEvalKit(strings.NewReader(tsvQuoteAll(h, dup)), "d.tsv", vmeOpt)
	if !errors.Is(err, record.ErrDuplicate) || !strings.Contains(err.Error(), "d.tsv:3") {
		t.Errorf("duplicate index: %v", err)
	}
}

// TestBOM: harness files written on Windows start with a UTF-8 byte order mark; every format reads
// the same records with and without one.
func TestBOM(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	for _, tc := range []struct{ name, path, data string }{
		{"legacy", "logs/videomme.json", legacyVideoMME},
		{"nested", "out/llava/20240601_120000_samples_videomme.jsonl", nestedVideoMME},
		{"flattened", "out/q/2025-01-01T00-00-00_samples_mlvu_dev.jsonl", flatMLVU},
	} {
		plain, err := LmmsEval(strings.NewReader(tc.data), tc.path, vmeOpt)
		if err != nil {
			t.Fatal(err)
		}
		withBOM, err := LmmsEval(strings.NewReader(bom+tc.data), tc.path, vmeOpt)
		if err != nil || len(withBOM.Records) != len(plain.Records) || withBOM.Records[0].ItemID != plain.Records[0].ItemID {
			t.Errorf("lmms-eval %s with a BOM: %v", tc.name, err)
		}
	}
	o := vmeOpt
	o.Rescore = RescoreText
	for _, tc := range []struct{ name, path, data string }{
		{"tsv", "work/Qwen_Video-MME.tsv", tsvQuoteAll(vlmHeader, vlmRowsData)},
		{"json-records", "work/Qwen_Video-MME.json", jsonRecords(vlmHeader, vlmRowsData)},
		{"json-columns", "work/Qwen_Video-MME.json", jsonColumns(vlmHeader, vlmRowsData)},
	} {
		res, err := VLMEvalKit(strings.NewReader(bom+tc.data), tc.path, o)
		if err != nil || len(res.Records) != 3 || res.Records[0].Category != "Counting Problem" {
			t.Errorf("vlmevalkit %s with a BOM: %v", tc.name, err)
		}
	}
}

// TestImportUnparsed: an answer the harness's own parser found no letter in (lmms-eval's empty or
// None pred_answer, VLMEvalKit's score -1 or empty) is marked unparsed; a wrong letter is not.
func TestImportUnparsed(t *testing.T) {
	f := mustOpen(t, "testdata/lmms-eval/2025-03-04T08-00-00_samples_mvbench_action_count.jsonl")
	res, err := LmmsEval(f, f.Name(), Options{Config: "f8"})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Records {
		if want := r.ItemID == "mvbench_action_count:2"; r.Unparsed != want {
			t.Errorf("%s (prediction %q, correct %v): unparsed %v, want %v", r.ItemID, r.Prediction, *r.Correct, r.Unparsed, want)
		}
	}
	res, err = VLMEvalKit(strings.NewReader("index\tprediction\tanswer\tscore\n0\tA\tA\t1\n1\tB\tA\t0\n2\tFailed to obtain answer via API.\tA\t-1\n3\t\tA\t\n"), "m_Video-MME_score.tsv", Options{Config: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true, true} {
		if res.Records[i].Unparsed != want {
			t.Errorf("VLMEvalKit row %d: unparsed %v, want %v", i, res.Records[i].Unparsed, want)
		}
	}
}
