package importers

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
)

// The importers face files from other tools: any input must give records or an error, never a panic,
// and an error is one line that names the file (an *audit.Error carrying its path).

func checkErr(t *testing.T, err error, path string) {
	t.Helper()
	var ae *audit.Error
	if err != nil && (!errors.As(err, &ae) || ae.Path != path || strings.ContainsAny(err.Error(), "\n\r")) {
		t.Fatalf("error does not name %s on one line: %q", path, err)
	}
}

func FuzzLmmsEval(f *testing.F) {
	for _, s := range []string{legacyVideoMME, nestedVideoMME, flatMLVU, `{"logs": [null]}`, `{"doc_id": {}, "resps": [[[[["x"]]]]]}`, "{\"doc_id\": 1, \"target\": [1, null]}"} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, openEnded bool) {
		o := vmeOpt
		o.OpenEnded = openEnded
		recs, err := LmmsEval(bytes.NewReader(data), "fuzz_samples_t.jsonl", o)
		checkErr(t, err, "fuzz_samples_t.jsonl")
		if err == nil && len(recs) == 0 {
			t.Fatal("no records and no error")
		}
	})
}

func FuzzVLMEvalKitTSV(f *testing.F) {
	f.Add([]byte(tsvQuoteAll(vlmHeader, vlmRowsData)))
	f.Add([]byte("index\tprediction\tanswer\n1\t\"A\n2\tB\tB"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := VLMEvalKit(bytes.NewReader(data), "fuzz.tsv", vmeOpt)
		checkErr(t, err, "fuzz.tsv")
	})
}

func FuzzVLMEvalKitJSON(f *testing.F) {
	f.Add([]byte(jsonRecords(vlmHeader, vlmRowsData)))
	f.Add([]byte(jsonColumns(vlmHeader, vlmRowsData)))
	f.Add([]byte(`{"columns": ["index", "prediction", "answer"], "data": [[1, "A", "A"], [2]]}`))
	f.Add([]byte(`{"index": {"0": 1}, "prediction": 3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := VLMEvalKit(bytes.NewReader(data), "fuzz.json", vmeOpt)
		checkErr(t, err, "fuzz.json")
	})
}

func FuzzVLMEvalKitXLSX(f *testing.F) {
	good := xlsxBytes(f, vlmHeader, vlmRowsData)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := VLMEvalKit(bytes.NewReader(data), "fuzz.xlsx", vmeOpt)
		checkErr(t, err, "fuzz.xlsx")
	})
}

func FuzzParsePyList(f *testing.F) {
	for _, s := range []string{`['A. x', "B. y's"]`, `(1, None)`, `['\x4', '\U0011FFFF']`, `[r'\'']`, `[`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParsePyList(s)
		if err == nil && got == nil {
			t.Fatal("nil list without error")
		}
	})
}
