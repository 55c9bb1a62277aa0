package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

func importTable(body, name string, opt TableOptions) (*Result, error) {
	return Table(strings.NewReader(body), name, opt)
}

// TestTableLong: a long table's usual column names are recognised (sample_id, correct, prediction,
// answer, frames, size, max_pixels, model), its verdicts and config_meta read, in CSV, TSV, JSON and
// JSON lines alike.
func TestTableLong(t *testing.T) {
	csv := "sample_id,model,config,frames,size,correct,prediction,answer,task_type,duration\n" +
		"q1,m,f8,8,448x448,1,B,B,OCR,334.5\n" +
		"q1,m,f16,16,448x448,0,I cannot tell,B,OCR,334.5\n" +
		"q2,m,f8,8,448x448,true,(C),C,OCR,20\n"
	jsonl := `{"sample_id":"q1","model":"m","config":"f8","frames":8,"size":"448x448","correct":1,"prediction":"B","answer":"B","task_type":"OCR","duration":334.5}
{"sample_id":"q1","model":"m","config":"f16","frames":16,"size":"448x448","correct":0,"prediction":"I cannot tell","answer":"B","task_type":"OCR","duration":334.5}
{"sample_id":"q2","model":"m","config":"f8","frames":8,"size":"448x448","correct":true,"prediction":"(C)","answer":"C","task_type":"OCR","duration":20}
`
	bins, _ := ParseDurationBins("videomme")
	for name, body := range map[string]string{"t.csv": csv, "t.tsv": strings.ReplaceAll(csv, ",", "\t"), "t.jsonl": jsonl,
		"t.json": "[" + strings.ReplaceAll(strings.TrimSpace(jsonl), "\n", ",") + "]"} {
		res, err := importTable(body, name, TableOptions{Options: Options{Durations: bins}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r := res.Records
		if len(r) != 3 || r[0].ItemID != "q1" || r[0].Model != "m" || *r[0].ConfigMeta.Frames != 8 || *r[0].ConfigMeta.Width != 448 ||
			!*r[0].Correct || *r[1].Correct || !r[1].Unparsed || r[0].Unparsed || r[2].Prediction != "C" || r[0].Category != "OCR" ||
			r[0].Duration != "medium" || r[2].Duration != "short" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	// Predictions and answers alone: the verdict is the letter match; no letter is unparsed.
	res, err := importTable("item_id,prediction,answer\na,The answer is B.,B\nb,C,B\nc,,B\n", "p.csv", TableOptions{Options: Options{Config: "f8"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Records; !*r[0].Correct || *r[1].Correct || r[1].Unparsed || !r[2].Unparsed || r[0].Config != "f8" {
		t.Errorf("letter verdicts: %+v", r)
	}
	// max_pixels and a config name's budget.
	res, err = importTable("item_id,config,correct,max_pixels\na,16frame,1,200704\nb,16frame,0,200704\n", "m.csv", TableOptions{})
	if err != nil || *res.Records[0].ConfigMeta.MaxPixels != 200704 || res.Records[0].ConfigMeta.Frames != nil {
		t.Errorf("max_pixels: %v %+v", err, res)
	}
	res, err = importTable("item_id,config,correct\na,16frame,1\na,text-only,0\n", "n.csv", TableOptions{})
	if err != nil || *res.Records[0].ConfigMeta.Frames != 16 || !*res.Records[1].ConfigMeta.TextOnly || !strings.Contains(strings.Join(res.Notes, " "), "from the config names") {
		t.Errorf("frames from names: %v %+v", err, res)
	}
}

// TestTableWide: a wide table's config columns hold predicted letters; the answers come from a
// column or the items file; an empty cell is unparsed (or, asked, no answer).
func TestTableWide(t *testing.T) {
	body := "sample_id,answer,category,text,f8,f16\nq1,B,OCR,A,B,\nq2,C,OCR,C,(C),I cannot tell\n"
	res, err := importTable(body, "w.csv", TableOptions{Wide: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 6 {
		t.Fatalf("%d records, want 6", len(res.Records))
	}
	by := map[string]record.Record{}
	for _, r := range res.Records {
		by[r.ItemID+" "+r.Config] = r
	}
	if r := by["q1 f16"]; !r.Unparsed || *r.Correct {
		t.Errorf("empty cell: %+v", r)
	}
	if r := by["q2 f16"]; !r.Unparsed || r.Prediction != "I cannot tell" {
		t.Errorf("no letter: %+v", r)
	}
	if r := by["q2 f8"]; !*r.Correct || r.Prediction != "C" || *r.ConfigMeta.Frames != 8 || r.Category != "OCR" {
		t.Errorf("q2 f8: %+v", r)
	}
	if r := by["q1 text"]; !*r.ConfigMeta.TextOnly || *r.Correct {
		t.Errorf("text: %+v", r)
	}
	res, err = importTable(body, "w.csv", TableOptions{Wide: true, EmptyMissing: true})
	if err != nil || len(res.Records) != 5 {
		t.Errorf("--empty missing: %v, %d records", err, len(res.Records))
	}
	// Answers from the items file; a disagreeing answer column is an error.
	items := NewTableItems()
	items.Add(TableItem{ItemID: "q1", Answer: "B", Task: "videomme", Duration: "short"})
	items.Add(TableItem{ItemID: "q2", Answer: "C", Task: "videomme"})
	res, err = importTable("sample_id,f8\nq1,B\nq2,A\n", "w.csv", TableOptions{Wide: true, Items: items})
	if err != nil || !*res.Records[0].Correct || *res.Records[1].Correct || res.Records[0].Task != "videomme" || res.Records[0].Duration != "short" {
		t.Errorf("--items: %v %+v", err, res)
	}
	if _, err := importTable("sample_id,answer,f8\nq1,D,B\n", "w.csv", TableOptions{Wide: true, Items: items}); err == nil || !strings.Contains(err.Error(), `answer "D" here, "B" in the items file`) {
		t.Errorf("answer disagreement: %v", err)
	}
	if _, err := importTable("sample_id,f8\nq9,B\n", "w.csv", TableOptions{Wide: true, Items: items}); err == nil || !strings.Contains(err.Error(), `item "q9" is not in the items file`) {
		t.Errorf("unknown item: %v", err)
	}
}

// TestTableStrict: what a table importer refuses, each error naming the file (and line) and the way out.
func TestTableStrict(t *testing.T) {
	cases := []struct {
		body, name string
		opt        TableOptions
		want       string
		sentinel   error
	}{
		{"sample_id,config,correct,colour\nq,f8,1,red\n", "a.csv", TableOptions{}, `unknown column(s) ["colour"]: map each to a field with --map FIELD=COLUMN`, record.ErrFormat},
		{"sample_id,config,verdict\nq,f8,1\n", "a.csv", TableOptions{}, `unknown column(s) ["verdict"]`, record.ErrFormat},
		{"sample_id,config\nq,f8\n", "a.csv", TableOptions{}, "no verdict: a long table needs a correct column", record.ErrFormat},
		{"config,correct\nf8,1\n", "a.csv", TableOptions{}, "no item column", record.ErrFormat},
		{"sample_id,correct\nq,1\n", "a.csv", TableOptions{}, "no config column: name the file's one config with --config ID", record.ErrFormat},
		{"sample_id,config,correct\nq,f8,maybe\n", "a.csv", TableOptions{}, `a.csv:2: import: invalid record: correct "maybe" is not a verdict`, record.ErrInvalid},
		{"sample_id,config,correct\nq,f8,1\nq,f8,0\n", "a.csv", TableOptions{}, `a.csv:3: import: duplicate record: item "q" config "f8" already on line 2`, record.ErrDuplicate},
		{"sample_id,config,frames,correct\nq,f8,8,1\nr,f8,16,0\n", "a.csv", TableOptions{}, `a.csv:3: import: conflicting config_meta: config "f8"`, record.ErrConflict},
		{"sample_id,id,config,correct\nq,1,f8,1\n", "a.csv", TableOptions{}, `columns "sample_id" and "id" both give item_id`, record.ErrFormat},
		{"sample_id,answer,f8,is_confused\nq,B,B,0\n", "w.csv", TableOptions{Wide: true}, `column "is_confused" holds no option letter and no reply in any row (numbers, true/false or nothing): if it is not a config's predictions, leave it out with --ignore is_confused`, record.ErrFormat},
		{"sample_id,f8\nq,B\n", "w.csv", TableOptions{Wide: true}, "no answer column: give the answers with --items", record.ErrFormat},
		{"sample_id,f8\nq,B\n", "w.csv", TableOptions{Wide: true, Map: map[string]string{"colour": "f8"}}, "colour is no field of a table", nil},
	}
	for _, c := range cases {
		_, err := importTable(c.body, c.name, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), c.name) || (c.sentinel != nil && !errors.Is(err, c.sentinel)) {
			t.Errorf("%q: %v, want %q", c.body, err, c.want)
		}
	}
	// --map and --ignore say what a column is.
	res, err := importTable("sample_id,config,verdict,colour\nq,f8,1,red\n", "a.csv", TableOptions{Map: map[string]string{"correct": "verdict"}, Ignore: []string{"colour"}})
	if err != nil || !*res.Records[0].Correct {
		t.Errorf("--map correct=verdict --ignore colour: %v", err)
	}
	res, err = importTable("sample_id,answer,f8,is_confused\nq,B,B,0\n", "w.csv", TableOptions{Wide: true, Ignore: []string{"is_confused"}})
	if err != nil || len(res.Records) != 1 {
		t.Errorf("--ignore is_confused: %v", err)
	}
	// --item-id names another column, --item-prefix namespaces the ids.
	res, err = importTable("sample_id,qid,config,correct\n0,001-1,f8,1\n", "a.csv", TableOptions{Options: Options{ItemKey: "question", ItemPrefix: "vm:"}})
	if err != nil || res.Records[0].ItemID != "vm:001-1" {
		t.Errorf("--item-id question --item-prefix: %v %+v", err, res)
	}
}
