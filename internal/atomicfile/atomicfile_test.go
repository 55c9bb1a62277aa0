package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: the file holds the new bytes and no temporary file is left beside it; a directory that
// does not exist is an error and creates nothing.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.json")
	for _, s := range []string{"first\n", "second, longer\n"} {
		if err := Write(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != s {
			t.Fatalf("%q, %v; want %q", b, err, s)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("%d entries, want run.json alone", len(ents))
	}
	if err := Write(filepath.Join(dir, "no", "such", "x"), []byte("x")); err == nil {
		t.Fatal("wrote into a missing directory")
	}
}
