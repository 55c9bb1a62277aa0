package cache

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// sparseObject writes a valid safetensors object of one U8 tensor of n zero bytes into dir's store
// as a sparse file (no disk blocks for the data) with a ref under key, and returns its ref.
func sparseObject(t *testing.T, dir, key string, n int64) Ref {
	t.Helper()
	hdr := `{"x":{"dtype":"U8","shape":[` + strconv.FormatInt(n, 10) + `],"data_offsets":[0,` + strconv.FormatInt(n, 10) + `]}}`
	hdr += strings.Repeat(" ", (8-len(hdr)%8)%8)
	lb := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	tmp := filepath.Join(dir, "big.tmp")
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(lb, hdr...)); err != nil {
		t.Fatal(err)
	}
	size := int64(8+len(hdr)) + n
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ref := Ref{Key: key, Digest: hex.EncodeToString(h.Sum(nil)), Size: size}
	obj := filepath.Join(dir, filepath.FromSlash(ObjectName(ref.Digest)))
	if err := os.MkdirAll(filepath.Dir(obj), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, obj); err != nil {
		t.Fatal(err)
	}
	rb, _ := json.Marshal(ref)
	rp := filepath.Join(dir, filepath.FromSlash(refName(key)))
	os.MkdirAll(filepath.Dir(rp), 0o755)
	if err := os.WriteFile(rp, append(rb, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestVerifyBoundedMemory: verifying a 256 MiB object allocates a small fraction of it (the object
// is streamed through sha256; only its header is held). Reading it whole, as Verify once did, fails.
func TestVerifyBoundedMemory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 256 << 20
	ref := sparseObject(t, dir, testSpec(7).Key(), n)
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep, err := s.Verify(ctx)
	runtime.ReadMemStats(&after)
	if err != nil || !rep.Clean() || rep.OK != 1 || rep.Bytes != ref.Size {
		t.Fatalf("%+v %v", rep, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("Verify of a %d-byte object allocated %d bytes", ref.Size, alloc)
	}
	runtime.ReadMemStats(&before)
	got, ok, err := s.Has(ctx, ref.Key)
	runtime.ReadMemStats(&after)
	if !ok || err != nil || got != ref {
		t.Fatalf("Has: %+v %v %v", got, ok, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("Has of a %d-byte object allocated %d bytes", ref.Size, alloc)
	}

	// The same object with its data cut short is caught without reading it into memory either.
	obj := s.ObjectPath(ref.Digest)
	if err := os.Truncate(obj, ref.Size-1); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Verify(ctx)
	if err != nil || rep.Clean() || rep.Problems[0].Kind != "corrupt" || !strings.Contains(rep.Problems[0].Cause, "sha256") {
		t.Fatalf("truncated object: %+v %v", rep, err)
	}
	if _, ok, err := s.Has(ctx, ref.Key); ok || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Has of a truncated object: %v %v", ok, err)
	}
}

// TestVerifyHeaderDefectWithRightDigest: an object whose bytes hash to its name but whose header
// lies about the data (so only the structural check can catch it) is reported corrupt.
func TestVerifyHeaderDefectWithRightDigest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, _ := Open(ctx, dir)
	key := testSpec(8).Key()
	bad := file(`{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, []byte{1, 2}) // uncovered tail
	if _, err := s.Put(ctx, key, bad); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(ctx)
	if err != nil || len(rep.Problems) != 2 || !strings.Contains(rep.Problems[0].Cause, "cover") || rep.Problems[1].Key != key {
		t.Fatalf("%+v %v", rep, err)
	}
}

// TestVerifyCancelled: a cancelled context stops Verify with the context's error, not a report
// listing objects as corrupt.
func TestVerifyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	s, _ := Open(ctx, dir)
	if _, err := s.Put(ctx, testSpec(9).Key(), testObject(t, 9)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if rep, err := s.Verify(ctx); err != context.Canceled {
		t.Fatalf("%+v %v", rep, err)
	}
}

// TestOpenLocalDirectory: a path with "://" after a slash is a local directory (bucket.IsURL).
func TestOpenLocalDirectory(t *testing.T) {
	dir := t.TempDir()
	loc := filepath.Join(dir, "a://b")
	s, err := Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(loc); err != nil {
		t.Fatalf("Open(%q) did not create a directory: %v", loc, err)
	}
}
