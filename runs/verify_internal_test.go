package runs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChunkNames: a chunk's name carries what it must read as, and only names of that form do; a name
// and a manifest entry that disagree are an error.
func TestChunkNames(t *testing.T) {
	c := sumChunk([]byte("{\"a\":1}\n{\"b\":2}\n"))
	name := chunkName(3, 17, c)
	got, ok := nameChunk(name)
	if !ok || got.Lines != 2 || got.SHA256 != c.SHA256 || got.Name != name || !strings.HasPrefix(name, "records/0003-000017.2.") {
		t.Fatalf("%s: %+v %v", name, got, ok)
	}
	for _, bad := range []string{"records/0000-000000.jsonl", "records/0000-000000.2.abc.jsonl", "records/x/0000-000000.2." + c.SHA256 + ".jsonl",
		"records/0000-000000.-2." + c.SHA256 + ".jsonl", "records/0000-000000.2." + strings.ToUpper(c.SHA256) + ".jsonl"} {
		if _, ok := nameChunk(bad); ok {
			t.Errorf("%s read as a digest name", bad)
		}
	}
	m := newManifest(&Info{Sessions: []Session{{Chunks: []Chunk{{Name: name, Lines: 3, SHA256: c.SHA256}}}}})
	if _, err := m.expect(&dirRun{dir: "d"}, name); !errors.Is(err, ErrChunkDigest) || !strings.Contains(err.Error(), "the object's name") {
		t.Fatalf("a name and a manifest that disagree: %v", err)
	}
	if w, err := newManifest(nil).expect(&dirRun{dir: "d"}, name); err != nil || w.Lines != 2 {
		t.Fatalf("a name alone: %+v %v", w, err)
	}
	if w, err := newManifest(nil).expect(&dirRun{dir: "d"}, recordsName); err != nil || w != nil {
		t.Fatalf("records.jsonl: %+v %v", w, err)
	}
}

// TestSpoolLarge: a chunk over the memory part of the spool is read back whole from its temporary
// file; one longer than its lines can hold is stopped and refused; a right one is served as read.
func TestSpoolLarge(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcde\n"), (spoolMemory>>4)+1000)
	sp, got, over, err := spoolChunk(bytes.NewReader(big), int64(len(big)))
	if err != nil || over != 0 || sp.f == nil || got != sumChunk(big) {
		t.Fatalf("spool: %+v over %d file %v %v", got, over, sp != nil && sp.f != nil, err)
	}
	back, err := io.ReadAll(sp)
	sp.Close()
	sp.Close()
	if err != nil || !bytes.Equal(back, big) {
		t.Fatalf("read back %d of %d bytes: %v", len(back), len(big), err)
	}

	dir := t.TempDir()
	d := &dirRun{dir: dir}
	os.MkdirAll(filepath.Join(dir, chunksDir), 0o755)
	small := []byte("{\"x\":1}\n")
	c := sumChunk(small)
	name := chunkName(0, 0, c)
	os.WriteFile(d.where(name), small, 0o644)
	rc, err := openVerified(context.Background(), d, name, &Chunk{Name: name, Lines: c.Lines, SHA256: c.SHA256})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(rc); !bytes.Equal(b, small) {
		t.Fatalf("served %q", b)
	}
	rc.Close()
	// One line recorded, more than a line's worth of bytes stored: stopped, not read to its end.
	os.WriteFile(d.where(name), bytes.Repeat([]byte("x"), 16<<20+16), 0o644)
	var ce *ChunkError
	if _, err := openVerified(context.Background(), d, name, &Chunk{Name: name, Lines: 1, SHA256: c.SHA256}); !errors.As(err, &ce) || ce.Over == 0 || !strings.Contains(err.Error(), "more than 1 lines hold") {
		t.Fatalf("an oversized chunk: %v", err)
	}
}
