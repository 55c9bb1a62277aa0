package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportRefusesOverlongRecordBeforeWriting: a VLMEvalKit table whose last prediction would make
// a record line over the 16 MiB every reader refuses is refused before any record is written (the
// first rows were once on stdout when the long one stopped the import), naming the file and line.
func TestImportRefusesOverlongRecordBeforeWriting(t *testing.T) {
	tsv := filepath.Join(t.TempDir(), "m_Video-MME.tsv")
	var b strings.Builder
	b.WriteString("index\tquestion\tanswer\tprediction\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "%d\tq\tB\tB\n", i)
	}
	fmt.Fprintf(&b, "301\tq\tB\t%s\n", strings.Repeat("x", 17<<20))
	if err := os.WriteFile(tsv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, out, errs := runAuditCLI("ingest", "vlmevalkit", tsv, "--config", "text", "--text-only", "--rescore", "text")
	if rc != exitError || out != "" || !strings.Contains(errs, "m_Video-MME.tsv:302") || !strings.Contains(errs, "line too long") {
		t.Errorf("rc %d, %d bytes on stdout, stderr %.300q", rc, len(out), errs)
	}
}
