package cache

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPutSpooled: header ‖ spool ‖ tail is stored exactly as Put of the same bytes would store it,
// in a directory and in a blob bucket; the spool file is removed by Close; Stat reads the header.
func TestPutSpooled(t *testing.T) {
	ctx := context.Background()
	obj := testObject(t, 3)
	f, err := ParseSafetensors(obj)
	if err != nil {
		t.Fatal(err)
	}
	frames := f.Tensors["frames"]
	head := obj[:len(obj)-len(frames.Data)-len(f.Tensors["indices"].Data)]
	tail := f.Tensors["indices"].Data
	key := testSpec(3).Key()
	for _, loc := range []string{t.TempDir(), "file://" + t.TempDir() + "?no_tmp_dir=1&metadata=skip"} {
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := s.NewSpool()
		if err != nil {
			t.Fatal(err)
		}
		name := sp.f.Name()
		for _, chunk := range [][]byte{frames.Data[:5], frames.Data[5:]} {
			if _, err := sp.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		ref, err := s.PutSpooled(ctx, key, head, sp, tail)
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Close(); err != nil || sp.Close() != nil {
			t.Fatalf("close: %v", err)
		}
		if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("spool %s left behind", name)
		}
		b, _, err := s.Get(ctx, key)
		if err != nil || !bytes.Equal(b, obj) || ref.Size != int64(len(obj)) {
			t.Fatalf("%s: stored %d bytes, err %v", loc, len(b), err)
		}
		_, h, err := s.Stat(ctx, key)
		if err != nil || h.Tensors["frames"].Bytes() != int64(len(frames.Data)) || h.Metadata["seed"] != "d" {
			t.Fatalf("stat: %+v %v", h, err)
		}
		if _, _, err := s.Stat(ctx, testSpec(4).Key()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("stat of a missing key: %v", err)
		}
		if _, err := s.PutSpooled(ctx, key, head, sp, tail); err == nil {
			t.Fatal("closed spool accepted")
		}
	}
}

// TestStatCatchesTruncation: a truncated object fails Stat (size), a damaged header too; a flipped
// data byte does not (Stat reads headers only) but Has does.
func TestStatCatchesTruncation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, _ := Open(ctx, dir)
	obj := testObject(t, 5)
	key := testSpec(5).Key()
	ref, err := s.Put(ctx, key, obj)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, filepath.FromSlash(ObjectName(ref.Digest)))
	for name, damage := range map[string]func([]byte) []byte{
		"trunc":  func(b []byte) []byte { return b[:len(b)-3] },
		"header": func(b []byte) []byte { b[9] = 'x'; return b },
	} {
		os.WriteFile(path, damage(append([]byte(nil), obj...)), 0o644)
		if _, _, err := s.Stat(ctx, key); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
	flipped := append([]byte(nil), obj...)
	flipped[len(flipped)-20] ^= 1
	os.WriteFile(path, flipped, 0o644)
	if _, _, err := s.Stat(ctx, key); err != nil {
		t.Errorf("stat reads the header only: %v", err)
	}
	if _, ok, _ := s.Has(ctx, key); ok {
		t.Error("Has missed a flipped data byte")
	}
}

// TestManifestAppend: every line is on disk when Append returns (a reader sees it before Close);
// a bucket manifest is published on Flush; Append after Close fails; Close twice is fine.
func TestManifestAppend(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, _ := Open(ctx, dir)
	m, err := s.NewManifest(ctx, "run1")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := m.Append(ctx, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(m.Where())
		if n := strings.Count(string(b), "\n"); n != i+1 {
			t.Fatalf("after %d appends the file has %d lines", i+1, n)
		}
	}
	if err := m.Close(ctx); err != nil || m.Close(ctx) != nil {
		t.Fatal(err)
	}
	if err := m.Append(ctx, 1); err == nil {
		t.Fatal("append after close")
	}
	if _, err := s.NewManifest(ctx, "run1"); err == nil {
		t.Fatal("a second manifest of the same run overwrote the first")
	}
	bs, _ := Open(ctx, "file://"+t.TempDir()+"?no_tmp_dir=1&metadata=skip")
	bm, _ := bs.NewManifest(ctx, "run2")
	bm.Append(ctx, "a")
	if err := bm.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := bs.be.get(ctx, "manifests/run2.jsonl", 1<<20)
	if err != nil || string(b) != "\"a\"\n" {
		t.Fatalf("bucket manifest %q %v", b, err)
	}
	bm.Close(ctx)
}
