package record

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRecordsRoundTrip(t *testing.T) {
	in := `{"item_id":"videomme-001-1","config":"f16","correct":true,"prediction":"B","answer":"B","confidence":0.83,"score":null,"category":"Counting Problem","duration":"short","config_meta":{"frames":16,"text_only":false,"width":448,"height":448,"policy":"uniform","seed":null,"pipeline":"raw"},"latency_s":0.91}`
	recs, err := Read(strings.NewReader(in), "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := Write(&sb, recs); err != nil {
		t.Fatal(err)
	}
	want := `{"item_id":"videomme-001-1","config":"f16","correct":true,"prediction":"B","answer":"B","confidence":0.83,"category":"Counting Problem","duration":"short","config_meta":{"frames":16,"text_only":false,"width":448,"height":448,"policy":"uniform","pipeline":"raw"},"latency_s":0.91}` + "\n"
	if sb.String() != want {
		t.Errorf("canonical form:\n%s\nwant\n%s", sb.String(), want)
	}
	again, err := Read(strings.NewReader(sb.String()), "y.jsonl")
	if err != nil || len(again) != 1 || *again[0].ConfigMeta.Width != 448 {
		t.Errorf("re-read: %v %+v", err, again)
	}
}

// Lines decode in parallel batches; the error reported is still the first one in line order.
func TestReadRecordsFirstErrorInOrder(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 9000; i++ {
		switch i {
		case 4200:
			b.WriteString(`{"item_id":"x","config":"c"}` + "\n")
		case 4300, 8000:
			b.WriteString("{oops\n")
		default:
			b.WriteString(`{"item_id":"i` + strings.Repeat("x", i%7) + `","config":"c","correct":true}` + "\n")
		}
	}
	_, err := Read(strings.NewReader(b.String()), "big.jsonl")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "big.jsonl:4200") {
		t.Errorf("got %v, want the invalid record at line 4200", err)
	}
	recs, err := Read(strings.NewReader(strings.Repeat(`{"item_id":"a","config":"c","correct":true}`+"\n\n", 5000)), "ok.jsonl")
	if err != nil || len(recs) != 5000 || recs[4999].Source.Line != 9999 {
		t.Errorf("%d records, last line %d, %v", len(recs), recs[len(recs)-1].Source.Line, err)
	}
}

// A run directory contributes its records*.jsonl files (else every *.jsonl), sorted, even when its own
// path holds glob metacharacters.
func TestExpandPathsDirectories(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "exp[1]*")
	other := filepath.Join(root, "other")
	for _, d := range []string{run, other, filepath.Join(run, "sub.jsonl")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(run, "records-b.jsonl"), filepath.Join(run, "records-a.jsonl"), filepath.Join(run, "extra.jsonl"),
		filepath.Join(other, "z.jsonl"), filepath.Join(other, "a.jsonl"), filepath.Join(other, "notes.txt")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ExpandPaths([]string{run, other})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(run, "records-a.jsonl"), filepath.Join(run, "records-b.jsonl"), filepath.Join(other, "a.jsonl"), filepath.Join(other, "z.jsonl")}
	if !slices.Equal(got, want) {
		t.Errorf("ExpandPaths = %q, want %q", got, want)
	}
	if _, err := ExpandPaths([]string{t.TempDir()}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty directory: %v", err)
	}
}

// TestReadRecordsBOM: a leading UTF-8 byte order mark is skipped; one later in the file is still bad JSON.
func TestReadRecordsBOM(t *testing.T) {
	const line = `{"item_id":"a","config":"f8","correct":true}` + "\n"
	rs, err := Read(strings.NewReader("\xef\xbb\xbf"+line+line), "bom.jsonl")
	if err != nil || len(rs) != 2 || rs[0].ItemID != "a" || rs[0].Source.Line != 1 {
		t.Fatalf("%+v %v", rs, err)
	}
	if _, err := Read(strings.NewReader(line+"\xef\xbb\xbf"+line), "bom.jsonl"); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "bom.jsonl:2") {
		t.Fatalf("a BOM inside the file: %v", err)
	}
}

func TestHarnessValidate(t *testing.T) {
	s := 0.5
	for _, line := range []string{
		`{"item_id":"a","config":"x","correct":true,"harness":{"metric":"","kind":"micro","value":1,"counted":1}}`,
		`{"item_id":"a","config":"x","correct":true,"harness":{"metric":"m","kind":"mean","value":1,"counted":1}}`,
		`{"item_id":"a","config":"x","correct":true,"harness":{"metric":"m","kind":"micro","value":101,"counted":1}}`,
		`{"item_id":"a","config":"x","correct":true,"harness":{"metric":"m","kind":"micro","value":1,"counted":-1}}`,
		`{"item_id":"a","config":"x","score":0.5,"harness":{"metric":"m","kind":"micro","value":1,"counted":1,"flipped":true}}`,
	} {
		if _, err := Read(strings.NewReader(line), "h.jsonl"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "h.jsonl:1") {
			t.Errorf("%s: %v", line, err)
		}
	}
	r := Record{ItemID: "a", Config: "x", Score: &s, Harness: &Harness{Metric: "m", Kind: HarnessMicro, Value: 50, Counted: 1}}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
}

// TestReadLine: the bounded line reader returns each line with its newline (a last line without
// one with io.EOF), takes a line of exactly max bytes however long, in the reader's buffer or across
// it, and refuses one byte more with ErrTooLong.
func TestReadLine(t *testing.T) {
	for _, size := range []int{16, 4096} { // max below and above the buffer size (16 bytes)
		short, exact, over := strings.Repeat("a", 3), strings.Repeat("b", size), strings.Repeat("c", size+1)
		br := bufio.NewReaderSize(strings.NewReader(short+"\n"+exact+"\n"+exact+"\n"+over+"\n"), 16)
		for _, want := range []string{short + "\n", exact + "\n", exact + "\n"} {
			if b, err := ReadLine(br, size); err != nil || string(b) != want {
				t.Fatalf("max %d: %q %v, want %q", size, b, err, want)
			}
		}
		if b, err := ReadLine(br, size); !errors.Is(err, ErrTooLong) || b != nil {
			t.Fatalf("max %d: a line of %d bytes: %q %v", size, size+1, b, err)
		}
		br = bufio.NewReaderSize(strings.NewReader(exact), 16)
		if b, err := ReadLine(br, size); err != io.EOF || string(b) != exact {
			t.Fatalf("max %d: the last line without a newline: %q %v", size, b, err)
		}
		if b, err := ReadLine(br, size); err != io.EOF || len(b) != 0 {
			t.Fatalf("max %d: after the end: %q %v", size, b, err)
		}
		br = bufio.NewReaderSize(strings.NewReader(over), 16)
		if _, err := ReadLine(br, size); !errors.Is(err, ErrTooLong) {
			t.Fatalf("max %d: a last line of %d bytes: %v", size, size+1, err)
		}
	}
}
