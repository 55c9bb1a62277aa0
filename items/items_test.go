package items

import (
	"bytes"
	"strings"
	"testing"
)

// TestParseItems: the canonical items file, field by field, and the errors (file:line, the cause).
func TestParse(t *testing.T) {
	good := "\xef\xbb\xbf" + `{"item_id":"a","video":"v.mp4","question":"Q?","options":["A. x","B) y","(C) z"],"answer":"b","task":"t","category":"c","duration":"short","subtitles":"s","duration_s":12.5}` + "\n\n" +
		`{"item_id":"b","video":"/abs/w.mp4","question":"Describe it.","answer":"a cat on a mat"}` + "\n"
	its, err := Parse(strings.NewReader(good), "/data/items.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(its.Items) != 2 || its.Items[0].Video != "/data/v.mp4" || its.Items[1].Video != "/abs/w.mp4" || !its.Items[0].MultipleChoice() || its.Items[1].MultipleChoice() || *its.Items[0].DurationS != 12.5 {
		t.Fatalf("%+v", its.Items)
	}
	// The digest ignores formatting, not content.
	spaced := strings.ReplaceAll(good, `":`, `": `)
	its2, _ := Parse(strings.NewReader(spaced), "/data/items.jsonl")
	its3, _ := Parse(strings.NewReader(strings.Replace(good, "Q?", "Q!", 1)), "/data/items.jsonl")
	if its2.SHA256 != its.SHA256 || its3.SHA256 == its.SHA256 {
		t.Fatal("items digest")
	}
	for in, want := range map[string]string{
		`{"item_id":"a","video":"v","question":"q","answer":"A","colour":1}`:                                                         `unknown field "colour"`,
		`{"item_id":"a","video":"v","question":"q","answer":"A"}` + "\n" + `{"item_id":"a","video":"v","question":"q","answer":"B"}`: "already on line 1",
		`{"item_id":"a","video":"v","question":"q","options":["A. x","C. y"],"answer":"A"}`:                                          `does not start with "B"`,
		`{"item_id":"a","video":"v","question":"q","options":["A. x","B. y"],"answer":"C"}`:                                          "not one of the option letters",
		`{"item_id":"a","video":"http://x/v.mp4","question":"q","answer":"A"}`:                                                       "URL",
		`{"item_id":"","video":"v","question":"q","answer":"A"}`:                                                                     "missing item_id",
		`{"item_id":"a","video":"v","question":"","answer":"A"}`:                                                                     "missing question",
		`[1,2]`: "not an item",
		``:      "no items",
	} {
		_, err := Parse(strings.NewReader(in), "it.jsonl")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "it.jsonl") {
			t.Errorf("%q: %v (want %q)", in, err, want)
		}
	}
	long := `{"item_id":"a","video":"v","question":"` + strings.Repeat("x", MaxLine) + `","answer":"A"}`
	if _, err := Parse(strings.NewReader(long), "it.jsonl"); err == nil || !strings.Contains(err.Error(), "it.jsonl:1") {
		t.Errorf("over-long line: %v", err)
	}
}

// FuzzParseItems: any input is parsed or refused with an error naming the file; never a panic; an
// accepted file round-trips through WriteItems' encoding to the same digest.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"item_id":"a","video":"v.mp4","question":"Q?","options":["A. x","B. y"],"answer":"A"}`))
	f.Add([]byte("\xef\xbb\xbf{\"item_id\":\"b\",\"video\":\"w\",\"question\":\"q\",\"answer\":\"free\"}\n\n"))
	f.Add([]byte(`{"item_id":"a","video":"v","question":"q","answer":"A","duration_s":-1}`))
	f.Add([]byte("{\"item_id\":\"a\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		its, err := Parse(bytes.NewReader(b), "f.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, it := range its.Items {
			if err := it.Validate(); err != nil {
				t.Fatalf("accepted an invalid item: %v", err)
			}
		}
	})
}
