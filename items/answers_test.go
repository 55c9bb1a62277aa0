package items

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadAnswers (issue 39): an items file for `import table --items` may give just item_id and
// answer (task, category, duration, question optional; a full line reads too); items are (task, id),
// so splits may share ids, but a (task, id) twice, a missing answer, an unknown key or a bad duration
// is an error naming the file and line. Read, a sweep's reader, stays strict on the same lines.
func TestReadAnswers(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "a.jsonl")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := `{"item_id":"001-1","answer":"B"}
{"item_id":"001-1","task":"V2_medium","answer":"C","category":"Counting Problem","duration":"medium","question":"How many?"}
{"item_id":"001-2","task":"V2_medium","answer":"A","video":"a.mp4","question":"q","options":["A. x","B. y"]}
`
	f, err := ReadAnswers(write(ok))
	if err != nil || len(f.Items) != 3 || f.Items[1].Task != "V2_medium" || f.Items[1].Answer != "C" || f.Items[0].Video != "" {
		t.Fatalf("%v %+v", err, f)
	}
	if _, err := Read(write(ok)); err == nil || !strings.Contains(err.Error(), "a.jsonl:1") || !strings.Contains(err.Error(), "missing video") {
		t.Errorf("a sweep's Read of an answers-only file: %v", err)
	}
	for body, want := range map[string]string{
		`{"item_id":"001-1","task":"V1","answer":"B"}` + "\n" + `{"item_id":"001-1","task":"V1","answer":"C"}`: `a.jsonl:2: bad items file: item_id "001-1" of task "V1" already on line 1`,
		`{"item_id":"001-1","answer":"B"}` + "\n" + `{"item_id":"001-1","answer":"C"}`:                         `a.jsonl:2: bad items file: item_id "001-1" already on line 1`,
		`{"item_id":"001-1"}`:                                    `a.jsonl:1: bad items file: item "001-1": missing answer`,
		`{"answer":"B"}`:                                         "missing item_id",
		`{"item_id":"a","answer":"B","gold":"B"}`:                `unknown field "gold"`,
		`{"item_id":"a","answer":"B","duration":"-5"}`:           "duration -5: out of range",
		`{"item_id":"a","answer":"E","options":["A. x","B. y"]}`: `answer "E" is not one of the option letters`,
		`{"item_id":"a","answer":"B","video":"http://x/v.mp4"}`:  "is a URL",
		`{"item_id":"a","answer":"B","duration_s":-1}`:           "duration_s -1",
		"{\"item_id\":\"a\xff\",\"answer\":\"B\"}":               "invalid UTF-8",
	} {
		if _, err := ReadAnswers(write(body + "\n")); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrMalformed) && !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	// A sweep's items file refuses a numeric duration that is not a finite one ≥ 0 too.
	if _, err := Read(write(`{"item_id":"a","video":"v.mp4","question":"q","answer":"x","duration":"NaN"}` + "\n")); err == nil || !strings.Contains(err.Error(), "duration NaN: not a number") {
		t.Errorf("Read duration NaN: %v", err)
	}
}
