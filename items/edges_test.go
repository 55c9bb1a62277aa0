package items

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestImportRefusesWhatTheSweepMisreads: what a sweep would refuse or misread is refused at import,
// naming the file (and line or row) and the field: options present but empty (Video-MME's
// "options": [] once became an open-ended item whose reference is "A", so a model answering "A"
// scored 1), a CSV duration_s of Inf (once `json: unsupported value: +Inf` without file, line or
// field), and an item whose line would be over MaxLine (once written with exit 0, then refused by
// the sweep).
func TestImportRefusesWhatTheSweepMisreads(t *testing.T) {
	dir, videos := importDir(t)
	mlvu := `{"video":"movie101_66.mp4","duration":246,"question":"What color?","candidates":["Yellow","Red"],"answer":"Yellow","question_type":"plotQA"}`
	long := strings.Repeat("x", MaxLine)
	refuseImports(t, dir, videos, []refusal{
		{"Video-MME options []", "videomme", "v.jsonl", strings.Replace(vmmeRow, `["A. 1.","B. 2.","C. 3.","D. 4."]`, `[]`, 1), `row 1: "options" is an empty list`},
		{"MLVU candidates []", "mlvu", "1_plotQA.json", "[" + strings.Replace(mlvu, `["Yellow","Red"]`, `[]`, 1) + "]", `"candidates" is an empty list`},
		{"CSV options []", "csv", "c.csv", "item_id,video,question,options,answer\nq,a.mkv,Q,[],A\n", `c.csv:2: options "[]" is an empty list`},
		{"CSV duration_s Inf", "csv", "c.csv", "item_id,video,question,answer,duration_s\nq,a.mkv,Q,free,Inf\n", "c.csv:2: duration_s Inf: not finite"},
		{"CSV duration_s NaN", "csv", "c.csv", "item_id,video,question,answer,duration_s\nq,a.mkv,Q,free,NaN\n", "c.csv:2: duration_s NaN: not a number"},
		{"CSV duration_s -1", "csv", "c.csv", "item_id,video,question,answer,duration_s\nq,a.mkv,Q,free,-1\n", "c.csv:2: duration_s -1: out of range"},
		{"CSV a question over the line limit", "csv", "c.csv", "item_id,video,question,answer\nq,a.mkv," + long + ",free\n", `item "q": its line would be`},
		{"Video-MME a question over the line limit", "videomme", "v.jsonl", strings.Replace(vmmeRow, `"How many?"`, `"`+long+`"`, 1), "line limit of an items file"},
	})
	// Just under the limit imports, and the sweep's reader takes what Write wrote.
	src := filepath.Join(dir, "ok.csv")
	testenv.WriteFile(t, src, []byte("item_id,video,question,answer\nq,a.mkv,"+long[:MaxLine-4096]+",free\n"))
	its, _, err := Import(src, ImportOptions{Format: "csv", Videos: videos})
	if err != nil || len(its) != 1 {
		t.Fatalf("under the limit: %v", err)
	}
	out := filepath.Join(dir, "ITEMS.jsonl")
	if err := Write(out, its); err != nil {
		t.Fatal(err)
	}
	if f, err := Read(out); err != nil || len(f.Items) != 1 {
		t.Fatalf("the sweep's reader: %v", err)
	}
	// Write itself refuses a line Read would refuse, and writes nothing.
	its[0].Question = long
	bad := filepath.Join(dir, "BAD.jsonl")
	if err := Write(bad, its); err == nil || !strings.Contains(err.Error(), "line limit") {
		t.Fatalf("Write of an over-long item: %v", err)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Fatal("Write left a file")
	}
}

// TestItemsFileRefusesEmptyOptions: an items file (the sweep's input) holding "options": [] or a
// duration_s out of range is refused naming the line; "options": null is an open-ended item.
func TestItemsFileRefusesEmptyOptions(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"item_id":"a","video":"v.mp4","question":"Q","options":[],"answer":"A"}`:    `:1: bad items file: item "a": options is an empty list`,
		`{"item_id":"a","video":"v.mp4","question":"Q","options":[ ],"answer":"A"}`:   "options is an empty list",
		`{"item_id":"a","video":"v.mp4","question":"Q","answer":"A","duration_s":-1}`: "duration_s -1: out of range",
	} {
		p := filepath.Join(dir, "items.jsonl")
		testenv.WriteFile(t, p, []byte(body+"\n"))
		if _, err := Read(p); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	p := filepath.Join(dir, "items.jsonl")
	testenv.WriteFile(t, p, []byte(`{"item_id":"a","video":"v.mp4","question":"Q","options":null,"answer":"free"}`+"\n"))
	if f, err := Read(p); err != nil || f.Items[0].MultipleChoice() {
		t.Errorf("options null: %v", err)
	}
	inf := math.Inf(1)
	it := Item{ItemID: "a", Video: "v", Question: "Q", Answer: "free", DurationS: &inf}
	if err := it.Validate(); err == nil || !strings.Contains(err.Error(), "duration_s +Inf: not finite") {
		t.Errorf("Validate duration_s +Inf: %v", err)
	}
}
