//go:build !noparquet

package items

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestImportParquetColumns: a Parquet release is checked column by column: a column the format does
// not know (a renamed options column, or one a flipped bit in the footer renamed), a column of
// another type, and a required column that is not there are errors naming the file and the column;
// --map reads a column named otherwise.
func TestImportParquetColumns(t *testing.T) {
	dir, videos := importDir(t)
	good := videoMMERow{VideoID: "001", Duration: "short", VideoFile: "fFjv93ACGo8", QuestionID: "001-1", TaskType: "Counting Problem",
		Question: "How many?", Options: []string{"A. 1.", "B. 2.", "C. 3.", "D. 4."}, Answer: "C"}
	type renamed struct {
		VideoFile  string   `parquet:"videoID"`
		QuestionID string   `parquet:"question_id"`
		Question   string   `parquet:"question"`
		Choices    []string `parquet:"choices,list"`
		Answer     string   `parquet:"answer"`
	}
	type stringOptions struct {
		VideoFile  string `parquet:"videoID"`
		QuestionID string `parquet:"question_id"`
		Question   string `parquet:"question"`
		Options    string `parquet:"options"`
		Answer     string `parquet:"answer"`
	}
	type noAnswer struct {
		VideoFile  string   `parquet:"videoID"`
		QuestionID string   `parquet:"question_id"`
		Question   string   `parquet:"question"`
		Options    []string `parquet:"options,list"`
	}
	write := func(name string, rows any) string {
		p := filepath.Join(dir, name)
		var err error
		switch r := rows.(type) {
		case []videoMMERow:
			err = parquet.WriteFile(p, r)
		case []renamed:
			err = parquet.WriteFile(p, r)
		case []stringOptions:
			err = parquet.WriteFile(p, r)
		case []noAnswer:
			err = parquet.WriteFile(p, r)
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ren := write("renamed.parquet", []renamed{{good.VideoFile, good.QuestionID, good.Question, good.Options, good.Answer}})
	// A flipped bit in the footer: "options" becomes "optionr" in the schema.
	flip := write("flipped.parquet", []videoMMERow{good})
	b := mustRead(t, flip)
	foot := len(b) - 8 - int(uint32(b[len(b)-8])|uint32(b[len(b)-7])<<8|uint32(b[len(b)-6])<<16|uint32(b[len(b)-5])<<24)
	i := bytes.Index(b[foot:], []byte("options")) // the schema's element, first in the footer
	if foot < 4 || i < 0 {
		t.Fatal("no column name in the footer to flip")
	}
	i += foot
	b[i+6] ^= 1
	testenv.WriteFile(t, flip, b)
	for _, c := range []struct{ src, want string }{
		{ren, `column "choices"`},
		{flip, "optionr"},
		{write("string.parquet", []stringOptions{{good.VideoFile, good.QuestionID, good.Question, "A. 1.", good.Answer}}), `column "options" is a string`},
		{write("noanswer.parquet", []noAnswer{{good.VideoFile, good.QuestionID, good.Question, good.Options}}), `no "answer"`},
	} {
		its, _, err := Import(c.src, ImportOptions{Format: "videomme", Videos: videos})
		if err == nil || !strings.Contains(err.Error(), c.src) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %d items, %v (want an error naming the file and %q)", filepath.Base(c.src), len(its), err, c.want)
		}
	}
	its, _, err := Import(ren, ImportOptions{Format: "videomme", Videos: videos, Map: map[string]string{"options": "choices"}})
	if err != nil || len(its) != 1 || len(its[0].Options) != 4 || its[0].Answer != "C" {
		t.Fatalf("--map options=choices: %+v %v", its, err)
	}
}

// testdata/videomme.parquet is the release row of TestImportParquetColumns as parquet-go writes it
// (videoMMERow; scripts/campaign/records.sh flips a bit of its footer): it imports as one item with
// its four options.
func TestParquetFixture(t *testing.T) {
	_, videos := importDir(t)
	its, _, err := Import(filepath.Join("testdata", "videomme.parquet"), ImportOptions{Format: "videomme", Videos: videos})
	if err != nil || len(its) != 1 || len(its[0].Options) != 4 || its[0].Answer != "C" || its[0].ItemID != "001-1" {
		t.Fatalf("%+v %v", its, err)
	}
}
