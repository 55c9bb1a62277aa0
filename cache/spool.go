package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Spool is a temporary file that collects the data section of one object while it is produced, so a
// writer whose header is known only at the end (it holds per-frame timestamps and PSNR) never holds the
// data in memory. PutSpooled publishes it; Close removes it. For local stores it lives under cas/ (same
// filesystem), for buckets in os.TempDir (framesweep-spool-*); it is locked while open, so a spool a
// killed process left is removed by the next writer (RemoveDeadTemps) and reported by Verify.
type Spool struct {
	f    *os.File
	n    int64
	werr error
}

// NewSpool creates an empty spool for an object of s.
func (s *Store) NewSpool() (*Spool, error) {
	s.beforeWrite()
	dir, pattern, err := s.be.spoolPlace()
	if err != nil {
		return nil, &Error{Path: dir, Op: "spool", Err: err}
	}
	f, err := createTemp(dir, pattern)
	if err != nil {
		return nil, &Error{Path: filepath.Join(dir, pattern), Op: "spool", Err: err}
	}
	return &Spool{f: f}, nil
}

// spoolPlace: a spool sits in cas/, on the objects' filesystem, so publishing it is a rename.
func (d *dirBackend) spoolPlace() (dir, pattern string, err error) {
	dir = d.where("cas")
	return dir, tempPrefix + "spool-*", os.MkdirAll(dir, 0o755)
}

// spoolPlace: a bucket's spools sit in os.TempDir ("" to createTemp), named so RemoveDeadTemps finds them.
func (b *blobBackend) spoolPlace() (dir, pattern string, err error) {
	return "", bucketSpoolPrefix + "*", nil
}

// Write appends p. After a failed write every later call fails with the same error.
func (sp *Spool) Write(p []byte) (int, error) {
	if sp.werr != nil {
		return 0, sp.werr
	}
	if sp.f == nil {
		return 0, os.ErrClosed
	}
	n, err := sp.f.Write(p)
	sp.n += int64(n)
	if err != nil {
		sp.werr = &Error{Path: sp.f.Name(), Op: "spool", Err: err}
		return n, sp.werr
	}
	return n, nil
}

// Size is the number of bytes written.
func (sp *Spool) Size() int64 { return sp.n }

// Close removes the spool file; it is idempotent.
func (sp *Spool) Close() error {
	if sp == nil || sp.f == nil {
		return nil
	}
	// Removed while still open (locked): unlocked, it would look like a dead writer's for an instant.
	name := sp.f.Name()
	err := os.Remove(name)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if cerr := sp.f.Close(); err == nil {
		err = cerr
	}
	sp.f = nil
	return err
}

// PutSpooled stores under key the object head ‖ spool ‖ tail (the spool's data between a header and a
// trailing part), with the same publication order and guarantees as Put. The spool is read twice
// (once to name the object by its digest, once to copy it), from the page cache in practice; it is
// not closed.
func (s *Store) PutSpooled(ctx context.Context, key string, head []byte, sp *Spool, tail []byte) (Ref, error) {
	if !validHex(key) {
		return Ref{}, &Error{Op: "put", Err: wrapf(ErrBadSpec, "key %q", key)}
	}
	if sp.f == nil {
		return Ref{}, &Error{Op: "put", Err: os.ErrClosed}
	}
	if sp.werr != nil {
		return Ref{}, sp.werr
	}
	body := func() io.Reader {
		return io.MultiReader(bytes.NewReader(head), io.NewSectionReader(sp.f, 0, sp.n), bytes.NewReader(tail))
	}
	h := sha256.New()
	size, err := io.Copy(h, body())
	if err != nil {
		return Ref{}, &Error{Path: sp.f.Name(), Op: "read spool", Err: err}
	}
	ref := Ref{Key: key, Digest: hex.EncodeToString(h.Sum(nil)), Size: size}
	name := ObjectName(ref.Digest)
	if err := s.be.putObject(ctx, name, ref.Digest, body); err != nil {
		return Ref{}, &Error{Path: s.be.where(name), Op: "write", Err: err}
	}
	return ref, s.putRef(ctx, ref)
}

// putRef publishes key → object, after the object itself.
func (s *Store) putRef(ctx context.Context, ref Ref) error {
	rb, _ := json.Marshal(ref)
	rname := refName(ref.Key)
	if err := s.be.put(ctx, rname, append(rb, '\n')); err != nil {
		return &Error{Path: s.be.where(rname), Op: "write", Err: err}
	}
	return nil
}

// Stat returns key's ref and its object's safetensors header, reading only the header: the object
// must exist with the ref's size and a header that is valid for that size. It is the cheap check a
// rerun uses to skip work (Verify and every full read re-hash the object). A missing key or object is
// ErrNotFound; a size or header mismatch is ErrCorrupt.
func (s *Store) Stat(ctx context.Context, key string) (Ref, *Header, error) {
	ref, err := s.Lookup(ctx, key)
	if err != nil {
		return Ref{}, nil, err
	}
	name := ObjectName(ref.Digest)
	r, size, err := s.be.open(ctx, name)
	if err != nil {
		return ref, nil, &Error{Path: s.be.where(name), Op: "stat", Err: err}
	}
	defer r.Close()
	if size != ref.Size {
		return ref, nil, &Error{Path: s.be.where(name), Op: "stat", Err: wrapf(ErrCorrupt, "%d bytes, expected %d", size, ref.Size)}
	}
	h, err := ReadHeader(r, size)
	if err != nil {
		return ref, nil, &Error{Path: s.be.where(name), Op: "stat", Err: errors.Join(ErrCorrupt, err)}
	}
	return ref, h, nil
}
