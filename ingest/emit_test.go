package ingest

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// seekCounter is a file that counts the times it is put back to its start (a second pass).
type seekCounter struct {
	io.ReadSeeker
	rewinds int
}

func (s *seekCounter) Seek(off int64, whence int) (int64, error) {
	if off == 0 && whence == io.SeekStart {
		s.rewinds++
	}
	return s.ReadSeeker.Seek(off, whence)
}

// emitted imports with Options.Emit and returns what it emitted (each record as JSON, the form the
// command writes).
func emitted(t *testing.T, r io.Reader, path string, opt Options) (*Result, []string, error) {
	t.Helper()
	var out []string
	opt.Emit = func(rec *record.Record) error {
		b, err := json.Marshal(rec)
		out = append(out, string(b))
		return err
	}
	res, err := LmmsEval(r, path, opt)
	return res, out, err
}

func encoded(t *testing.T, recs []record.Record) []string {
	t.Helper()
	var out []string
	for i := range recs {
		b, err := json.Marshal(&recs[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// A samples file read twice (Options.Emit on a file) gives the records, aggregate, rescore counts and
// notes of the import that holds its records, for every fixture and the options that change them.
func TestLmmsEvalEmitReadsTwice(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "lmms-eval", "*_samples_*.jsonl"))
	if len(files) < 10 {
		t.Fatalf("fixtures: %v", files)
	}
	opts := map[string]Options{
		"plain":    {Config: "f32", Model: "m"},
		"rescore":  {Config: "f32", Rescore: RescoreText},
		"question": {Config: "f32", ItemKey: "question"},
		"meta":     vmeOpt,
	}
	compared := 0
	for _, path := range files {
		for name, opt := range opts {
			held, herr := func() (*Result, error) {
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				return LmmsEval(f, path, opt)
			}()
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			sc := &seekCounter{ReadSeeker: f}
			res, out, err := emitted(t, sc, path, opt)
			f.Close()
			if (herr == nil) != (err == nil) || (herr != nil && herr.Error() != err.Error()) {
				t.Errorf("%s %s: error %v, held %v", filepath.Base(path), name, err, herr)
				continue
			}
			if err != nil {
				if len(out) > 0 {
					t.Errorf("%s %s: refused, yet emitted %d records", filepath.Base(path), name, len(out))
				}
				continue
			}
			if sc.rewinds != 2 { // after counting the lines, and for the second pass
				t.Errorf("%s %s: %d rewinds, want 2 (two passes)", filepath.Base(path), name, sc.rewinds)
			}
			if res.Records != nil || res.Imported != len(held.Records) || res.Imported != len(out) {
				t.Errorf("%s %s: Records %d, Imported %d, emitted %d, held %d", filepath.Base(path), name, len(res.Records), res.Imported, len(out), len(held.Records))
			}
			if !reflect.DeepEqual(out, encoded(t, held.Records)) {
				t.Errorf("%s %s: emitted records differ from the held ones", filepath.Base(path), name)
			}
			if !reflect.DeepEqual(res.Aggregate, held.Aggregate) || !reflect.DeepEqual(res.Rescored, held.Rescored) || !reflect.DeepEqual(res.Notes, held.Notes) {
				t.Errorf("%s %s: result %+v %+v %v, held %+v %+v %v", filepath.Base(path), name, res.Aggregate, res.Rescored, res.Notes, held.Aggregate, held.Rescored, held.Notes)
			}
			// The check against the harness's results file reads the same from both.
			if rp, data, err := FindReport("lmms-eval", path); err == nil && rp != "" {
				want, werr := CheckReport("lmms-eval", rp, data, held, "")
				got, gerr := CheckReport("lmms-eval", rp, data, res, "")
				if !reflect.DeepEqual(got, want) || (werr == nil) != (gerr == nil) {
					t.Errorf("%s %s: check %+v %v, held %+v %v", filepath.Base(path), name, got, gerr, want, werr)
				}
				if got != nil && !strings.Contains(got.Message, "agrees") && name == "plain" {
					t.Errorf("%s: %s", filepath.Base(path), got.Message)
				}
			}
			compared++
		}
	}
	if compared < 30 {
		t.Errorf("only %d imports compared", compared)
	}
}

// A refused file emits nothing, whichever line refuses it: the first pass reads it all first.
func TestLmmsEvalEmitNothingWhenRefused(t *testing.T) {
	good := `{"doc_id": 0, "target": "A", "filtered_resps": "A", "exact_match": true}` + "\n"
	for _, tail := range []string{
		`{"doc_id": 0, "target": "A", "filtered_resps": "A", "exact_match": true}`, // a duplicate
		`{"doc_id": 9, "target": "A", "filtered_resps": "A"}`,                      // no verdict
		"{\"doc_id\": 9, \"target\": \"\xff\", \"filtered_resps\": \"A\", \"exact_match\": true}",
		`{"doc_id": 9,`,
	} {
		data := strings.Repeat(good, 1) + strings.ReplaceAll(good, `"doc_id": 0`, `"doc_id": 1`) + tail + "\n"
		held, herr := LmmsEval(strings.NewReader(data), "f.jsonl", vmeOpt)
		res, out, err := emitted(t, strings.NewReader(data), "f.jsonl", vmeOpt)
		if err == nil || herr == nil || err.Error() != herr.Error() || len(out) != 0 || res != nil || held != nil {
			t.Errorf("%q: error %v (held: %v), %d emitted", tail, err, herr, len(out))
		}
	}
}

// flipping serves one text until its second rewind (the first follows the line count) and another
// after it: a file rewritten between the passes.
type flipping struct {
	second  string
	r       *strings.Reader
	rewinds int
}

func (f *flipping) Read(p []byte) (int, error) { return f.r.Read(p) }

func (f *flipping) Seek(off int64, whence int) (int64, error) {
	if off == 0 && whence == io.SeekStart {
		if f.rewinds++; f.rewinds == 2 {
			f.r = strings.NewReader(f.second)
		}
	}
	return f.r.Seek(off, whence)
}

// A file that changes between the passes is an error, not records of two files; a reader that cannot
// be read twice gets its records emitted once it is read whole.
func TestLmmsEvalEmitChangedFileAndOnePass(t *testing.T) {
	a := `{"doc_id": 0, "target": "A", "filtered_resps": "A", "exact_match": true}` + "\n" + `{"doc_id": 1, "target": "A", "filtered_resps": "B", "exact_match": false}` + "\n"
	b := strings.Replace(a, `"exact_match": false`, `"exact_match": true `, 1)
	_, _, err := emitted(t, &flipping{second: b, r: strings.NewReader(a)}, "f.jsonl", vmeOpt)
	if !errors.Is(err, record.ErrFormat) || !strings.Contains(err.Error(), "changed while it was read") {
		t.Errorf("a file rewritten between the passes: %v", err)
	}
	longer := a + `{"doc_id": 2, "target": "A", "filtered_resps": "A", "exact_match": true}` + "\n"
	_, _, err = emitted(t, &flipping{second: longer, r: strings.NewReader(a)}, "f.jsonl", vmeOpt)
	if !errors.Is(err, record.ErrFormat) || !strings.Contains(err.Error(), "changed while it was read") {
		t.Errorf("a file grown between the passes: %v", err)
	}
	res, out, err := emitted(t, io.MultiReader(strings.NewReader(a)), "f.jsonl", vmeOpt)
	if err != nil || len(out) != 2 || res.Imported != 2 || len(res.Records) != 2 {
		t.Errorf("one pass: %v, %d emitted, %+v", err, len(out), res)
	}
}
