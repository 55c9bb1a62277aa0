//go:build !noparquet

package ingest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestTableParquet: a flat Parquet table reads as its CSV would (strings, integers, floats,
// booleans, nulls); a nested column is an error naming it.
func TestTableParquet(t *testing.T) {
	type row struct {
		SampleID   string   `parquet:"sample_id"`
		Config     string   `parquet:"config"`
		Frames     *int64   `parquet:"frames,optional"`
		Correct    bool     `parquet:"correct"`
		Confidence *float64 `parquet:"confidence,optional"`
		Prediction string   `parquet:"prediction"`
	}
	i8, c := int64(8), 0.75
	var b bytes.Buffer
	if err := parquet.Write(&b, []row{{"q1", "f8", &i8, true, &c, "B"}, {"q2", "f8", &i8, false, nil, "I cannot tell"}}); err != nil {
		t.Fatal(err)
	}
	res, err := Table(bytes.NewReader(b.Bytes()), "study.parquet", TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Records
	if len(r) != 2 || r[0].ItemID != "q1" || *r[0].ConfigMeta.Frames != 8 || !*r[0].Correct || *r[0].Confidence != 0.75 || r[1].Confidence != nil || !r[1].Unparsed {
		t.Errorf("%+v", r)
	}
	type nested struct {
		SampleID string   `parquet:"sample_id"`
		Tags     []string `parquet:"tags,list"`
	}
	b.Reset()
	if err := parquet.Write(&b, []nested{{"q1", []string{"x"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Table(bytes.NewReader(b.Bytes()), "n.parquet", TableOptions{}); err == nil || !strings.Contains(err.Error(), `parquet column "tags" is not a flat column`) {
		t.Errorf("nested: %v", err)
	}
	if _, err := Table(strings.NewReader("PAR1 not really"), "bad.parquet", TableOptions{}); err == nil || !strings.HasPrefix(err.Error(), "bad.parquet") {
		t.Errorf("corrupt: %v", err)
	}
}
