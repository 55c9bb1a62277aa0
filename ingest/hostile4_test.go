package ingest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// Issue 40's cases of the importers (tables are rectangular, numbers ranged, durations checked):
// each fails on c1f7b3c and passes after.

// TestTablesRectangular (issue 40): a row whose cell count is not the header's is an error naming the
// file, the line and both counts, in long and wide CSV and TSV tables, JSON (orient=split), xlsx and
// VLMEvalKit's TSV; before, an unquoted comma in a prediction ("A, or B") shifted the row and the
// verdict was computed against the wrong cell, exit 0.
func TestTablesRectangular(t *testing.T) {
	for _, c := range []struct {
		body, name string
		opt        TableOptions
		want       string
	}{
		{"item_id,config,prediction,answer\nq1,f8,B,B\nq2,f8,A, or B,B\n", "long.csv", TableOptions{}, "long.csv:3: import: syntax error: csv row has 5 cells, the header 4"},
		{"item_id,config,prediction,answer\nq1,f8,B,B\nq2,f8,A\n", "long.csv", TableOptions{}, "long.csv:3: import: syntax error: csv row has 3 cells, the header 4"},
		{"item_id\tconfig\tcorrect\nq1\tf8\t1\tx\n", "long.tsv", TableOptions{}, "long.tsv:2: import: syntax error: tsv row has 4 cells, the header 3"},
		{"sample_id,answer,f8,f16\nq1,B,B,A\nq2,C,C\n", "wide.csv", TableOptions{Wide: true}, "wide.csv:3: import: syntax error: csv row has 3 cells, the header 4"},
		{`{"columns":["item_id","config","correct"],"data":[["q1","f8",1],["q2","f8"]]}`, "s.json", TableOptions{}, "s.json:2: import: syntax error: json data row 1 has 2 cells, the columns 3"},
	} {
		_, err := importTable(c.body, c.name, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, record.ErrSyntax) {
			t.Errorf("%q: %v, want %q", c.body, err, c.want)
		}
	}
	// Errors after a blank line or a cell spanning lines name the row's own line.
	if _, err := importTable("item_id,config,prediction,answer\nq1,f8,\"B\nor C\",B\n\nq2,f8,B,B\nq2,f8,B,B\n", "l.csv", TableOptions{}); err == nil || !strings.Contains(err.Error(), `l.csv:6: import: duplicate record: item "q2" config "f8" already on line 5`) {
		t.Errorf("lines: %v", err)
	}
	// A blank line, and a quoted separator, are fine.
	if res, err := importTable("item_id,config,prediction,answer\nq1,f8,B,B\n\nq2,f8,\"A, or B\",B\n", "ok.csv", TableOptions{}); err != nil || res.Records[1].Prediction != "A" {
		t.Errorf("quoted: %v", err)
	}
	_, err := VLMEvalKit(strings.NewReader("index\tprediction\tanswer\tscore\n0\tA\tA\t1\n1\tB\tA\n"), "m_Video-MME_8frame_score.tsv", Options{Config: "f8"})
	if err == nil || !strings.Contains(err.Error(), "m_Video-MME_8frame_score.tsv:3: import: syntax error: tsv row has 3 cells, the header 4") {
		t.Errorf("VLMEvalKit tsv: %v", err)
	}
	needXLSX(t)
	x := xlsxBytes(t, []string{"item_id", "config", "correct"}, [][]string{{"q1", "f8", "1"}, {"q2", "f8", "0", "stray"}})
	if _, err := Table(strings.NewReader(string(x)), "t.xlsx", TableOptions{}); err == nil || !strings.Contains(err.Error(), "t.xlsx:3: import: syntax error: xlsx row has 4 cells, the header 3") {
		t.Errorf("xlsx: %v", err)
	}
	x = xlsxBytes(t, []string{"sample_id", "answer", "f8", "f16"}, [][]string{{"q1", "B", "B"}, {"q2", "B", "B", "A"}})
	if res, err := Table(strings.NewReader(string(x)), "t.xlsx", TableOptions{Wide: true}); err != nil || len(res.Records) != 4 || !res.Records[1].Unparsed {
		t.Errorf("xlsx trailing empty cell: %v", err)
	}
}

// TestNumbersRangedOnImport (issue 40): frames 0..131072, width/height 1..65536 and max_pixels up to
// 65536² in every importer (table columns, the options lmms-eval and VLMEvalKit stamp), each error
// naming the file, the line and the column; a cost can no longer overflow.
func TestNumbersRangedOnImport(t *testing.T) {
	for body, want := range map[string]string{
		"item_id,config,frames,correct\nq,f,999999999999,1\n":           `n.csv:2: import: invalid record: item "q" config "f": frames 999999999999: out of range (want 0..131072)`,
		"item_id,config,frame_count,correct\nq,f,131073,1\n":            `frame_count 131073: out of range`,
		"item_id,config,frames,width,height,correct\nq,f,8,70000,8,1\n": `width 70000: out of range (want 1..65536)`,
		"item_id,config,frames,size,correct\nq,f,8,0x8,1\n":             `size "0x8" is not WxH`,
		"item_id,config,frames,pixel_count,correct\nq,f,8,0,1\n":        `pixel_count 0: out of range (want 1..4294967296)`,
		"item_id,config,frames,max_pixels,correct\nq,f,8,1e12,1\n":      `max_pixels 1000000000000: out of range`,
		"item_id,config,frames,correct\nq,f,-3,1\n":                     `frames -3: out of range`,
		"item_id,config,frames,correct\nq,f,2.5,1\n":                    `frames "2.5" is not an integer`,
	} {
		if _, err := importTable(body, "n.csv", TableOptions{}); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "n.csv:2:") {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	big := &record.ConfigMeta{Frames: ip(1 << 20)}
	if _, err := LmmsEval(strings.NewReader(`{"doc_id": 0, "target": "A", "filtered_resps": "A", "videomme_perception_score": {"question_id": "1", "pred_answer": "A", "answer": "A"}}`+"\n"), "x_samples_videomme.jsonl", Options{Config: "f", Meta: big}); err == nil || !errors.Is(err, ErrBadArgs) || !strings.Contains(err.Error(), "config_meta.frames 1048576: out of range") {
		t.Errorf("lmms-eval: %v", err)
	}
	if _, err := VLMEvalKit(strings.NewReader("index\tprediction\tanswer\tscore\n0\tA\tA\t1\n"), "m_Video-MME_8frame_score.tsv", Options{Config: "f", Meta: &record.ConfigMeta{Frames: ip(8), Width: ip(1 << 17), Height: ip(8)}}); err == nil || !strings.Contains(err.Error(), "config_meta.width 131072: out of range") {
		t.Errorf("VLMEvalKit: %v", err)
	}
	// A text-only row's pixel count says nothing: frame_count 0 is text only whatever pixel_count says.
	res, err := importTable("item_id,config,frame_count,pixel_count,correct\nq,textonly,0,0,1\n", "n.csv", TableOptions{})
	if err != nil || !*res.Records[0].ConfigMeta.TextOnly || res.Records[0].ConfigMeta.MaxPixels != nil {
		t.Errorf("text-only row: %v %+v", err, res)
	}
}

// TestDurationsChecked (issue 40): a duration that is a number must be finite and ≥ 0 in every
// importer ("-5", "NaN" and "Inf" once became duration groups of their own), and --duration-bins
// names are non-empty and distinct, as items import refuses them.
func TestDurationsChecked(t *testing.T) {
	bins, _ := ParseDurationBins("videomme")
	for _, d := range []string{"-5", "NaN", "Inf", "-Inf", "1e999"} {
		body := "item_id,config,correct,duration\nq,f8,1," + d + "\n"
		for _, b := range []*DurationBins{bins, nil} {
			if _, err := importTable(body, "d.csv", TableOptions{Options: Options{Durations: b}}); err == nil || !strings.Contains(err.Error(), "d.csv:2: import: invalid record: item \"q\": duration") {
				t.Errorf("table duration %s (bins %v): %v", d, b != nil, err)
			}
		}
		line, _ := json.Marshal(map[string]any{"doc_id": 0, "doc": map[string]any{"duration": d}, "target": "A", "filtered_resps": "A",
			"mlvu_percetion_score": map[string]any{"question_id": "q", "task_type": "count", "pred_answer": "A", "answer": "A"}})
		if _, err := LmmsEval(strings.NewReader(string(line)+"\n"), "x_samples_mlvu_dev.jsonl", Options{Config: "f8", Durations: bins}); err == nil || !strings.Contains(err.Error(), "x_samples_mlvu_dev.jsonl:1: import: invalid record: doc_id \"0\": duration") {
			t.Errorf("lmms-eval duration %s: %v", d, err)
		}
		if _, err := VLMEvalKit(strings.NewReader("index\tprediction\tanswer\tscore\tduration\n0\tA\tA\t1\t"+d+"\n"), "m_MLVU_8frame_score.tsv", Options{Config: "f8", Durations: bins}); err == nil || !strings.Contains(err.Error(), "m_MLVU_8frame_score.tsv:2: import: invalid record: index \"0\": duration") {
			t.Errorf("VLMEvalKit duration %s: %v", d, err)
		}
	}
	for _, bad := range []string{"a:10,a:20,a", "a:10,b:20,a", ":10,b", "a:10, ", "a:10,b:20,b"} {
		if _, err := ParseDurationBins(bad); err == nil || !strings.Contains(err.Error(), "--duration-bins") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
