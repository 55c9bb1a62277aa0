package runs

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestEachLineRule: the RUN line reader's rule, case by case: blank lines are no lines but are
// counted, a BOM at the start is skipped, a torn last line is returned as torn (records.jsonl) or
// refused by name (a chunk), a line over the limit is refused by where:line, and fn's error for a line
// it cannot decode ends the read.
func TestEachLineRule(t *testing.T) {
	type seen struct {
		line int
		text string
	}
	read := func(in string, tornOK bool, fn func(int, []byte) error) ([]seen, int64, int64, error) {
		var got []seen
		n, torn, err := eachLine(strings.NewReader(in), "src", tornOK, func(line int, b []byte) error {
			got = append(got, seen{line, string(b)})
			if fn != nil {
				return fn(line, b)
			}
			return nil
		})
		return got, n, torn, err
	}
	got, n, torn, err := read("\xef\xbb\xbf{\"a\":1}\n\n  \n{\"b\":2}\r\n{\"c\"", true, nil)
	if err != nil || n != 28 || torn != 4 || fmt.Sprint(got) != `[{1 {"a":1}} {4 {"b":2}}]` {
		t.Errorf("records.jsonl: %v, read %d, torn %d, %v", got, n, torn, err)
	}
	if _, _, _, err := read("{\"a\":1}\n{\"c\"", false, nil); err == nil || !strings.Contains(err.Error(), "src: ends with 4 bytes without a newline") {
		t.Errorf("a chunk with a torn tail: %v", err)
	}
	if _, _, torn, err := read("{\"a\":1}\n", false, nil); err != nil || torn != 0 {
		t.Errorf("a whole chunk: torn %d, %v", torn, err)
	}
	long := "{}\n" + strings.Repeat("x", record.MaxLineBytes+1) + "\n"
	if _, _, _, err := read(long, true, nil); !errors.Is(err, record.ErrTooLong) || !strings.Contains(err.Error(), "src:2") {
		t.Errorf("a line over the limit: %v", err)
	}
	bad := errors.New("undecodable")
	got, _, _, err = read("{}\nnot json\n{}\n", true, func(line int, b []byte) error {
		if line == 2 {
			return bad
		}
		return nil
	})
	if err != bad || len(got) != 2 {
		t.Errorf("an undecodable line: %v after %v", err, got)
	}
	got, _, _, err = read("{}\n{}\n{}\n", true, func(line int, b []byte) error {
		if line == 2 {
			return errStopLines
		}
		return nil
	})
	if err != nil || len(got) != 2 {
		t.Errorf("stopped at line 2: %v after %v", err, got)
	}
}

// TestScanFullRefusesUndecodable: Writer.Scan's reader fails on a line that does not decode, naming
// it (it skipped such lines once), and reads a torn tail of records.jsonl as no record.
func TestScanFullRefusesUndecodable(t *testing.T) {
	good := `{"item_id":"a","config":"f8","status":"ok","correct":true}` + "\n"
	var n int
	err := scanFull(strings.NewReader(good+"{\"item_id\":\n"+good), "records.jsonl", true, func(*record.Full) { n++ })
	if err == nil || !strings.Contains(err.Error(), "records.jsonl:2") {
		t.Errorf("an undecodable line: %v (%d records)", err, n)
	}
	n = 0
	if err := scanFull(strings.NewReader(good+good[:20]), "records.jsonl", true, func(*record.Full) { n++ }); err != nil || n != 1 {
		t.Errorf("a torn tail: %d records, %v", n, err)
	}
	if err := scanFull(strings.NewReader(good+good[:20]), "records/c.jsonl", false, func(*record.Full) {}); err == nil {
		t.Error("a chunk with a torn tail: read")
	}
}

// TestFindInTornTail: Find reads a torn last line of records.jsonl as no record (resume cuts it,
// merge drops it), whole though its JSON may be, and refuses one in a chunk.
func TestFindInTornTail(t *testing.T) {
	line := `{"item_id":"a","config":"f8","status":"ok","correct":true}`
	f, err := findIn(bytes.NewReader([]byte(line)), "records.jsonl", true, "a", "f8", nil)
	if err != nil || f != nil {
		t.Errorf("a torn tail: %v, %v", f, err)
	}
	if f, err := findIn(bytes.NewReader([]byte(line+"\n")), "records.jsonl", true, "a", "f8", nil); err != nil || f == nil || f.Source.Line != 1 {
		t.Errorf("a whole line: %v, %v", f, err)
	}
	if _, err := findIn(bytes.NewReader([]byte(line)), "records/c.jsonl", false, "a", "f8", nil); err == nil {
		t.Error("a chunk with a torn tail: read")
	}
}
