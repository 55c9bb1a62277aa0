package items

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

func importDir(t *testing.T) (dir, videos string) {
	t.Helper()
	dir = t.TempDir()
	videos = filepath.Join(dir, "videos")
	mustMkdir(t, filepath.Join(videos, "1_plotQA"))
	for _, n := range []string{"fFjv93ACGo8.mp4", "1_plotQA/movie101_66.mp4", "a.mkv"} {
		testenv.WriteFile(t, filepath.Join(videos, n), []byte("x"))
	}
	return dir, videos
}

// TestImportMLVU: a task file's answer text becomes its candidate's letter; videos are found in the
// task's folder; a generation task keeps the reference text; an answer that is no candidate is an error.
func TestImportMLVU(t *testing.T) {
	dir, videos := importDir(t)
	src := filepath.Join(dir, "1_plotQA.json")
	testenv.WriteFile(t, src, []byte(`[{"video":"movie101_66.mp4","duration":246,"question":"What color is the main male character in the video?","candidates":["Yellow","Red","Green","Blue"],"answer":"Yellow","question_type":"plotQA"},
{"video":"movie101_66.mp4","duration":246,"question":"Summarise.","answer":"A man walks.","question_type":"sub_scene"}]`))
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
	testenv.WriteFile(t, src, []byte(`[{"video":"movie101_66.mp4","question":"Q","candidates":["a","b"],"answer":"c","question_type":"plotQA"}]`))
	if _, _, err := Import(src, ImportOptions{Format: "mlvu", Videos: videos}); err == nil || !strings.Contains(err.Error(), "none of the candidates") {
		t.Fatalf("answer not a candidate: %v", err)
	}
}

// TestImportCSV: options as letter columns or as a JSON list; unknown columns and bad rows are errors
// naming the file and line.
func TestImportCSV(t *testing.T) {
	dir, videos := importDir(t)
	src := filepath.Join(dir, "items.csv")
	testenv.WriteFile(t, src, []byte("\xef\xbb\xbfitem_id,video,question,A,B,C,answer,category\nq1,a.mkv,Which?,x,y,z,B,Counting\nq2,a.mkv,Open?,,,,free text,\n"))
	items, _, err := Import(src, ImportOptions{Format: "csv", Videos: videos})
	if err != nil || len(items) != 2 || items[0].Options[1] != "B. y" || items[0].Answer != "B" || items[1].MultipleChoice() {
		t.Fatalf("%+v %v", items, err)
	}
	testenv.WriteFile(t, src, []byte("item_id,video,question,options,answer\nq1,a.mkv,Which?,\"[\"\"A. x\"\",\"\"B. y\"\"]\",A\n"))
	if items, _, err := Import(src, ImportOptions{Format: "csv", Videos: videos}); err != nil || len(items[0].Options) != 2 {
		t.Fatalf("options column: %+v %v", items, err)
	}
	for body, want := range map[string]string{
		"item_id,video,question,answer,colour\nq,a.mkv,Q,A,red\n":   `unknown column "colour"`,
		"item_id,video,question,A,B,answer\nq,a.mkv,Q,x,y,E\n":      "items.csv:2",
		"item_id,video,question,answer\nq,a.mkv,Q,A\nq,a.mkv,Q,A\n": "twice",
	} {
		testenv.WriteFile(t, src, []byte(body))
		if _, _, err := Import(src, ImportOptions{Format: "csv", Videos: videos}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (want %q)", body, err, want)
		}
	}
}

// TestImportVideoMMEJSON: Video-MME's release in its JSON form (an array or JSON lines) imports in
// every build, with or without the Parquet reader; a missing video is listed and its items left out.
func TestImportVideoMMEJSON(t *testing.T) {
	dir, videos := importDir(t)
	rows := `{"video_id":"001","duration":"short","videoID":"fFjv93ACGo8","question_id":"001-1","task_type":"Counting Problem","question":"How many?","options":["A. 1.","B. 2.","C. 3.","D. 4."],"answer":"C"}
{"video_id":"002","duration":"long","videoID":"nothere","question_id":"002-1","task_type":"OCR Problems","question":"What?","options":["A. x","B. y","C. z","D. w"],"answer":"A"}`
	for name, body := range map[string]string{"lines.jsonl": rows, "array.json": "[" + strings.Replace(rows, "}\n{", "},\n{", 1) + "]"} {
		src := filepath.Join(dir, name)
		testenv.WriteFile(t, src, []byte(body))
		items, res, err := Import(src, ImportOptions{Format: "videomme", Videos: videos})
		if err != nil || len(items) != 1 || items[0].ItemID != "001-1" || items[0].Answer != "C" || res.MissingItems != 1 {
			t.Fatalf("%s: %+v %+v %v", name, items, res, err)
		}
		// Video-MME's items name its template (official prompt and parser), unless told otherwise.
		if items[0].Template != "videomme" {
			t.Errorf("%s: template %q, want videomme", name, items[0].Template)
		}
		for opt, want := range map[string]string{TemplateNone: "", "generic": "generic"} {
			its, _, err := Import(src, ImportOptions{Format: "videomme", Videos: videos, Template: opt})
			if err != nil || its[0].Template != want {
				t.Errorf("%s --template %s: %+v %v, want template %q", name, opt, its, err, want)
			}
		}
		if _, _, err := Import(src, ImportOptions{Format: "videomme", Videos: videos, Template: "bogus", Templates: []string{"generic", "videomme"}}); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
			t.Errorf("%s --template bogus: %v", name, err)
		}
	}
}

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
