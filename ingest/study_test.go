package ingest

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// studyPerItem is the fixture in the study's released per_item.csv schema (testdata/study, made by
// make_fixture.py from data of our own making).
const studyPerItem = "../testdata/study/labels/per_item.csv"

// TestStudyPerItemImports (issue 39): the study's documented per_item.csv imports with no option at
// all: sample_id, split, frame_count, pixel_count, predicted_option, ground_truth_option are known
// columns; the four splits share ids and are kept apart by task; every config carries its frames and
// pixels (text only for textonly); source_tag and protocol_note stay on each record as its origin.
func TestStudyPerItemImports(t *testing.T) {
	f, err := os.Open(studyPerItem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Table(f, studyPerItem, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type meta struct{ frames, maxPixels int }
	want := map[string]meta{"16f_151k": {16, 151200}, "32f_151k": {32, 151200}, "64f_76k": {64, 75600}, "128f_input224": {128, 224 * 224}}
	tasks := map[string]map[string]bool{} // item → its tasks
	models, origins := map[string]bool{}, map[string]bool{}
	for _, r := range res.Records {
		models[r.Model] = true
		if tasks[r.ItemID] == nil {
			tasks[r.ItemID] = map[string]bool{}
		}
		tasks[r.ItemID][r.Task] = true
		m := r.ConfigMeta
		if r.Config == "textonly" {
			if m == nil || m.TextOnly == nil || !*m.TextOnly || *m.Frames != 0 || m.MaxPixels != nil {
				t.Fatalf("%s %s: textonly config_meta %+v", r.ItemID, r.Task, m)
			}
		} else if w, ok := want[r.Config]; !ok || m == nil || m.Frames == nil || *m.Frames != w.frames || m.MaxPixels == nil || *m.MaxPixels != w.maxPixels || m.TextOnly != nil {
			t.Fatalf("%s %s %s: config_meta %+v, want %+v", r.ItemID, r.Task, r.Config, m, w)
		}
		if r.Origin == nil || !strings.HasPrefix(r.Origin.SourceTag, "release_v") {
			t.Fatalf("%s: origin %+v", r.ItemID, r.Origin)
		}
		origins[r.Origin.ProtocolNote] = true
		if r.Correct == nil || r.Answer == "" || (r.Prediction == "") != r.Unparsed {
			t.Fatalf("%s: verdict %+v", r.ItemID, r)
		}
	}
	if len(res.Records) != 2308 || len(models) != 4 || len(tasks["001-1"]) != 2 || len(tasks["009-1"]) != 4 {
		t.Fatalf("%d records, %d models, 001-1 in %v, 009-1 in %v", len(res.Records), len(models), tasks["001-1"], tasks["009-1"])
	}
	if !origins["LLaVA context cap: frames subsampled to 32"] || !origins["fallback input size 224x224"] || !origins[""] {
		t.Errorf("protocol notes: %v", origins)
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "correct column is not") || strings.Contains(n, "no frame budget") {
			t.Errorf("note: %s", n)
		}
	}
	// The records round-trip: written and read back, the origin and every field stay.
	var sb strings.Builder
	if err := record.Write(&sb, res.Records); err != nil {
		t.Fatal(err)
	}
	back, err := record.Read(strings.NewReader(sb.String()), "r.jsonl")
	if err != nil || len(back) != len(res.Records) || *back[7].Origin != *res.Records[7].Origin {
		t.Fatalf("round trip: %v", err)
	}
}

// TestSplitsShareIDs (issue 39): an item is (task, item id). With a task (split) column the same id in
// two splits is two items, in long and wide tables; the same (model, task, item, config) twice is
// still a duplicate. An items file that has an id in two tasks matches rows by their task (a column or
// --task); a row that names none is an error saying so.
func TestSplitsShareIDs(t *testing.T) {
	res, err := importTable("sample_id,split,config,correct\n001-1,V1,f8,1\n001-1,V2,f8,0\n", "s.csv", TableOptions{})
	if err != nil || len(res.Records) != 2 || res.Records[1].Task != "V2" {
		t.Fatalf("two splits: %v %+v", err, res)
	}
	_, err = importTable("sample_id,split,config,correct\n001-1,V1,f8,1\n001-1,V2,f8,0\n001-1,V2,f8,1\n", "s.csv", TableOptions{})
	if err == nil || !errors.Is(err, record.ErrDuplicate) || !strings.Contains(err.Error(), `s.csv:4: import: duplicate record: item "001-1" (task "V2") config "f8" already on line 3`) {
		t.Fatalf("a duplicate within a split: %v", err)
	}
	res, err = importTable("sample_id,split,answer,f8\n001-1,V1,A,A\n001-1,V2,B,A\n", "w.csv", TableOptions{Wide: true})
	if err != nil || len(res.Records) != 2 || !*res.Records[0].Correct || *res.Records[1].Correct {
		t.Fatalf("wide, two splits: %v %+v", err, res)
	}
	items := NewTableItems()
	for _, it := range []TableItem{{ItemID: "001-1", Task: "V1", Answer: "A"}, {ItemID: "001-1", Task: "V2", Answer: "B"}, {ItemID: "002-1", Task: "V2", Answer: "C"}} {
		if !items.Add(it) {
			t.Fatalf("%+v refused", it)
		}
	}
	if items.Add(TableItem{ItemID: "001-1", Task: "V2", Answer: "D"}) {
		t.Fatal("(task, id) twice accepted")
	}
	res, err = importTable("sample_id,f8\n001-1,B\n002-1,C\n", "w.csv", TableOptions{Wide: true, Items: items, Options: Options{Task: "V2"}})
	if err != nil || !*res.Records[0].Correct || res.Records[0].Task != "V2" || !*res.Records[1].Correct {
		t.Fatalf("--task V2: %v %+v", err, res)
	}
	_, err = importTable("sample_id,f8\n001-1,B\n", "w.csv", TableOptions{Wide: true, Items: items})
	if err == nil || !strings.Contains(err.Error(), `w.csv:2: import: invalid record: item "001-1" is in 2 tasks of the items file (V1, V2): name the row's task with a task (split) column or --task`) {
		t.Fatalf("ambiguous id: %v", err)
	}
	res, err = importTable("sample_id,f8\n002-1,C\n", "w.csv", TableOptions{Wide: true, Items: items})
	if err != nil || res.Records[0].Task != "V2" {
		t.Fatalf("an id of one task: %v %+v", err, res)
	}
	_, err = importTable("sample_id,f8\n002-1,C\n", "w.csv", TableOptions{Wide: true, Items: items, Options: Options{Task: "V1"}})
	if err == nil || !strings.Contains(err.Error(), `item "002-1" of task "V1" is not in the items file (--items), which has it in task(s) V2`) {
		t.Fatalf("an id of another task: %v", err)
	}
}

// TestConfigNames (issue 39): the budgets config names carry: the study's {N}f_{K}k and
// {N}f_input{S}, f{N}_…, frames_{N}_…, the text-only names (textonly, no_visual, blind, text), and
// every form accepted before; a name with no budget (or one out of range) gives none.
func TestConfigNames(t *testing.T) {
	type m struct{ frames, maxPixels, side int }
	for name, want := range map[string]m{
		"16f_151k": {16, 151000, 0}, "64f_76k": {64, 76000, 0}, "128f_input224": {128, 0, 224}, "16f_448x448": {16, 0, 448},
		"f16_uniform": {16, 0, 0}, "frames_16_seed3": {16, 0, 0}, "64frame_subs": {64, 0, 0}, "F32-dense": {32, 0, 0},
		"16": {16, 0, 0}, "f16": {16, 0, 0}, "16f": {16, 0, 0}, "16frame": {16, 0, 0}, "16frames": {16, 0, 0},
		"frames16": {16, 0, 0}, "frames_16": {16, 0, 0}, "nframe16": {16, 0, 0}, "131072f": {131072, 0, 0},
	} {
		c := configFromName(name)
		if c == nil || *c.Frames != want.frames || (c.MaxPixels != nil) != (want.maxPixels > 0) || (c.Width != nil) != (want.side > 0) ||
			(c.MaxPixels != nil && *c.MaxPixels != want.maxPixels) || (c.Width != nil && (*c.Width != want.side || *c.Height != want.side)) || c.TextOnly != nil {
			t.Errorf("%s: %+v, want %+v", name, c, want)
		}
	}
	for _, name := range []string{"textonly", "no_visual", "NoVisual", "no-video", "blind", "text", "text-only", "Text_Only", "f0", "0f"} {
		if c := configFromName(name); c == nil || !*c.TextOnly || *c.Frames != 0 {
			t.Errorf("%s: %+v, want text only", name, c)
		}
	}
	for _, name := range []string{"uniform", "1fps", "2fps_448", "16_uniform", "131073f", "999999f", "16f_9999999k", "16f_input70000", "f0_x", "baseline", "16x"} {
		if c := configFromName(name); c != nil {
			t.Errorf("%s: %+v, want no budget", name, c)
		}
	}
}

// TestConfigMetaFlags (issue 39): --config-meta and its side table give configs their budget in wide
// and long tables alike; they win over a name, must agree with a row's columns, are ranged, and must
// name configs the table has. A config left without a budget makes a note that names the flags.
func TestConfigMetaFlags(t *testing.T) {
	c, m, err := ParseConfigMeta("16f_151k=frames:16,max_pixels:151200")
	if err != nil || c != "16f_151k" || *m.Frames != 16 || *m.MaxPixels != 151200 {
		t.Fatalf("%v %s %+v", err, c, m)
	}
	if _, m, err = ParseConfigMeta("blind=text_only:true"); err != nil || !*m.TextOnly || *m.Frames != 0 {
		t.Fatalf("text_only: %v %+v", err, m)
	}
	if _, m, err = ParseConfigMeta("a=frames:8,width:448,height:336"); err != nil || *m.Width != 448 || *m.Height != 336 {
		t.Fatalf("size: %v %+v", err, m)
	}
	for _, bad := range []string{"=frames:8", "a=", "a", "a=frames", "a=frames:8,frames:9", "a=fps:2", "a=frames:131073", "a=frames:-1",
		"a=frames:8,width:448", "a=width:0,height:8", "a=frames:8,max_pixels:4294967297", "a=text_only:true,frames:8", "a=text_only:yes,max_pixels:9",
		"a=frames:0,text_only:false", "a=frames:1e99", "a=frames:NaN"} {
		if _, _, err := ParseConfigMeta(bad); err == nil || !strings.HasPrefix(err.Error(), "--config-meta") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	over := map[string]*record.ConfigMeta{}
	for _, s := range []string{"base=frames:16,max_pixels:151200", "long=frames:64,max_pixels:75600", "none=text_only:true"} {
		c, m, _ := ParseConfigMeta(s)
		over[c] = m
	}
	wide := "sample_id,answer,none,base,long,16f_151k\nq1,B,B,B,A,B\n"
	res, err := importTable(wide, "w.csv", TableOptions{Wide: true, ConfigMeta: over})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*record.ConfigMeta{}
	for _, r := range res.Records {
		by[r.Config] = r.ConfigMeta
	}
	if *by["base"].Frames != 16 || *by["long"].MaxPixels != 75600 || !*by["none"].TextOnly || *by["16f_151k"].MaxPixels != 151000 ||
		!strings.Contains(strings.Join(res.Notes, "\n"), "config_meta from --config-meta: base, long, none") {
		t.Errorf("wide --config-meta: %+v %q", by, res.Notes)
	}
	// The notes of a config with no budget name the flags that give one.
	res, err = importTable("sample_id,answer,baseline,16f\nq1,B,B,A\n", "w.csv", TableOptions{Wide: true})
	if err != nil || !strings.Contains(strings.Join(res.Notes, "\n"), "configs baseline name no frame budget: their cost is unknown, and every metric that orders configs is undefined (give each its budget with --config-meta CONFIG=frames:N") || res.Records[0].ConfigMeta != nil {
		t.Errorf("no budget: %v %q", err, res.Notes)
	}
	// Long: --config-meta fills a config with no columns, agrees with columns, or is an error.
	long := "sample_id,config,frames,correct\nq1,base,,1\nq2,base,,0\nq1,long,64,1\nq1,none,,0\n"
	res, err = importTable(long, "l.csv", TableOptions{ConfigMeta: over})
	if err != nil || *res.Records[0].ConfigMeta.MaxPixels != 151200 || *res.Records[2].ConfigMeta.MaxPixels != 75600 {
		t.Fatalf("long --config-meta: %v %+v", err, res)
	}
	_, err = importTable("sample_id,config,frames,correct\nq1,long,32,1\n", "l.csv", TableOptions{ConfigMeta: over})
	if err == nil || !strings.Contains(err.Error(), `l.csv:2: import: invalid record: config "long": frames 32 in the row's columns, 64 by --config-meta`) {
		t.Errorf("disagreement: %v", err)
	}
	_, err = importTable("sample_id,answer,f8\nq1,B,B\n", "w.csv", TableOptions{Wide: true, ConfigMeta: over})
	if err == nil || !errors.Is(err, ErrBadArgs) || !strings.Contains(err.Error(), "--config-meta names config(s) base, long, none, which the table does not have (configs: f8)") {
		t.Errorf("unknown config: %v", err)
	}
	if _, err := importTable(wide, "w.csv", TableOptions{Wide: true, Options: Options{Meta: &record.ConfigMeta{Frames: ip(8)}}}); err == nil || !strings.Contains(err.Error(), "give each its budget with --config-meta") {
		t.Errorf("--frames with --wide: %v", err)
	}
	// The side table: any table format, the same keys (and aliases, size), ranged.
	got, err := ReadConfigMetaTable(strings.NewReader("config,frame_count,pixel_count,size,text_only\nbase,16,151200,,\nsq,8,,448x448,\nnone,,,,true\n"), "m.csv")
	if err != nil || *got["base"].MaxPixels != 151200 || *got["sq"].Width != 448 || !*got["none"].TextOnly {
		t.Fatalf("side table: %v %+v", err, got)
	}
	for body, want := range map[string]string{
		"config,frames,colour\na,8,red\n":     `unknown column "colour"`,
		"frames\n8\n":                         "no config column",
		"config,frames\na,8\na,16\n":          `m.csv:3: import: duplicate record: config "a" twice`,
		"config,frames\na,999999999999\n":     `m.csv:2: import: invalid record: config "a": frames 999999999999: out of range (want 0..131072)`,
		"config,frames,width\na,8,448\n":      "width and height go together",
		"config,frames\na,8\nb,16,extra\n":    "m.csv:3: import: syntax error: csv row has 3 cells, the header 2",
		"config,frames,text_only\na,8,true\n": "text_only with frames 8",
	} {
		if _, err := ReadConfigMetaTable(strings.NewReader(body), "m.csv"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// TestCorrectAgainstLetters: a table's correct column is its verdict (the study's, as a harness's is);
// rows whose letters say otherwise are counted in a note with the first line, never silently.
func TestCorrectAgainstLetters(t *testing.T) {
	res, err := importTable("sample_id,config,predicted_option,ground_truth_option,correct\nq1,f8,A,A,1\nq2,f8,B,A,1\nq3,f8,,A,0\nq4,f8,C,C,0\n", "c.csv", TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !*res.Records[1].Correct || *res.Records[3].Correct || !res.Records[2].Unparsed ||
		!strings.Contains(strings.Join(res.Notes, "\n"), "2 rows' correct column is not what their predicted and gold letters say (first: line 3): the table's verdicts are kept") {
		t.Errorf("%+v %q", res.Records, res.Notes)
	}
}
