package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyLocalPathWithColonSlashSlash: a directory whose path contains "://" after a slash is
// a local cache for both the existence check and cache.Open (they once disagreed: the check said
// "directory", Open said "URL" and failed).
func TestVerifyLocalPathWithColonSlashSlash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a://b")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := dispatch([]string{"verify", dir}, &out, &errb); code != exitOK || !strings.Contains(out.String(), `"ok": 0`) && !strings.Contains(out.String(), `"ok":0`) {
		t.Fatalf("verify %s: exit %d %s %s", dir, code, out.String(), errb.String())
	}
	// A missing one is a one-line error naming it, not a bucket-open failure.
	missing := filepath.Join(t.TempDir(), "x://y")
	out.Reset()
	errb.Reset()
	code := dispatch([]string{"verify", missing}, &out, &errb)
	if code != exitError || !strings.Contains(errb.String(), missing) || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
		t.Fatalf("verify %s: exit %d %q", missing, code, errb.String())
	}
	// A regular file is not a cache: said so, not "mkdir: not a directory".
	file := filepath.Join(t.TempDir(), "x.csv")
	os.WriteFile(file, []byte("a,b\n"), 0o644)
	out.Reset()
	errb.Reset()
	if code := dispatch([]string{"verify", file}, &out, &errb); code != exitError || errb.String() != "framesweep verify: "+file+": not a directory (a cache is a directory or a blob URL)\n" {
		t.Fatalf("verify %s: exit %d %q", file, code, errb.String())
	}
}
