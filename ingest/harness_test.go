package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/record"
)

// testdata/lmms-eval holds one samples file per task format with the results.json of its run. No
// public samples file could be vendored here, so each is a field-for-field reconstruction of what the
// task's process_results and lmms-eval's evaluation tracker write (v0.7 form: doc and arguments popped,
// "input" = the prompt, target stringified; Video-MME in the nested v0.3–v0.6 form), and each
// results.json holds the number the task's aggregation gives for those samples, worked out by hand from
// the cited upstream function (the comment per case). The test checks the verdicts, the aggregate and
// that the import agrees with the results file.

type fixture struct {
	file            string
	records         int
	correct         int     // harness verdicts
	points          float64 // the harness's aggregate, points
	kind            string
	leftOut         int
	why             string
	firstAnswer     string // the first record's gold answer as imported
	firstCategory   string
	firstDuration   string
	openEndedPoints float64 // mean score of open-ended records
}

var lmmsFixtures = []fixture{
	// lvb_acc: parsed_pred == answer on 9 of 15; Overall = instance-level acc over the duration groups
	// and categories (each sample in one of each) = 9/15 → results "lvb_acc,none": 0.6. Targets are the
	// correct_choice index ("1"), the response a letter: matching the two gives 0 of 15.
	{file: "2025-03-01T10-00-00_samples_longvideobench_val_v.jsonl", records: 15, correct: 9, points: 60, kind: record.HarnessMicro,
		firstAnswer: "B", firstCategory: "TOS", firstDuration: "600"},
	// mlvu_percetion_score: per type 100·c/n = anomaly_reco 2/4, count 1/3 ("Fencing" ≠ "F"), ego 2/2,
	// needle 3/4, order 0/3, plotQA 2/4, topic_reasoning 2/2; M-avg = (50+33.33+100+75+0+50+100)/7 =
	// 58.333; the micro accuracy of the same records is 12/22 = 54.55.
	{file: "2025-03-02T09-30-00_samples_mlvu_dev.jsonl", records: 22, correct: 12, points: 58.333333333333336, kind: record.HarnessMacro,
		firstAnswer: "A", firstCategory: "anomaly_reco"},
	// videomme_perception_score (nested form): pred_answer == answer on 4 of 6 → 100·4/6.
	{file: "2025-03-03T08-00-00_samples_videomme.jsonl", records: 6, correct: 4, points: 100 * 4.0 / 6, kind: record.HarnessMicro,
		firstAnswer: "B", firstCategory: "Counting Problem", firstDuration: "short"},
	// mvbench_accuracy: scores 1,1,0,1,0,0 with one empty pred_answer left out → 100·3/5 = 60.
	{file: "2025-03-04T08-00-00_samples_mvbench_action_count.jsonl", records: 6, correct: 3, points: 60, kind: record.HarnessMicro, leftOut: 1,
		firstAnswer: "B", firstCategory: "action_count"},
	// score {pred, ground_truth}: str(gt) == str(pred) on 3 of 5 → 0.6; the target is the option index.
	{file: "2025-03-05T08-00-00_samples_egoschema_subset.jsonl", records: 5, correct: 3, points: 60, kind: record.HarnessMicro, firstAnswer: "D"},
	// exact_match with aggregation mean: 3 of 4 → 0.75; target "3" is option D.
	{file: "2025-03-06T08-00-00_samples_nextqa_mc_test.jsonl", records: 4, correct: 3, points: 75, kind: record.HarnessMicro, firstAnswer: "D"},
	// WUPS: WUPS@0 1.0, 0.5, 0, 0.8 summed per type in the fixed order, /4, ×100 = 57.5.
	{file: "2025-03-07T08-00-00_samples_nextqa_oe_val.jsonl", records: 4, points: 57.49999999999999, kind: record.HarnessMicro,
		firstAnswer: "to catch the ball", firstCategory: "CW", openEndedPoints: 57.5},
	// accuracy {pred_id, answer_id}: str(answer_id) == str(pred_id) on 2 of 4 → 0.5.
	{file: "2025-03-08T08-00-00_samples_perceptiontest_val_mc.jsonl", records: 4, correct: 2, points: 50, kind: record.HarnessMicro,
		firstAnswer: "A", firstCategory: "physics"},
	// avg_accuracy: rating == 1 on 3 of 4 (the last by the judge's "Correct") → 3/4·100.
	{file: "2025-03-09T08-00-00_samples_tempcompass_multi-choice.jsonl", records: 4, correct: 3, points: 75, kind: record.HarnessMicro,
		firstAnswer: "A. faster", firstCategory: "speed"},
	// lvbench_score with aggregation mean: 2 of 5 → 0.4.
	{file: "2025-03-10T08-00-00_samples_lvbench.jsonl", records: 5, correct: 2, points: 40, kind: record.HarnessMicro, firstAnswer: "B"},
	// mmmu_acc: MC B=B, MC C≠A, open 3.5 ∈ [3.5, …], open 12 ∉ [11.0, "11"], one API Error left out →
	// 2 of 4 = 0.5.
	{file: "2025-03-11T08-00-00_samples_video_mmmu_adaptation.jsonl", records: 5, correct: 2, points: 50, kind: record.HarnessMicro, leftOut: 1,
		firstAnswer: "B", firstCategory: "Art_Theory"},
	// videomme_v2_score: video 001 (relevance) 3 of 4 → 100·9/16 = 56.25; video 002 (logic [1,2,3,4],
	// sorted by question number 1,1,0,1) → chain of 2 → 25; mean 40.625 (the naive accuracy is 75).
	{file: "2025-03-12T08-00-00_samples_videomme_v2.jsonl", records: 8, correct: 6, points: 40.625, kind: record.HarnessGrouped,
		firstAnswer: "A", firstCategory: "relevance"},
}

func fixturePath(name string) string { return filepath.Join("testdata", "lmms-eval", name) }

func importFixture(t *testing.T, name string, opt Options) (*Result, error) {
	t.Helper()
	f, err := os.Open(fixturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return LmmsEval(f, fixturePath(name), opt)
}

func TestLmmsEvalHarnessVerdictsAndAggregates(t *testing.T) {
	for _, fx := range lmmsFixtures {
		t.Run(fx.file, func(t *testing.T) {
			res, err := importFixture(t, fx.file, Options{Config: "f32"})
			if err != nil {
				t.Fatal(err)
			}
			recs := res.Records
			if len(recs) != fx.records {
				t.Fatalf("%d records, want %d", len(recs), fx.records)
			}
			correct, score := 0, 0.0
			for i := range recs {
				r := &recs[i]
				if r.Correct != nil && *r.Correct {
					correct++
				}
				if r.Score != nil {
					score += *r.Score
				}
				h := r.Harness
				if h == nil || h.Kind != fx.kind || math.Abs(h.Value-fx.points) > 1e-9 || h.LeftOut != fx.leftOut || h.Counted != fx.records-fx.leftOut {
					t.Fatalf("record %d harness %+v", i, h)
				}
			}
			if correct != fx.correct {
				t.Errorf("%d correct, want %d", correct, fx.correct)
			}
			if fx.openEndedPoints > 0 && math.Abs(100*score/float64(len(recs))-fx.openEndedPoints) > 1e-9 {
				t.Errorf("mean score %v", 100*score/float64(len(recs)))
			}
			a := res.Aggregate
			if a == nil || math.Abs(a.Points()-fx.points) > 1e-9 || a.Kind != fx.kind || !strings.Contains(a.Source, "lmms_eval/tasks/") {
				t.Fatalf("aggregate %+v", a)
			}
			r0 := recs[0]
			if r0.Answer != fx.firstAnswer || r0.Category != fx.firstCategory || r0.Duration != fx.firstDuration {
				t.Errorf("first record %+v", r0)
			}
			// The run's results.json sits beside the samples file and holds the same number.
			rp, data, err := FindReport("lmms-eval", fixturePath(fx.file))
			if err != nil || rp == "" {
				t.Fatalf("results file: %q %v", rp, err)
			}
			rep, err := CheckReport("lmms-eval", rp, data, res, "")
			if err != nil || rep.Mismatch || !strings.Contains(rep.Message, "agrees") {
				t.Errorf("check: %+v %v", rep, err)
			}
			// The records round-trip through the canonical format with their harness field.
			var buf bytes.Buffer
			if err := record.Write(&buf, recs); err != nil {
				t.Fatal(err)
			}
			back, err := record.Read(&buf, "x.jsonl")
			if err != nil || len(back) != len(recs) || back[0].Harness == nil || *back[0].Harness != *recs[0].Harness {
				t.Errorf("round trip: %v", err)
			}
		})
	}
}

// The cases: LongVideoBench's index targets against letter responses, and MLVU's "Fencing"
// against "F", which an option-text match would call correct and lmms-eval calls wrong.
func TestLmmsEvalRescoreIsOptIn(t *testing.T) {
	res, err := importFixture(t, "2025-03-02T09-30-00_samples_mlvu_dev.jsonl", Options{Config: "f32"})
	if err != nil {
		t.Fatal(err)
	}
	fencing := -1
	for i, r := range res.Records {
		if r.Prediction == "Fencing" {
			fencing = i
		}
	}
	if fencing < 0 || *res.Records[fencing].Correct || res.Records[fencing].Answer != "F" {
		t.Fatalf("Fencing vs F must be wrong, as lmms-eval scores it: %+v", res.Records)
	}
	o := Options{Config: "f32", Rescore: RescoreText}
	res2, err := importFixture(t, "2025-03-02T09-30-00_samples_mlvu_dev.jsonl", o)
	if err != nil {
		t.Fatal(err)
	}
	rc := res2.Rescored
	// Rescoring by option text (options parsed from the prompt): "Fencing" is option F → correct; the
	// other responses start with their letter, so nothing else changes.
	if rc == nil || rc.Changed != 1 || rc.NowCorrect != 1 || rc.NowWrong != 0 || rc.Records != 22 || !*res2.Records[fencing].Correct {
		t.Fatalf("rescore: %+v", rc)
	}
	h := res2.Records[fencing].Harness
	if h == nil || !h.Flipped || h.Value != res.Aggregate.Points() {
		t.Errorf("a rescored record keeps the harness's aggregate and says it was flipped: %+v", h)
	}
	if !strings.Contains(rc.String(), "changed 1 of 22") {
		t.Errorf("message %q", rc.String())
	}
	// LongVideoBench: rescoring the responses against the index target (mapped to its letter) agrees
	// with the harness's parsed_pred on every sample but the one whose response starts with "The".
	res3, err := importFixture(t, "2025-03-01T10-00-00_samples_longvideobench_val_v.jsonl", o)
	if err != nil {
		t.Fatal(err)
	}
	if rc := res3.Rescored; rc == nil || rc.Records != 15 || rc.Changed != 0 {
		t.Errorf("LongVideoBench rescore: %+v", rc)
	}
}

func TestLmmsEvalRefusals(t *testing.T) {
	_, err := importFixture(t, "2025-03-05T09-00-00_samples_egoschema.jsonl", Options{Config: "f32"})
	if !errors.Is(err, record.ErrFormat) || !strings.Contains(err.Error(), "does not score the full EgoSchema set") {
		t.Errorf("full EgoSchema: %v", err)
	}
	_, err = importFixture(t, "2025-03-13T08-00-00_samples_mytask.jsonl", Options{Config: "f32"})
	if !errors.Is(err, record.ErrFormat) || !strings.Contains(err.Error(), "my_metric{gold, hit, pred}") || !strings.Contains(err.Error(), "--correct-from my_metric.hit") {
		t.Errorf("unknown payload: %v", err)
	}
	// Mapped explicitly, the verdicts are the mapped field's; the results file's number is only compared
	// with their micro accuracy, the harness's rule being unknown.
	for _, o := range []Options{{Config: "x", CorrectFrom: "my_metric.hit"}, {Config: "x", PredField: "my_metric.pred", AnswerField: "my_metric.gold"}} {
		res, err := importFixture(t, "2025-03-13T08-00-00_samples_mytask.jsonl", o)
		if err != nil || !*res.Records[0].Correct || *res.Records[1].Correct || res.Aggregate != nil {
			t.Fatalf("%+v: %v %+v", o, err, res)
		}
		rp, data, _ := FindReport("lmms-eval", fixturePath("2025-03-13T08-00-00_samples_mytask.jsonl"))
		rep, err := CheckReport("lmms-eval", rp, data, res, "my_metric")
		if err != nil || rep.Mismatch || !strings.Contains(rep.Message, "micro accuracy of the mapped verdicts") {
			t.Errorf("check: %+v %v", rep, err)
		}
	}
	_, err = importFixture(t, "2025-03-13T08-00-00_samples_mytask.jsonl", Options{Config: "x", CorrectFrom: "my_metric.pred"})
	if !errors.Is(err, record.ErrInvalid) || !strings.Contains(err.Error(), "is not a verdict") {
		t.Errorf("a non-verdict field: %v", err)
	}
}

// A results.json that disagrees with the samples is a warning, not silence.
func TestCheckReportMismatch(t *testing.T) {
	res, err := importFixture(t, "2025-03-01T10-00-00_samples_longvideobench_val_v.jsonl", Options{Config: "f32"})
	if err != nil {
		t.Fatal(err)
	}
	other := []byte(`{"results": {"longvideobench_val_v": {"lvb_acc,none": 0.62}}}`)
	rep, err := CheckReport("lmms-eval", "r.json", other, res, "")
	if err != nil || !rep.Mismatch || !strings.Contains(rep.Message, "says longvideobench_val_v lvb_acc,none = 0.62") {
		t.Errorf("mismatch: %+v %v", rep, err)
	}
	count := []byte(`{"results": {"longvideobench_val_v": {"lvb_acc,none": 0.6}}, "n-samples": {"longvideobench_val_v": {"original": 1337, "effective": 1337}}}`)
	if rep, _ := CheckReport("lmms-eval", "r.json", count, res, ""); !rep.Mismatch || !strings.Contains(rep.Message, "counted 1337 samples") {
		t.Errorf("sample count: %+v", rep)
	}
	if rep, _ := CheckReport("lmms-eval", "r.json", []byte(`{"results": {}}`), res, ""); rep.Mismatch || !strings.Contains(rep.Message, "no results for task") {
		t.Errorf("other task: %+v", rep)
	}
	if _, err := CheckReport("lmms-eval", "r.json", []byte(`{`), res, ""); !errors.Is(err, record.ErrSyntax) {
		t.Errorf("broken json: %v", err)
	}
	if got := ReportPaths("lmms-eval", "out/m/2025-03-01T10-00-00_samples_x.jsonl"); len(got) != 2 || got[0] != filepath.Join("out", "m", "2025-03-01T10-00-00_results.json") {
		t.Errorf("report paths %q", got)
	}
}

// VLMEvalKit _score files: the score column is the verdict, the rating is recomputed from it.
func TestVLMEvalKitRatings(t *testing.T) {
	needXLSX(t)
	// Video-MME: rows with score -1 (and an empty score) are left out of the rating.
	h := []string{"index", "video", "duration", "domain", "candidates", "sub_category", "task_type", "question", "answer", "prediction", "score"}
	rows := [][]string{
		{"0", "001", "short", "Knowledge", `['A. 1', 'B. 2', 'C. 3', 'D. 4']`, "Humanity & History", "Counting Problem", "How many?", "B", "B", "1"},
		{"1", "001", "short", "Knowledge", `['A. 1', 'B. 2', 'C. 3', 'D. 4']`, "Humanity & History", "Object Reasoning", "Which?", "C", "Failed to obtain answer via API.", "-1"},
		{"2", "301", "medium", "Sports Competition", `['A. x', 'B. y', 'C. z', 'D. w']`, "Football", "Action Recognition", "What?", "A", "D", "0"},
		{"3", "601", "long", "Life Record", `['A. x', 'B. y', 'C. z', 'D. w']`, "Travel", "OCR Problems", "Text?", "D", "D. w", "1"},
		{"4", "601", "long", "Life Record", `['A. x', 'B. y', 'C. z', 'D. w']`, "Travel", "OCR Problems", "Text?", "A", "", ""},
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "Qwen2-VL-7B-Instruct_Video-MME_64frame_score.xlsx")
	if err := os.WriteFile(p, xlsxBytes(t, h, rows), 0o644); err != nil {
		t.Fatal(err)
	}
	// get_dimension_rating: overall = mean of the scores ≥ 0 = 2/3, stored as "0.67".
	testenv.WriteFile(t, filepath.Join(dir, "Qwen2-VL-7B-Instruct_Video-MME_64frame_rating.json"),
		[]byte(`{"short": {"overall": "1.00"}, "medium": {"overall": "0.00"}, "long": {"overall": "1.00"}, "overall": {"overall": "0.67", "domain": {}, "sub_category": {}, "task_type": {}}}`))
	f := mustOpen(t, p)
	res, err := VLMEvalKit(f, p, Options{Config: "f64"})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	a := res.Aggregate
	if a == nil || a.Counted != 3 || a.LeftOut != 2 || math.Abs(a.Points()-200.0/3) > 1e-9 || a.Task != "Video-MME" || a.Metric != "overall" {
		t.Fatalf("aggregate %+v", a)
	}
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "leaves out 2 of 5 rows") {
		t.Errorf("notes %q", res.Notes)
	}
	if n, ok := VLMEvalKitFrames(p); !ok || n != 64 {
		t.Errorf("frames from the name: %d %v", n, ok)
	}
	rp, data, err := FindReport("vlmevalkit", p)
	if err != nil || rp == "" {
		t.Fatalf("rating file: %q %v", rp, err)
	}
	if rep, err := CheckReport("vlmevalkit", rp, data, res, ""); err != nil || rep.Mismatch || !strings.Contains(rep.Message, "agrees: overall 0.67 (short 1.00, medium 0.00, long 1.00)") {
		t.Errorf("check: %+v %v", rep, err)
	}
	if rep, _ := CheckReport("vlmevalkit", rp, []byte(`{"long": {"overall": "0.50"}, "overall": {"overall": "0.67"}}`), res, ""); !rep.Mismatch || !strings.Contains(rep.Message, `long "0.50" where the score column gives 1.00`) {
		t.Errorf("a different per-duration rating must warn: %+v", rep)
	}
	if rep, _ := CheckReport("vlmevalkit", rp, []byte(`{"overall": {"overall": "0.70"}}`), res, ""); !rep.Mismatch {
		t.Errorf("a different rating must warn: %+v", rep)
	}
	// --rescore text on a score file reports what it changed: row 1's failure message stays wrong, row
	// 4's empty prediction too; nothing else differs.
	f = mustOpen(t, p)
	res, err = VLMEvalKit(f, p, Options{Config: "f64", Rescore: RescoreText})
	f.Close()
	if err != nil || res.Rescored.Changed != 0 || res.Rescored.Records != 5 {
		t.Errorf("rescore: %v %+v", err, res.Rescored)
	}

	// MVBench: [hits, total, "xx.xx%"], a hit being any non-zero score, -1 included.
	hm := []string{"index", "task_type", "candidates", "question", "answer", "prediction", "score"}
	mrows := [][]string{
		{"0", "Action Count", `['3', '2', '1']`, "How many?", "3", "(A) 3", "1"},
		{"1", "Action Count", `['3', '2', '1']`, "How many?", "2", "(C) 1", "0"},
		{"2", "Object Shuffle", `['left', 'right']`, "Where?", "left", "Failed to obtain answer via API.", "-1"},
		{"3", "Object Shuffle", `['left', 'right']`, "Where?", "right", "(B) right", "1"},
	}
	pm := filepath.Join(dir, "InternVL2-8B_MVBench_MP4_8frame.tsv")
	testenv.WriteFile(t, pm, []byte(tsvQuoteAll(hm, mrows)))
	f = mustOpen(t, pm)
	res, err = VLMEvalKit(f, pm, Options{Config: "f8"})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Aggregate; a == nil || a.Kind != record.HarnessOther || a.Points() != 75 || a.Counted != 4 {
		t.Fatalf("MVBench rating %+v", a)
	}
	ok := 0
	for _, r := range res.Records {
		if *r.Correct {
			ok++
		}
	}
	if ok != 2 || len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "counts 1 rows whose score is -1 or missing as hits") {
		t.Errorf("%d correct, notes %q", ok, res.Notes)
	}
	testenv.WriteFile(t, filepath.Join(dir, "InternVL2-8B_MVBench_MP4_8frame_rating.json"), []byte(`{"Action Count": [1, 2, "50.00%"], "Object Shuffle": [2, 2, "100.00%"], "overall": [3, 4, "75.00%"]}`))
	rp, data, _ = FindReport("vlmevalkit", pm)
	if rep, err := CheckReport("vlmevalkit", rp, data, res, ""); err != nil || rep.Mismatch {
		t.Errorf("MVBench check: %+v %v", rep, err)
	}
	// Another dataset: verdicts from the score column, no rating rule.
	po := filepath.Join(dir, "m_TempCompass_score.tsv")
	testenv.WriteFile(t, po, []byte(tsvQuoteAll([]string{"index", "answer", "prediction", "score"}, [][]string{{"0", "A", "A", "1"}})))
	f = mustOpen(t, po)
	res, err = VLMEvalKit(f, po, Options{Config: "x"})
	f.Close()
	if err != nil || res.Aggregate != nil || !strings.Contains(strings.Join(res.Notes, " "), "no rating rule") {
		t.Errorf("other dataset: %v %+v", err, res)
	}
}

func TestVLMEvalKitFrames(t *testing.T) {
	for name, want := range map[string]int{
		"work/Qwen2-VL_Video-MME_8frame.xlsx":               8,
		"work/Qwen2-VL_Video-MME_64frame_nopack_subs.xlsx":  64,
		"work/Qwen2-VL_Video-MME_32frame_nosubs_score.xlsx": 32,
		"work/Qwen2-VL_MVBench_MP4_16frame.tsv":             16,
		"work/Qwen2-VL_Video-MME_1fps.xlsx":                 0,
		"work/Qwen2-VL_Video-MME.xlsx":                      0,
	} {
		n, ok := VLMEvalKitFrames(name)
		if n != want || ok != (want > 0) {
			t.Errorf("%s: %d %v, want %d", name, n, ok, want)
		}
	}
}

// TestVideoMMMUOpenAnswer: VideoMMMU's open-answer rule: numbers compare after round(·, 2), strings by
// containment, a one-letter answer only as a separate word.
func TestVideoMMMUOpenAnswer(t *testing.T) {
	n := func(s string) any { return jsonNumber(s) }
	if !evalOpen("3.5", []any{n("3.5")}) || evalOpen("12", []any{n("11.0"), "11"}) || !evalOpen("Paris", []any{"it is paris"}) || evalOpen("a", []any{"cat"}) {
		t.Error("evalOpen")
	}
}

func jsonNumber(s string) any { return json.Number(s) }

// mustMkdir makes a test directory (and its parents).
func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// mustRead reads a test file.
func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustOpen opens a test file.
func mustOpen(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestVLMEvalKitSplitAndCSV: the split is the dataset without its budget (the budget is the config),
// the budget part of the name is the default config id, and a CSV table (a .csv file, or a header
// with commas and no tab) is read as CSV.
func TestVLMEvalKitSplitAndCSV(t *testing.T) {
	for _, c := range []struct{ path, model, split, budget string }{
		{"work/Qwen2-VL_Video-MME_16frame_score.xlsx", "", "Video-MME", "16frame"},
		{"work/Qwen2-VL_Video-MME_64frame_subs.xlsx", "", "Video-MME_subs", "64frame"},
		{"work/Qwen2-VL_Video-MME_0.5fps_subs_score.tsv", "", "Video-MME_subs", "0.5fps"},
		{"work/Qwen2-VL_Video-MME_1fps.xlsx", "", "Video-MME", "1fps"},
		{"work/Qwen2-VL_MVBench_MP4_8frame.tsv", "", "MVBench_MP4", "8frame"},
		{"work/Qwen2-VL_TempCompass_8frame.tsv", "Qwen2-VL", "TempCompass", "8frame"},
		{"work/Qwen2-VL_TempCompass.tsv", "", "Qwen2-VL_TempCompass", ""},
	} {
		if got := vlmDataset(c.path, c.model); got != c.split {
			t.Errorf("%s: split %q, want %q", c.path, got, c.split)
		}
		if got, ok := VLMEvalKitBudget(c.path); got != c.budget || ok != (c.budget != "") {
			t.Errorf("%s: budget %q %v, want %q", c.path, got, ok, c.budget)
		}
	}
	body := "index,prediction,answer,score\n0,A,A,1\n1,\"B, surely\",A,0\n2,C,C,1\n"
	for _, name := range []string{"m_Video-MME_16frame_score.csv", "m_Video-MME_16frame_score.tsv"} {
		res, err := VLMEvalKit(strings.NewReader(body), name, Options{Config: "16frame"})
		if err != nil || len(res.Records) != 3 || res.Records[1].Prediction != "B" || res.Records[0].Task != "Video-MME" || *res.Records[1].Correct {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	// A TSV whose cells hold commas stays a TSV.
	res, err := VLMEvalKit(strings.NewReader("index\tprediction\tanswer\tscore\n0\tthe dog, then the cat\tA\t0\n"), "m_Video-MME_score.tsv", Options{Config: "x"})
	if err != nil || len(res.Records) != 1 || res.Records[0].Prediction != "the dog, then the cat" {
		t.Errorf("tsv with commas: %v %+v", err, res)
	}
}

// TestVLMRuleForTaskNames: VLMEvalKit's rating rule is found under lmms-eval's spelling of the task too
// (`import vlmevalkit --task videomme`, so its records pair with lmms-eval's), never for another dataset.
func TestVLMRuleForTaskNames(t *testing.T) {
	for name, want := range map[string]string{
		"Video-MME": "videomme.py", "Video-MME_64frame": "videomme.py", "videomme": "videomme.py", "video_mme": "videomme.py",
		"MVBench_MP4": "mvbench.py", "mvbench": "mvbench.py", "TempCompass": "", "mme": "",
	} {
		r := vlmRuleFor(name)
		if got := ""; r != nil {
			got = r.source
			if want == "" || !strings.Contains(got, want) {
				t.Errorf("%s: rule %q, want %q", name, got, want)
			}
		} else if want != "" {
			t.Errorf("%s: no rule, want %q", name, want)
		}
	}
}
