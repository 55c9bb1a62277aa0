package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func importDir(t *testing.T) (dir, videos string) {
	t.Helper()
	dir = t.TempDir()
	videos = filepath.Join(dir, "videos")
	os.MkdirAll(filepath.Join(videos, "1_plotQA"), 0o755)
	for _, n := range []string{"fFjv93ACGo8.mp4", "1_plotQA/movie101_66.mp4", "a.mkv"} {
		os.WriteFile(filepath.Join(videos, n), []byte("x"), 0o644)
	}
	return dir, videos
}

// TestImportVideoMME: Video-MME's release as parquet (written here by parquet-go with the release's
// schema: options a list of strings) and as JSON; a missing video is listed and its items left out.
func TestImportVideoMME(t *testing.T) {
	dir, videos := importDir(t)
	rows := []videoMMERow{
		{VideoID: "001", Duration: "short", Domain: "Knowledge", SubCategory: "Humanity & History", VideoFile: "fFjv93ACGo8",
			QuestionID: "001-1", TaskType: "Counting Problem", Question: "How many?", Options: []string{"A. 1.", "B. 2.", "C. 3.", "D. 4."}, Answer: "C"},
		{VideoID: "002", Duration: "long", VideoFile: "nothere", QuestionID: "002-1", TaskType: "OCR Problems",
			Question: "What?", Options: []string{"A. x", "B. y", "C. z", "D. w"}, Answer: "A"},
	}
	pq := filepath.Join(dir, "test-00000-of-00001.parquet")
	if err := parquet.WriteFile(pq, rows); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "videomme.json")
	os.WriteFile(js, []byte(`[{"video_id":"001","duration":"short","videoID":"fFjv93ACGo8","question_id":"001-1","task_type":"Counting Problem","question":"How many?","options":["A. 1.","B. 2.","C. 3.","D. 4."],"answer":"C"},
{"video_id":"002","duration":"long","videoID":"nothere","question_id":"002-1","task_type":"OCR Problems","question":"What?","options":["A. x","B. y","C. z","D. w"],"answer":"A"}]`), 0o644)
	for _, src := range []string{pq, js} {
		items, res, err := Import(src, ImportOptions{Format: "videomme", Videos: videos})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 1 || res.MissingItems != 1 || len(res.MissingVideos) != 1 || !strings.HasSuffix(res.MissingVideos[0], "nothere.mp4") {
			t.Fatalf("%s: %d items, %+v", src, len(items), res)
		}
		it := items[0]
		if it.ItemID != "001-1" || it.Video != filepath.Join(videos, "fFjv93ACGo8.mp4") || it.Category != "Counting Problem" || it.Duration != "short" || it.Answer != "C" || len(it.Options) != 4 {
			t.Fatalf("%s: %+v", src, it)
		}
		keep, res2, err := Import(src, ImportOptions{Format: "videomme", Videos: videos, KeepMissing: true})
		if err != nil || len(keep) != 2 || res2.MissingItems != 1 {
			t.Fatalf("--keep-missing: %d %+v %v", len(keep), res2, err)
		}
	}
	// Written and read back as canonical items.
	items, _, _ := Import(pq, ImportOptions{Format: "videomme", Videos: videos})
	out := filepath.Join(dir, "items.jsonl")
	if err := WriteItems(out, items); err != nil {
		t.Fatal(err)
	}
	back, err := ReadItems(out)
	if err != nil || len(back.Items) != 1 || back.Items[0].Video != items[0].Video {
		t.Fatalf("read back: %+v %v", back, err)
	}
	// Not a Video-MME file: an error naming it.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`[{"foo":1}]`), 0o644)
	if _, _, err := Import(bad, ImportOptions{Format: "videomme", Videos: videos}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("bad file: %v", err)
	}
	junk := filepath.Join(dir, "junk.parquet")
	os.WriteFile(junk, []byte("PAR1 this is not a parquet file PAR1"), 0o644)
	if _, _, err := Import(junk, ImportOptions{Format: "videomme", Videos: videos}); err == nil || !strings.Contains(err.Error(), junk) {
		t.Fatalf("junk parquet: %v", err)
	}
}

// TestImportMLVU: a task file's answer text becomes its candidate's letter; videos are found in the
// task's folder; a generation task keeps the reference text; an answer that is no candidate is an error.
func TestImportMLVU(t *testing.T) {
	dir, videos := importDir(t)
	src := filepath.Join(dir, "1_plotQA.json")
	os.WriteFile(src, []byte(`[{"video":"movie101_66.mp4","duration":246,"question":"What color is the main male character in the video?","candidates":["Yellow","Red","Green","Blue"],"answer":"Yellow","question_type":"plotQA"},
{"video":"movie101_66.mp4","duration":246,"question":"Summarise.","answer":"A man walks.","question_type":"sub_scene"}]`), 0o644)
	items, res, err := Import(src, ImportOptions{Format: "mlvu", Videos: videos})
	if err != nil || len(res.MissingVideos) != 0 || len(items) != 2 {
		t.Fatalf("%v %+v %v", items, res, err)
	}
	mc, gen := items[0], items[1]
	if mc.Answer != "A" || mc.Options[0] != "A. Yellow" || mc.Video != filepath.Join(videos, "1_plotQA", "movie101_66.mp4") || mc.Task != "mlvu/plotQA" || *mc.DurationS != 246 || mc.Template != "mlvu" {
		t.Fatalf("mc %+v", mc)
	}
	if gen.MultipleChoice() || gen.Answer != "A man walks." {
		t.Fatalf("generation %+v", gen)
	}
	os.WriteFile(src, []byte(`[{"video":"movie101_66.mp4","question":"Q","candidates":["a","b"],"answer":"c","question_type":"plotQA"}]`), 0o644)
	if _, _, err := Import(src, ImportOptions{Format: "mlvu", Videos: videos}); err == nil || !strings.Contains(err.Error(), "none of the candidates") {
		t.Fatalf("answer not a candidate: %v", err)
	}
}

// TestImportCSV: options as letter columns or as a JSON list; unknown columns and bad rows are errors
// naming the file and line.
func TestImportCSV(t *testing.T) {
	dir, videos := importDir(t)
	src := filepath.Join(dir, "items.csv")
	os.WriteFile(src, []byte("\xef\xbb\xbfitem_id,video,question,A,B,C,answer,category\nq1,a.mkv,Which?,x,y,z,B,Counting\nq2,a.mkv,Open?,,,,free text,\n"), 0o644)
	items, _, err := Import(src, ImportOptions{Format: "csv", Videos: videos})
	if err != nil || len(items) != 2 || items[0].Options[1] != "B. y" || items[0].Answer != "B" || items[1].MultipleChoice() {
		t.Fatalf("%+v %v", items, err)
	}
	os.WriteFile(src, []byte("item_id,video,question,options,answer\nq1,a.mkv,Which?,\"[\"\"A. x\"\",\"\"B. y\"\"]\",A\n"), 0o644)
	if items, _, err := Import(src, ImportOptions{Format: "csv", Videos: videos}); err != nil || len(items[0].Options) != 2 {
		t.Fatalf("options column: %+v %v", items, err)
	}
	for body, want := range map[string]string{
		"item_id,video,question,answer,colour\nq,a.mkv,Q,A,red\n":   `unknown column "colour"`,
		"item_id,video,question,A,B,answer\nq,a.mkv,Q,x,y,E\n":      "items.csv:2",
		"item_id,video,question,answer\nq,a.mkv,Q,A\nq,a.mkv,Q,A\n": "twice",
	} {
		os.WriteFile(src, []byte(body), 0o644)
		if _, _, err := Import(src, ImportOptions{Format: "csv", Videos: videos}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (want %q)", body, err, want)
		}
	}
}
