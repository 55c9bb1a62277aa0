package ingest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// The importers face files from other tools: any input must give records or an error, never a panic,
// and an error is one line that names the file (a *record.Error carrying its path).

func checkErr(t *testing.T, err error, path string) {
	t.Helper()
	var ae *record.Error
	if err != nil && (!errors.As(err, &ae) || ae.Path != path || strings.ContainsAny(err.Error(), "\n\r")) {
		t.Fatalf("error does not name %s on one line: %q", path, err)
	}
}

func FuzzLmmsEval(f *testing.F) {
	for _, s := range []string{legacyVideoMME, nestedVideoMME, flatMLVU, `{"logs": [null]}`, `{"doc_id": {}, "resps": [[[[["x"]]]]]}`, "{\"doc_id\": 1, \"target\": [1, null]}",
		`{"doc_id": 0, "videomme_v2_score": {"video_id": 1, "question_id": "1-x", "group_type": "logic", "group_structure": "[1, [2, 3], 4]", "score": 1}}`,
		`{"doc_id": 0, "mmmu_acc": {"answer": ["1", 2], "parsed_pred": "1e999", "question_type": "open"}}`,
		`{"doc_id": 0, "WUPS": {"0": 1e-320, "qtype": "XX"}}`, `{"doc_id": 0, "score": {"pred": null, "ground_truth": 1.0}}`,
		`{"doc_id": 0, "my": {"a": {"b": true}}, "submission": {"x": 1}}`,
		`{"doc_id": 0, "target": "A", "filtered_resps": "A"}` + "\n" + `{"doc_id": 1, "mlvu_percetion_score": {"pred_answer": "A", "answer": "A", "task_type": "count"}}`} {
		for mode := uint8(0); mode < 4; mode++ {
			f.Add([]byte(s), mode)
		}
	}
	// One line of every task format of testdata/lmms-eval.
	files, _ := filepath.Glob(filepath.Join("testdata", "lmms-eval", "*_samples_*.jsonl"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			line, _, _ := bytes.Cut(b, []byte("\n"))
			f.Add(line, uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		o := vmeOpt
		switch mode % 4 {
		case 1:
			o.OpenEnded = true
		case 2:
			o.Rescore = RescoreText
		case 3:
			o.CorrectFrom = "my.a.b"
		}
		res, err := LmmsEval(bytes.NewReader(data), "fuzz_samples_mlvu_dev.jsonl", o)
		checkErr(t, err, "fuzz_samples_mlvu_dev.jsonl")
		if err == nil && len(res.Records) == 0 {
			t.Fatal("no records and no error")
		}
		if err == nil && res.Aggregate != nil && !(res.Aggregate.Points() >= 0 && res.Aggregate.Points() <= 100) {
			t.Fatalf("aggregate %v outside [0,100]", res.Aggregate.Points())
		}
	})
}

// FuzzCheckReport: any results/rating file gives a report or an error naming it, never a panic.
func FuzzCheckReport(f *testing.F) {
	for _, p := range []string{"2025-03-01T10-00-00_results.json", "2025-03-02T09-30-00_results.json"} {
		if b, err := os.ReadFile(filepath.Join("testdata", "lmms-eval", p)); err == nil {
			f.Add(b, false)
		}
	}
	f.Add([]byte(`{"overall": {"overall": "0.67"}}`), true)
	f.Add([]byte(`{"overall": [3, "4", 75]}`), true)
	f.Add([]byte(`{"results": {"longvideobench_val_v": {"lvb_acc,none": "N/A"}}, "n-samples": {"longvideobench_val_v": {"effective": 1e308}}}`), false)
	lvb, err := os.ReadFile(filepath.Join("testdata", "lmms-eval", "2025-03-01T10-00-00_samples_longvideobench_val_v.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	res, err := LmmsEval(bytes.NewReader(lvb), "x_samples_longvideobench_val_v.jsonl", vmeOpt)
	if err != nil {
		f.Fatal(err)
	}
	vres, err := VLMEvalKit(strings.NewReader("index\tprediction\tanswer\tscore\n1\tA\tA\t1\n2\tB\tA\t-1\n"), "m_Video-MME_score.tsv", vmeOpt)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, vlm bool) {
		format, r := "lmms-eval", res
		if vlm {
			format, r = "vlmevalkit", vres
		}
		rep, err := CheckReport(format, "fuzz.json", data, r, "")
		checkErr(t, err, "fuzz.json")
		if err == nil && (rep == nil || rep.Message == "" || strings.ContainsAny(rep.Message, "\n\r")) {
			t.Fatalf("report %+v", rep)
		}
	})
}

func FuzzVLMEvalKitTSV(f *testing.F) {
	f.Add([]byte(tsvQuoteAll(vlmHeader, vlmRowsData)))
	f.Add([]byte("index\tprediction\tanswer\n1\t\"A\n2\tB\tB"))
	f.Add([]byte("index\tprediction\tanswer\tscore\n1\tA\tA\t1\n2\tB\tA\t-1\n3\tC\tA\t\n4\tD\tA\tnan\n5\tE\tA\t1e400\n"))
	f.Add([]byte("index\tprediction\tanswer\tscore\tcandidates\n1\tA\t3\t0.5\t['3', '1']\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"fuzz.tsv", "m_Video-MME_8frame_score.tsv", "m_MVBench_score.tsv"} {
			_, err := VLMEvalKit(bytes.NewReader(data), name, vmeOpt)
			checkErr(t, err, name)
		}
	})
}

func FuzzVLMEvalKitJSON(f *testing.F) {
	f.Add([]byte(jsonRecords(vlmHeader, vlmRowsData)))
	f.Add([]byte(jsonColumns(vlmHeader, vlmRowsData)))
	f.Add([]byte(`{"columns": ["index", "prediction", "answer"], "data": [[1, "A", "A"], [2]]}`))
	f.Add([]byte(`{"index": {"0": 1}, "prediction": 3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := VLMEvalKit(bytes.NewReader(data), "fuzz.json", vmeOpt)
		checkErr(t, err, "fuzz.json")
	})
}

func FuzzVLMEvalKitXLSX(f *testing.F) {
	good := xlsxBytes(f, vlmHeader, vlmRowsData)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := VLMEvalKit(bytes.NewReader(data), "fuzz.xlsx", vmeOpt)
		checkErr(t, err, "fuzz.xlsx")
	})
}

// FuzzTable: any table gives records (each valid) or a one-line error naming the file, long or wide.
func FuzzTable(f *testing.F) {
	for _, s := range []string{"sample_id,config,correct\nq,f8,1\n", "sample_id,answer,f8,f16\nq,B,B,\n", "item_id,prediction,answer\na,I,B\n",
		`[{"sample_id":"q","config":"f8","correct":-1}]`, "{\"sample_id\":\"q\",\"config\":\"f8\",\"correct\":1,\"frames\":1e9}\n{\"x\":1}\n",
		"sample_id\tconfig\tsize\tcorrect\nq\tf8\t0x0\t1\n", "sample_id,config,correct,duration\nq,text,yes,NaN\n", "PAR1\x00\x00PAR1",
		"sample_id,model,split,config,frame_count,pixel_count,predicted_option,ground_truth_option,correct,source_tag,protocol_note\n001-1,m,V1,16f_151k,16,151200,A,A,1,t,n\n001-1,m,V2,textonly,0,0,,A,0,t,\n",
		"sample_id,split,answer,textonly,128f_input224,64f_76k\n001-1,V1,A,B,A,?\n"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, wide bool) {
		res, err := Table(bytes.NewReader(data), "fuzz.csv", TableOptions{Wide: wide, Options: Options{Durations: &VideoMMEBins}})
		checkErr(t, err, "fuzz.csv")
		if err == nil {
			for i := range res.Records {
				if verr := res.Records[i].Validate(); verr != nil {
					t.Fatalf("record %d: %v", i, verr)
				}
			}
		}
	})
}
