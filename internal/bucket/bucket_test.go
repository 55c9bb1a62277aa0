package bucket

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsURL(t *testing.T) {
	for loc, want := range map[string]bool{
		"file:///tmp/c":            true,
		"s3://bucket/p":            true,
		"gs+x.y-z://b":             true,
		"./a://b":                  false,
		"/abs/a://b":               false,
		"a/b://c":                  false,
		"://x":                     false,
		"1ab://x":                  false,
		"cache":                    false,
		"C:\\dir":                  false,
		"mem://":                   true,
		"file:/tmp/c":              false,
		"relative/dir/with:colon":  false,
		"nosuchscheme://bucket/xy": true,
	} {
		if got := IsURL(loc); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", loc, got, want)
		}
	}
}

// TestBucketOperations: on a file:// bucket, a conditional write publishes once and then is
// ErrExists, an unconditional one replaces; reads, listing (no sidecars), Exists and Delete see what
// was written, a missing key is ErrNotFound; Where names the key; Close twice is fine.
func TestBucketOperations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := Open(ctx, "file://"+dir+"?no_tmp_dir=1&metadata=skip")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Base() != "file://"+dir || b.Where("a/x") != "file://"+dir+"/a/x" {
		t.Fatalf("base %q where %q", b.Base(), b.Where("a/x"))
	}
	if err := b.Write(ctx, "a/x", strings.NewReader("one"), "text/plain", true); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(ctx, "a/x", strings.NewReader("two"), "text/plain", true); !errors.Is(err, ErrExists) {
		t.Fatalf("second conditional write: %v", err)
	}
	if got, err := b.ReadAll(ctx, "a/x"); err != nil || string(got) != "one" {
		t.Fatalf("read %q %v", got, err)
	}
	if err := b.Write(ctx, "a/x", strings.NewReader("three"), "text/plain", false); err != nil {
		t.Fatal(err)
	}
	r, size, err := b.NewReader(ctx, "a/x")
	if err != nil || size != 5 {
		t.Fatalf("reader: size %d %v", size, err)
	}
	r.Close()
	if err := os.WriteFile(filepath.Join(dir, "a", "y.attrs"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(ctx, "b", strings.NewReader(""), "text/plain", false); err != nil {
		t.Fatal(err)
	}
	if keys, err := b.List(ctx, ""); err != nil || strings.Join(keys, " ") != "a/x b" {
		t.Fatalf("list %v %v", keys, err)
	}
	if ok, err := b.Exists(ctx, "b"); !ok || err != nil {
		t.Fatalf("exists %v %v", ok, err)
	}
	if err := b.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{b.Delete(ctx, "b"), func() error { _, err := b.ReadAll(ctx, "b"); return err }(),
		func() error { _, _, err := b.NewReader(ctx, "b"); return err }()} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("missing key: %v", err)
		}
	}
	if err := b.Close(); err != nil || b.Close() != nil {
		t.Fatal("close twice")
	}
}
