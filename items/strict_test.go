package items

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

const vmmeRow = `{"video_id":"001","duration":"short","domain":"Knowledge","sub_category":"History","url":"https://www.youtube.com/watch?v=fFjv93ACGo8","videoID":"fFjv93ACGo8","question_id":"001-1","task_type":"Counting Problem","question":"How many?","options":["A. 1.","B. 2.","C. 3.","D. 4."],"answer":"C"}`

// refusal is a release an importer must refuse with an error naming the file and holding want.
type refusal struct{ name, format, file, body, want string }

// refuseImports writes each case's body to dir/file and imports it with the videos under videos.
func refuseImports(t *testing.T, dir, videos string, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		src := filepath.Join(dir, c.file)
		testenv.WriteFile(t, src, []byte(c.body))
		its, _, err := Import(src, ImportOptions{Format: c.format, Videos: videos})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), src) {
			t.Errorf("%s: imported %d items, %v (want an error naming %s and %q)", c.name, len(its), err, src, c.want)
		}
	}
}

// TestImportStrictSchemas: a release whose keys or columns the importer does not know, lacks a
// required one, holds a value of another type, or text that is not UTF-8 is refused with an error
// naming the file and the key (and the flag that maps it), never imported as something else (a
// renamed options column as open-ended items, ids that differ in an invalid byte as one id).
func TestImportStrictSchemas(t *testing.T) {
	dir, videos := importDir(t)
	mlvu := `{"video":"movie101_66.mp4","duration":246,"question":"What color?","candidates":["Yellow","Red"],"answer":"Yellow","question_type":"plotQA"}`
	refuseImports(t, dir, videos, []refusal{
		{"Video-MME options named otherwise", "videomme", "v.jsonl", strings.Replace(vmmeRow, `"options"`, `"choices"`, 1), `unknown key "choices"`},
		{"Video-MME without options", "videomme", "v.jsonl", strings.Replace(vmmeRow, `"options":["A. 1.","B. 2.","C. 3.","D. 4."],`, "", 1), `no "options"`},
		{"Video-MME options of another type", "videomme", "v.jsonl", strings.Replace(vmmeRow, `["A. 1.","B. 2.","C. 3.","D. 4."]`, `"A. 1. B. 2."`, 1), `"options" is not a list of strings`},
		{"MLVU candidates misspelt", "mlvu", "1_plotQA.json", "[" + strings.Replace(mlvu, `"candidates"`, `"candidate"`, 1) + "]", `unknown key "candidate"`},
		{"MLVU duration of another type", "mlvu", "1_plotQA.json", "[" + strings.Replace(mlvu, `246`, `"246 s"`, 1) + "]", `"duration" is not a number`},
		{"invalid UTF-8 in an id", "videomme", "v.jsonl", strings.Replace(vmmeRow, `"001-1"`, "\"001-1\xff\"", 1), "UTF-8"},
		{"an escaped lone surrogate in an id", "videomme", "v.jsonl", strings.Replace(vmmeRow, `"001-1"`, `"001-1\udc80"`, 1), "surrogate"},
		{"a key twice", "videomme", "v.jsonl", strings.Replace(vmmeRow, `"answer":"C"`, `"answer":"C","answer":"D"`, 1), "twice"},
		{"CSV ids that differ in an invalid byte", "csv", "c.csv", "item_id,video,question,answer\nq\xff,a.mkv,Q,free\nq\xfe,a.mkv,Q,free\n", "c.csv:2: not valid UTF-8"},
	})
	// The release as it is published (url, domain, sub_category are known keys) imports.
	src := filepath.Join(dir, "v.jsonl")
	testenv.WriteFile(t, src, []byte(vmmeRow))
	if its, _, err := Import(src, ImportOptions{Format: "videomme", Videos: videos}); err != nil || len(its) != 1 || len(its[0].Options) != 4 {
		t.Fatalf("the release itself: %+v %v", its, err)
	}
}

// TestImportPathsLeavingVideos: a video named by a release that climbs out of --video-dir (".." or an
// absolute path elsewhere) is listed as missing and its items left out, even where the file exists.
func TestImportPathsLeavingVideos(t *testing.T) {
	dir, videos := importDir(t)
	outside := filepath.Join(dir, "outside.mp4")
	testenv.WriteFile(t, outside, []byte("x"))
	src := filepath.Join(dir, "c.csv")
	testenv.WriteFile(t, src, []byte("item_id,video,question,answer\nin,a.mkv,Q,free\nup,../outside.mp4,Q,free\nabs,"+outside+",Q,free\n"))
	its, res, err := Import(src, ImportOptions{Format: "csv", Videos: videos})
	if err != nil || len(its) != 1 || its[0].ItemID != "in" || res.MissingItems != 2 || len(res.MissingVideos) != 1 {
		t.Fatalf("%+v %+v %v", its, res, err)
	}
	vm := filepath.Join(dir, "v.jsonl")
	testenv.WriteFile(t, vm, []byte(strings.Replace(vmmeRow, `"videoID":"fFjv93ACGo8"`, `"videoID":"../outside"`, 1)))
	if its, res, err := Import(vm, ImportOptions{Format: "videomme", Videos: videos}); err != nil || len(its) != 0 || res.MissingItems != 1 {
		t.Fatalf("videoID ../outside: %+v %+v %v", its, res, err)
	}
}

// TestImportMapIgnoreTemplates: --map reads a field the release names otherwise, --ignore leaves a key
// out, and a template no sweep accepts is refused at import.
func TestImportMapIgnoreTemplates(t *testing.T) {
	dir, videos := importDir(t)
	src := filepath.Join(dir, "v.jsonl")
	testenv.WriteFile(t, src, []byte(strings.Replace(strings.Replace(vmmeRow, `"options"`, `"choices"`, 1), `"url"`, `"link"`, 1)))
	its, _, err := Import(src, ImportOptions{Format: "videomme", Videos: videos, Map: map[string]string{"options": "choices"}, Ignore: []string{"link"}})
	if err != nil || len(its) != 1 || len(its[0].Options) != 4 {
		t.Fatalf("--map options=choices --ignore link: %+v %v", its, err)
	}
	for _, o := range []ImportOptions{
		{Map: map[string]string{"choices": "options"}},                      // not a field
		{Map: map[string]string{"options": "choices", "answer": "choices"}}, // two fields, one key
		{Map: map[string]string{"options": "choices"}, Ignore: []string{"choices"}},
	} {
		o.Format, o.Videos = "videomme", videos
		if _, _, err := Import(src, o); err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	csv := filepath.Join(dir, "c.csv")
	testenv.WriteFile(t, csv, []byte("item_id,video,question,answer,template\nq,a.mkv,Q,free,nonesuch\n"))
	if _, _, err := Import(csv, ImportOptions{Format: "csv", Videos: videos, Templates: []string{"generic", "mlvu", "videomme"}}); err == nil || !strings.Contains(err.Error(), `template "nonesuch"`) {
		t.Fatalf("an unknown template: %v", err)
	}
	testenv.WriteFile(t, csv, []byte("id,video,question,answer\nq,a.mkv,Q,free\n"))
	if its, _, err := Import(csv, ImportOptions{Format: "csv", Videos: videos, Map: map[string]string{"item_id": "id"}}); err != nil || len(its) != 1 {
		t.Fatalf("csv --map item_id=id: %+v %v", its, err)
	}
}

// TestImportStrictDialogue: the mlvu-gen and avsd formats (issue 26) are read as strictly: an unknown
// or misspelt key names itself and the flag (--map, --ignore), text must be UTF-8 without escaped lone
// surrogates, a key twice is refused.
func TestImportStrictDialogue(t *testing.T) {
	dir, videos := importDir(t)
	gen := `{"video":"a.mkv","duration":60,"question":"Describe it.","answer":"A man runs.","question_type":"summary"}`
	avsd := `{"type":"videos","dialogs":[{"image_id":"a","caption":"c","summary":"s","dialog":[{"question":"q","answer":"x"},{"question":"q2","answer":"y"}]}]}`
	refuseImports(t, dir, videos, []refusal{
		{"mlvu-gen answer misspelt", "mlvu-gen", "9_summary.json", "[" + strings.Replace(gen, `"answer"`, `"answr"`, 1) + "]", `unknown key "answr"`},
		{"mlvu-gen invalid UTF-8", "mlvu-gen", "9_summary.json", "[" + strings.Replace(gen, `A man`, "A m\xffan", 1) + "]", "UTF-8"},
		{"mlvu-gen a key twice", "mlvu-gen", "9_summary.json", "[" + strings.Replace(gen, `"question_type"`, `"video":"b.mkv","question_type"`, 1) + "]", "twice"},
		{"avsd an unknown dialog key", "avsd", "valid_set4DSTC7-AVSD.json", strings.Replace(avsd, `"summary"`, `"sumary"`, 1), `unknown key "sumary"`},
		{"avsd an unknown turn key", "avsd", "valid_set4DSTC7-AVSD.json", strings.Replace(avsd, `"answer":"y"`, `"answer":"y","answer_2":"z"`, 1), `turn 1: unknown key "answer_2"`},
		{"avsd an id in invalid UTF-8", "avsd", "valid_set4DSTC7-AVSD.json", strings.Replace(avsd, `"image_id":"a"`, "\"image_id\":\"a\xff\"", 1), "UTF-8"},
		{"avsd an escaped lone surrogate", "avsd", "valid_set4DSTC7-AVSD.json", strings.Replace(avsd, `"q2"`, `"q2\ud800"`, 1), "surrogate"},
	})
	// --map and --ignore read a release that names a field otherwise or carries a key to leave out.
	src := filepath.Join(dir, "9_summary.json")
	testenv.WriteFile(t, src, []byte("["+strings.Replace(gen, `"answer"`, `"reference"`, 1)+"]"))
	if its, _, err := Import(src, ImportOptions{Format: "mlvu-gen", Videos: videos, Map: map[string]string{"answer": "reference"}}); err != nil || len(its) != 1 || its[0].Answer != "A man runs." {
		t.Errorf("mlvu-gen --map answer=reference: %+v %v", its, err)
	}
	src = filepath.Join(dir, "valid_set4DSTC7-AVSD.json")
	testenv.WriteFile(t, src, []byte(strings.Replace(avsd, `"summary"`, `"extra":1,"summary"`, 1)))
	if its, _, err := Import(src, ImportOptions{Format: "avsd", Videos: filepath.Join(dir), Ignore: []string{"extra"}}); err != nil || len(its) != 1 {
		t.Errorf("avsd --ignore extra: %+v %v", its, err)
	}
}
