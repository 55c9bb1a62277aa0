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
	"path"
	"strings"
	"sync"

	"github.com/framesweep/framesweep/internal/bucket"
)

// MaxObjectBytes caps what a read loads (a 256-frame 448×448 float32 object is ~0.6 GB).
const MaxObjectBytes int64 = 8 << 30

// Ref is an action-cache entry: key → the content digest and size of its object.
type Ref struct {
	Key    string `json:"key"`
	Digest string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Store is a content-addressed object store in a local directory or a gocloud.dev/blob bucket.
// It is safe for concurrent use, also by several processes on one directory.
type Store struct {
	loc string
	be  backend

	sweep    sync.Once // RemoveDeadTemps, once per Store
	swept    []TempFile
	sweepErr error
}

// beforeWrite removes dead writers' temps before this Store writes its first file: a rerun cleans up
// after the run that was killed. A failed sweep does not stop the write (RemoveDeadTemps reports it).
func (s *Store) beforeWrite() { _, _ = s.RemoveDeadTemps(context.Background()) }

// Open opens (creating if needed) the store at loc: a local directory, or a blob URL (bucket.Open:
// s3://, gs://, azblob://, file://); bucket.IsURL tells which.
func Open(ctx context.Context, loc string) (*Store, error) {
	if bucket.IsURL(loc) {
		b, err := bucket.Open(ctx, loc)
		if err != nil {
			return nil, &Error{Path: loc, Op: "open", Err: err}
		}
		return &Store{loc: loc, be: &blobBackend{b: b}}, nil
	}
	if err := os.MkdirAll(loc, 0o755); err != nil {
		return nil, &Error{Path: loc, Op: "open", Err: err}
	}
	return &Store{loc: loc, be: &dirBackend{root: loc}}, nil
}

// Close releases the bucket; it is idempotent.
func (s *Store) Close() error {
	if s == nil || s.be == nil {
		return nil
	}
	err := s.be.close()
	s.be = nil
	return err
}

// Location returns where the store lives, as given to Open.
func (s *Store) Location() string { return s.loc }

// ObjectName returns the store-relative name of the object with a content digest.
func ObjectName(digest string) string { return "cas/sha256/" + digest[:2] + "/" + digest }

func refName(key string) string { return "ac/" + key[:2] + "/" + key + ".json" }

// ObjectPath returns where an object lives (a file path for local stores, a URL for buckets).
func (s *Store) ObjectPath(digest string) string { return s.be.where(ObjectName(digest)) }

func validHex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// Put stores obj under key: the object first, then the ref, each published atomically, so a
// crash in between leaves an unreferenced object and never a dangling key.
func (s *Store) Put(ctx context.Context, key string, obj []byte) (Ref, error) {
	return s.PutParts(ctx, key, [][]byte{obj})
}

// PutParts is Put of the concatenation of parts, without building it in memory.
func (s *Store) PutParts(ctx context.Context, key string, parts [][]byte) (Ref, error) {
	if !validHex(key) {
		return Ref{}, &Error{Op: "put", Err: wrapf(ErrBadSpec, "key %q", key)}
	}
	s.beforeWrite()
	h := sha256.New()
	var size int64
	for _, p := range parts {
		h.Write(p)
		size += int64(len(p))
	}
	ref := Ref{Key: key, Digest: hex.EncodeToString(h.Sum(nil)), Size: size}
	name := ObjectName(ref.Digest)
	body := func() io.Reader {
		rs := make([]io.Reader, len(parts))
		for i, p := range parts {
			rs[i] = bytes.NewReader(p)
		}
		return io.MultiReader(rs...)
	}
	if err := s.be.putObject(ctx, name, ref.Digest, body); err != nil {
		return Ref{}, &Error{Path: s.be.where(name), Op: "write", Err: err}
	}
	return ref, s.putRef(ctx, ref)
}

// Lookup returns the ref of key without reading the object; ErrNotFound when absent.
func (s *Store) Lookup(ctx context.Context, key string) (Ref, error) {
	if !validHex(key) {
		return Ref{}, &Error{Op: "lookup", Err: wrapf(ErrBadSpec, "key %q", key)}
	}
	rname := refName(key)
	b, err := s.be.get(ctx, rname, 4096)
	if err != nil {
		return Ref{}, &Error{Path: s.be.where(rname), Op: "lookup", Err: err}
	}
	var ref Ref
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ref); err != nil || ref.Key != key || !validHex(ref.Digest) || ref.Size < 0 {
		return Ref{}, &Error{Path: s.be.where(rname), Op: "lookup", Err: wrapf(ErrCorrupt, "bad ref entry")}
	}
	return ref, nil
}

// ReadObject reads the object of ref and verifies its size and digest.
func (s *Store) ReadObject(ctx context.Context, ref Ref) ([]byte, error) {
	name := ObjectName(ref.Digest)
	b, err := s.be.get(ctx, name, MaxObjectBytes)
	if err != nil {
		return nil, &Error{Path: s.be.where(name), Op: "read", Err: err}
	}
	if int64(len(b)) != ref.Size {
		return nil, &Error{Path: s.be.where(name), Op: "read", Err: wrapf(ErrCorrupt, "%d bytes, expected %d", len(b), ref.Size)}
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != ref.Digest {
		return nil, &Error{Path: s.be.where(name), Op: "read", Err: wrapf(ErrCorrupt, "sha256 %x does not match its name", sum)}
	}
	return b, nil
}

// Get returns the verified bytes of key's object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, Ref, error) {
	ref, err := s.Lookup(ctx, key)
	if err != nil {
		return nil, Ref{}, err
	}
	b, err := s.ReadObject(ctx, ref)
	return b, ref, err
}

// Load returns key's object parsed as safetensors (digest verified, header validated strictly).
func (s *Store) Load(ctx context.Context, key string) (*File, Ref, error) {
	b, ref, err := s.Get(ctx, key)
	if err != nil {
		return nil, ref, err
	}
	f, err := ParseSafetensors(b)
	if err != nil {
		return nil, ref, &Error{Path: s.ObjectPath(ref.Digest), Op: "parse", Err: errors.Join(ErrCorrupt, err)}
	}
	return f, ref, nil
}

// Has reports whether key has a complete, intact object: the object is re-read and re-hashed (streamed,
// as Verify does, so memory stays bounded), so an extract run never skips a corrupt object. A corrupt
// one reports false with the error.
func (s *Store) Has(ctx context.Context, key string) (Ref, bool, error) {
	ref, err := s.Lookup(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return Ref{}, false, nil // no ref: never written
	}
	if err != nil {
		return Ref{}, false, err
	}
	name := ObjectName(ref.Digest)
	size, err := s.checkObject(ctx, name, ref.Digest)
	if err == nil && size != ref.Size {
		err = wrapf(ErrCorrupt, "%d bytes, expected %d", size, ref.Size)
	}
	if err != nil {
		return ref, false, &Error{Path: s.be.where(name), Op: "read", Err: err}
	}
	return ref, true, nil
}

// PutManifest writes a run's manifest (JSONL) as manifests/<run>.jsonl.
func (s *Store) PutManifest(ctx context.Context, run string, lines []any) (string, error) {
	var buf bytes.Buffer
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return "", &Error{Op: "manifest", Err: err}
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	name := path.Join("manifests", run+".jsonl")
	s.beforeWrite()
	if err := s.be.put(ctx, name, buf.Bytes()); err != nil {
		return "", &Error{Path: s.be.where(name), Op: "write", Err: err}
	}
	return s.be.where(name), nil
}

// Remove deletes key's ref and then its object (scratch stores drop inputs once used). Objects are
// shared by content, so only a store whose keys never share objects should remove them: another key
// naming the same digest loses its object (a rerun rebuilds it).
func (s *Store) Remove(ctx context.Context, key string) error {
	ref, err := s.Lookup(ctx, key)
	if err != nil {
		return err
	}
	rname := refName(key)
	if err := s.be.remove(ctx, rname); err != nil && !errors.Is(err, ErrNotFound) {
		return &Error{Path: s.be.where(rname), Op: "remove", Err: err}
	}
	name := ObjectName(ref.Digest)
	if err := s.be.remove(ctx, name); err != nil && !errors.Is(err, ErrNotFound) {
		return &Error{Path: s.be.where(name), Op: "remove", Err: err}
	}
	return nil
}
