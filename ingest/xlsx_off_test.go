//go:build noxlsx

package ingest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestXLSXLeftOut: built with -tags noxlsx, an xlsx file is refused in one line that names the file
// and the tag; the other formats still import.
func TestXLSXLeftOut(t *testing.T) {
	_, err := VLMEvalKit(bytes.NewReader(xlsxBytes(t, vlmHeader, vlmRowsData)), "work/Qwen_Video-MME_score.xlsx", vmeOpt)
	if !errors.Is(err, ErrNoXLSX) || !strings.HasPrefix(err.Error(), "work/Qwen_Video-MME_score.xlsx: ") || !strings.Contains(err.Error(), "-tags noxlsx") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%v", err)
	}
	o := vmeOpt
	o.Rescore = RescoreText
	if _, err := VLMEvalKit(strings.NewReader(tsvQuoteAll(vlmHeader, vlmRowsData)), "work/Qwen_Video-MME.tsv", o); err != nil {
		t.Fatal(err)
	}
}
