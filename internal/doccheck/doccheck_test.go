package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleDocReferences: no comment of the module names an identifier of the module that does not
// exist (the rule is the package doc's).
func TestModuleDocReferences(t *testing.T) {
	root := filepath.Join("..", "..")
	stale, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stale {
		t.Errorf("%s", s)
	}
}

// TestStaleReferenceFails: in a module written here, a comment naming a function that moved away, a
// missing method, a stale qualifier under an import's own name, and a truncated name are reported;
// what exists, file names, paths, URLs, other modules' packages and ambiguous qualifiers are not.
func TestStaleReferenceFails(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("record/record.go", `package record

// Record is one answer.
type Record struct{ Model string }

// Failed reports an error record.
func (r *Record) Failed() bool { return false }

// Read reads records.
func Read() {}
`)
	write("audit/audit.go", `package audit

import rec "example.com/m/record"

// Analyze reads what record.Read gives (record.Record.Failed ones left out, *record.Record.Model
// named) and what audit.ReadRecords once read; see audit.md, docs/audit.Foo, x.audit.Bar,
// https://example.com/audit.Nope, json.Number and torch.Tensor.
func Analyze() { _ = rec.Read }

// Harness is stamped on every record (audit.Harness); rec.Write is gone, record.Record.Passed never was,
// and record.Reco is cut short.
type Harness struct{}
`)
	write("a/x/x.go", "package x\n\n// Y is y.\nfunc Y() {}\n")
	write("b/x/x.go", "package x\n\n// Z names x.Nothing: two packages are named x, so x is not resolved.\nfunc Z() {}\n")
	write("testdata/t.go", "package t\n\n// record.Gone is data, not code.\n")
	stale, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range stale {
		got = append(got, s.Ref+": "+s.Why)
	}
	want := []string{
		"audit.ReadRecords: package audit has no ReadRecords",
		"rec.Write: package record has no Write",
		"record.Record.Passed: record.Record has no method or field Passed",
		"record.Reco: package record has no Reco",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(stale) > 0 && (!strings.HasSuffix(stale[0].Pos.Filename, filepath.Join("audit", "audit.go")) || stale[0].Pos.Line != 6) {
		t.Errorf("position %s, want audit/audit.go:6", stale[0].Pos)
	}
}
