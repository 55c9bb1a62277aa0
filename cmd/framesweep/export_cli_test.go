package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditRefusesTamperedExport: `audit EXPORT_DIR` (and `cascade EXPORT_DIR`) verifies what
// export.json records before reading: a flipped verdict or a deleted row is refused with exit 1 and
// one line naming the file (both once audited with exit 0 and different numbers).
func TestAuditRefusesTamperedExport(t *testing.T) {
	exp := filepath.Join(t.TempDir(), "release")
	if rc, _, errs := runAuditCLI("audit", demoRecordsPath(t), "--resamples", "20", "--export", exp); rc != exitOK {
		t.Fatalf("export: %s", errs)
	}
	if rc, _, errs := runAuditCLI("audit", exp, "--json"); rc != exitOK {
		t.Fatalf("the untouched export: %s", errs)
	}
	orig, err := os.ReadFile(filepath.Join(exp, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for name, tampered := range map[string][]byte{
		"a flipped verdict": bytes.Replace(orig, []byte(`"correct":false`), []byte(`"correct":true`), 1),
		"a deleted row":     orig[bytes.IndexByte(orig, '\n')+1:],
	} {
		if err := os.WriteFile(filepath.Join(exp, "records.jsonl"), tampered, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"audit", "cascade"} {
			rc, out, errs := runAuditCLI(cmd, exp, "--json")
			if rc != exitError || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, filepath.Join(exp, "records.jsonl")+": ") {
				t.Errorf("%s %s: rc %d stdout %.80q stderr %q", cmd, name, rc, out, errs)
			}
		}
	}
}
