package importers

import (
	"bytes"
	"testing"
)

// The importers face files from other tools: any input must give records or an error, never a panic.

func FuzzLmmsEval(f *testing.F) {
	for _, s := range []string{legacyVideoMME, nestedVideoMME, flatMLVU, `{"logs": [null]}`, `{"doc_id": {}, "resps": [[[[["x"]]]]]}`, "{\"doc_id\": 1, \"target\": [1, null]}"} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, openEnded bool) {
		o := vmeOpt
		o.OpenEnded = openEnded
		recs, err := LmmsEval(bytes.NewReader(data), "fuzz_samples_t.jsonl", o)
		if err == nil && len(recs) == 0 {
			t.Fatal("no records and no error")
		}
	})
}

func FuzzVLMEvalKitTSV(f *testing.F) {
	f.Add([]byte(tsvQuoteAll(vlmHeader, vlmRowsData)))
	f.Add([]byte("index\tprediction\tanswer\n1\t\"A\n2\tB\tB"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = VLMEvalKit(bytes.NewReader(data), "fuzz.tsv", vmeOpt)
	})
}

func FuzzVLMEvalKitJSON(f *testing.F) {
	f.Add([]byte(jsonRecords(vlmHeader, vlmRowsData)))
	f.Add([]byte(jsonColumns(vlmHeader, vlmRowsData)))
	f.Add([]byte(`{"columns": ["index", "prediction", "answer"], "data": [[1, "A", "A"], [2]]}`))
	f.Add([]byte(`{"index": {"0": 1}, "prediction": 3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = VLMEvalKit(bytes.NewReader(data), "fuzz.json", vmeOpt)
	})
}

func FuzzVLMEvalKitXLSX(f *testing.F) {
	good := xlsxBytes(f, vlmHeader, vlmRowsData)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = VLMEvalKit(bytes.NewReader(data), "fuzz.xlsx", vmeOpt)
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
