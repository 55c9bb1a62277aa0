package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHarnessFilesMustBeText: a harness log or table whose text is not valid UTF-8, holds an escaped
// lone surrogate or a key twice in one object is refused naming the file: decoders would turn the
// invalid byte into U+FFFD (two ids differing only there into one), or keep one of the two values.
func TestHarnessFilesMustBeText(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "lmms-eval", "2025-03-03T08-00-00_samples_videomme.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const path = "x_samples_videomme.jsonl"
	if _, err := LmmsEval(bytes.NewReader(src), path, Options{Config: "f8"}); err != nil {
		t.Fatalf("the fixture itself: %v", err)
	}
	i := bytes.Index(src, []byte(`"doc_id"`))
	for name, bad := range map[string][]byte{
		"invalid UTF-8":    append(append(append([]byte{}, src[:i]...), "\"note\":\"\xff\","...), src[i:]...),
		"a lone surrogate": append(append(append([]byte{}, src[:i]...), `"note":"\udc80",`...), src[i:]...),
		"a key twice":      append(append(append([]byte{}, src[:i]...), `"doc_id":7,`...), src[i:]...),
	} {
		if _, err := LmmsEval(bytes.NewReader(bad), path, Options{Config: "f8"}); err == nil || !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
	tsv := "index\tprediction\tanswer\tscore\n1\tA\tA\t1\n2\tB\xff\tA\t0\n"
	if _, err := VLMEvalKit(strings.NewReader(tsv), "m_Video-MME.tsv", Options{Config: "f8"}); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("a TSV with invalid UTF-8: %v", err)
	}
}
