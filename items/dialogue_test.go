package items

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// avsdValid is a valid-set file in AVSD's release form: two dialogs of three turns.
const avsdValid = `{"type": "videos", "dialogs": [
 {"image_id": "3MSZA", "caption": "A man opens a door.", "summary": "A man walks in.",
  "dialog": [{"question": "is there only one person ?", "answer": "yes , just one man ."},
             {"question": "what does he do first ?", "answer": "he opens the door ."},
             {"question": "does he say anything ?", "answer": "no , there is no sound ."}]},
 {"image_id": "YSE1G", "caption": "A woman eats.", "summary": "",
  "dialog": [{"question": "where is she ?", "answer": "in a kitchen ."},
             {"question": "what is she eating ?", "answer": "a sandwich ."},
             {"question": "is she sitting ?", "answer": "yes , at a table ."}]}]}`

// TestImportAVSD: the valid set's last turns (default) or every turn become open-ended items with the
// earlier turns as history; the test set's undisclosed last answers take the multi-reference file's
// answers (the first as answer, the rest as references) and are refused without it.
func TestImportAVSD(t *testing.T) {
	dir := t.TempDir()
	videos := filepath.Join(dir, "Charades_v1_480")
	mustMkdir(t, videos)
	testenv.WriteFile(t, filepath.Join(videos, "3MSZA.mp4"), []byte("x"))
	testenv.WriteFile(t, filepath.Join(videos, "YSE1G.mp4"), []byte("x"))
	src := filepath.Join(dir, "valid_set4DSTC7-AVSD.json")
	testenv.WriteFile(t, src, []byte(avsdValid))
	its, res, err := Import(src, ImportOptions{Format: "avsd", Videos: videos})
	if err != nil || len(its) != 2 || len(res.MissingVideos) != 0 {
		t.Fatalf("%+v %+v %v", its, res, err)
	}
	it := its[0]
	if it.ItemID != "avsd-3MSZA-2" || it.Question != "does he say anything ?" || it.Answer != "no , there is no sound ." || it.MultipleChoice() ||
		len(it.History) != 2 || it.History[1] != (Turn{"what does he do first ?", "he opens the door ."}) || it.Video != filepath.Join(videos, "3MSZA.mp4") || it.Task != "avsd" || it.Template != "generic" {
		t.Fatalf("last turn: %+v", it)
	}
	all, _, err := Import(src, ImportOptions{Format: "avsd", Videos: videos, Turns: AVSDTurnsAll})
	if err != nil || len(all) != 6 || len(all[0].History) != 0 || len(all[4].History) != 1 || all[4].ItemID != "avsd-YSE1G-1" {
		t.Fatalf("every turn: %d items %v", len(all), err)
	}
	out := filepath.Join(dir, "items.jsonl")
	if err := Write(out, all); err != nil {
		t.Fatal(err)
	}
	back, err := Read(out)
	if err != nil || !slices.Equal(back.Items[5].History, all[5].History) {
		t.Fatalf("items file round trip: %v", err)
	}

	test := filepath.Join(dir, "test_set4DSTC7-AVSD.json")
	testenv.WriteFile(t, test, []byte(strings.Replace(avsdValid, `"no , there is no sound ."`, `"__UNDISCLOSED__"`, 1)))
	if _, _, err := Import(test, ImportOptions{Format: "avsd", Videos: videos}); err == nil || !strings.Contains(err.Error(), "--references") {
		t.Fatalf("undisclosed without references: %v", err)
	}
	refs := filepath.Join(dir, "test_set4DSTC7-AVSD_multiref.json")
	testenv.WriteFile(t, refs, []byte(`{"images": [{"id": 1, "name": "3MSZA_2"}], "annotations": [
		{"image_id": 1, "caption": "no , he is silent ."}, {"image_id": 1, "caption": "he says nothing ."}, {"image_id": 1, "caption": "no ."}]}`))
	got, _, err := Import(test, ImportOptions{Format: "avsd", Videos: videos, References: refs})
	if err != nil || got[0].Answer != "no , he is silent ." || !slices.Equal(got[0].References, []string{"he says nothing .", "no ."}) || got[1].References != nil {
		t.Fatalf("test set: %+v %v", got, err)
	}
	for body, want := range map[string]string{
		`{"dialog": []}`: `no "dialogs"`,
		`{"dialogs": [{"image_id": "3MSZA", "dialog": [{"question": "q"}]}]}`:                                                                "lacks question or answer",
		`{"dialogs": [{"image_id": "3MSZA", "dialog": [{"question": "q", "answer": "__UNDISCLOSED__"}, {"question": "q", "answer": "a"}]}]}`: "not the last",
		`[1, 2]`: "not AVSD",
	} {
		testenv.WriteFile(t, src, []byte(body))
		if _, _, err := Import(src, ImportOptions{Format: "avsd", Videos: videos}); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "valid_set4DSTC7") {
			t.Errorf("%s: %v (want %q)", body, err, want)
		}
	}
}

// TestImportMLVUGen: MLVU's generation tasks (sub-scene captioning, summaries) become open-ended
// items with the reference text as answer; a multiple-choice row or a missing answer is an error.
func TestImportMLVUGen(t *testing.T) {
	dir, videos := importDir(t)
	src := filepath.Join(dir, "8_sub_scene.json")
	testenv.WriteFile(t, src, []byte(`[{"video": "movie101_66.mp4", "duration": 246, "question": "Describe the scene where the man runs.", "answer": "A man in a red coat runs down a street.", "question_type": "subPlot"}]`))
	its, _, err := Import(src, ImportOptions{Format: "mlvu-gen", Videos: videos})
	if err != nil || len(its) != 1 {
		t.Fatal(its, err)
	}
	it := its[0]
	if it.ItemID != "mlvu-8_sub_scene-0" || it.MultipleChoice() || it.Answer != "A man in a red coat runs down a street." || it.Task != "mlvu/subPlot" ||
		it.Video != filepath.Join(videos, "1_plotQA", "movie101_66.mp4") || *it.DurationS != 246 {
		t.Fatalf("%+v", it)
	}
	for body, want := range map[string]string{
		`[{"video": "a.mkv", "question": "Q", "answer": "x", "candidates": ["x", "y"], "question_type": "plotQA"}]`: "multiple-choice",
		`[{"video": "a.mkv", "question": "Q", "question_type": "summary"}]`:                                         `no "answer"`,
		`[{"video": "a.mkv", "question": "Q", "answer": "x"}]`:                                                      `no "question_type"`,
	} {
		testenv.WriteFile(t, src, []byte(body))
		if _, _, err := Import(src, ImportOptions{Format: "mlvu-gen", Videos: videos}); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "row 1") {
			t.Errorf("%s: %v (want %q)", body, err, want)
		}
	}
}

// TestItemDialogueFields: history turns need both sides; references are for open-ended items.
func TestItemDialogueFields(t *testing.T) {
	base := `{"item_id":"d","video":"v.mp4","question":"Q?","answer":"a"`
	for body, want := range map[string]string{
		base + `,"history":[{"question":"q","answer":""}]}`:                                                         "history turn 1",
		`{"item_id":"d","video":"v.mp4","question":"Q?","answer":"A","options":["A. x","B. y"],"references":["b"]}`: "open-ended",
		base + `,"references":["  "]}`:                                                                              "reference 1",
	} {
		if _, err := Parse(strings.NewReader(body), "d.jsonl"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v (want %q)", body, err, want)
		}
	}
	// Wrong types, invalid UTF-8, an escaped lone surrogate and a key twice are refused naming the
	// file, the line and the field.
	for body, want := range map[string]string{
		base + `,"history":"q: a"}`:                                        "history",
		base + `,"history":[{"question":1,"answer":"b"}]}`:                 "history",
		base + `,"references":"b"}`:                                        "references",
		base + `,"references":[1]}`:                                        "references",
		base + ",\"history\":[{\"question\":\"q\xff\",\"answer\":\"b\"}]}": "UTF-8",
		base + `,"references":["b\udc80"]}`:                                "surrogate",
		base + `,"references":["b"],"references":["c"]}`:                   `"references" twice`,
	} {
		if _, err := Parse(strings.NewReader("\n"+body), "d.jsonl"); err == nil || !strings.Contains(err.Error(), "d.jsonl:2") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v (want %q at d.jsonl:2)", body, err, want)
		}
	}
	f, err := Parse(strings.NewReader(base+`,"history":[{"question":"q","answer":"b"}],"references":["c"]}`), "d.jsonl")
	if err != nil || f.Items[0].History[0].Answer != "b" || f.Items[0].References[0] != "c" {
		t.Fatalf("%+v %v", f, err)
	}
}
