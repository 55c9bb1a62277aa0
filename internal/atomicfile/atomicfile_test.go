package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
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

// TestWritePerm: a report is replaced whole with the mode asked, umask aside (0644 is readable by
// others), over an older file of another mode.
func TestWritePerm(t *testing.T) {
	p := filepath.Join(t.TempDir(), "report.html")
	if err := Write(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WritePerm(p, []byte("<html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if b, _ := os.ReadFile(p); err != nil || string(b) != "<html>" || st.Mode().Perm()&0o044 != 0o044 || st.Mode().Perm()&0o022 != 0 {
		t.Fatalf("%q, mode %v, %v", b, st.Mode(), err)
	}
}

// TestWriteNew: the file is created whole with its mode; a second write to the same name fails with
// fs.ErrExist and leaves the first file as it was; of writers racing for one name exactly one wins.
func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "export.json")
	if err := WriteNew(p, []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteNew(p, []byte("second\n"), 0o644); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second write: %v", err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "first\n" {
		t.Fatalf("%q %v", b, err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode: %v %v", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("%d entries, want the file alone", len(ents))
	}
	race := filepath.Join(dir, "race")
	var wg sync.WaitGroup
	var wins atomic.Int32
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if WriteNew(race, []byte{byte('a' + i)}, 0o644) == nil {
				wins.Add(1)
			}
		}(i)
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d writers won", wins.Load())
	}
}
