//go:build !noparquet

package items

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// videoMMERow is a row of Video-MME's release as its parquet has it (lmms-lab/Video-MME on the hub:
// videomme/test-*.parquet): the fixtures are written with it.
type videoMMERow struct {
	VideoID     string   `parquet:"video_id,optional" json:"video_id"`
	Duration    string   `parquet:"duration,optional" json:"duration"`
	Domain      string   `parquet:"domain,optional" json:"domain"`
	SubCategory string   `parquet:"sub_category,optional" json:"sub_category"`
	VideoFile   string   `parquet:"videoID,optional" json:"videoID"`
	QuestionID  string   `parquet:"question_id,optional" json:"question_id"`
	TaskType    string   `parquet:"task_type,optional" json:"task_type"`
	Question    string   `parquet:"question,optional" json:"question"`
	Options     []string `parquet:"options,list,optional" json:"options"`
	Answer      string   `parquet:"answer,optional" json:"answer"`
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
	testenv.WriteFile(t, js, []byte(`[{"video_id":"001","duration":"short","videoID":"fFjv93ACGo8","question_id":"001-1","task_type":"Counting Problem","question":"How many?","options":["A. 1.","B. 2.","C. 3.","D. 4."],"answer":"C"},
{"video_id":"002","duration":"long","videoID":"nothere","question_id":"002-1","task_type":"OCR Problems","question":"What?","options":["A. x","B. y","C. z","D. w"],"answer":"A"}]`))
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
	if err := Write(out, items); err != nil {
		t.Fatal(err)
	}
	back, err := Read(out)
	if err != nil || len(back.Items) != 1 || back.Items[0].Video != items[0].Video {
		t.Fatalf("read back: %+v %v", back, err)
	}
	// Not a Video-MME file: an error naming it.
	bad := filepath.Join(dir, "bad.json")
	testenv.WriteFile(t, bad, []byte(`[{"foo":1}]`))
	if _, _, err := Import(bad, ImportOptions{Format: "videomme", Videos: videos}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("bad file: %v", err)
	}
	junk := filepath.Join(dir, "junk.parquet")
	testenv.WriteFile(t, junk, []byte("PAR1 this is not a parquet file PAR1"))
	if _, _, err := Import(junk, ImportOptions{Format: "videomme", Videos: videos}); err == nil || !strings.Contains(err.Error(), junk) {
		t.Fatalf("junk parquet: %v", err)
	}
}
