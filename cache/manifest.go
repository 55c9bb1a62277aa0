package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/framesweep/framesweep/internal/atomicfile"
)

// Manifest is one run's manifest (manifests/<run>.jsonl), written line by line as the run goes, so a
// killed run keeps the lines of everything it finished. In a local directory every Append is written
// and fsynced before it returns; a bucket cannot append, so there the whole file is published again on
// Flush and Close (a crash loses the lines since the last Flush). Safe for concurrent use.
type Manifest struct {
	mu    sync.Mutex
	s     *Store
	name  string
	f     *os.File     // local directory
	buf   bytes.Buffer // bucket: every line so far
	dirty bool
	err   error
	done  bool // closed
}

// NewManifest creates manifests/<run>.jsonl (empty until the first Append).
func (s *Store) NewManifest(ctx context.Context, run string) (*Manifest, error) {
	s.beforeWrite()
	m := &Manifest{s: s, name: path.Join("manifests", run+".jsonl")}
	f, err := s.be.openAppend(m.name)
	if err != nil {
		return nil, &Error{Path: s.be.where(m.name), Op: "manifest", Err: err}
	}
	m.f = f // nil for a bucket: the lines are kept in buf and put whole
	return m, nil
}

// openAppend creates the file name (O_EXCL: a run's manifest is new) for appending; the new name (and a
// new manifests/ directory) must survive a crash too.
func (d *dirBackend) openAppend(name string) (*os.File, error) {
	full := d.where(name)
	created := missingDirs(d.root, filepath.Dir(full))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	err = atomicfile.SyncDir(filepath.Dir(full))
	if len(created) > 0 && err == nil {
		err = atomicfile.SyncDir(d.root)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openAppend: an object store cannot append.
func (b *blobBackend) openAppend(string) (*os.File, error) { return nil, nil }

// Where is the manifest's path (a file path, or a URL for buckets).
func (m *Manifest) Where() string { return m.s.be.where(m.name) }

// Append adds one JSON line.
func (m *Manifest) Append(ctx context.Context, line any) error {
	b, err := json.Marshal(line)
	if err != nil {
		return &Error{Path: m.Where(), Op: "manifest", Err: err}
	}
	b = append(b, '\n')
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return &Error{Path: m.Where(), Op: "manifest", Err: os.ErrClosed}
	}
	if m.err != nil {
		return m.err
	}
	if m.f == nil {
		m.buf.Write(b)
		m.dirty = true
		return nil
	}
	// One write per line (O_APPEND), then fsync: the line is on disk before the caller goes on.
	if _, err := m.f.Write(b); err != nil {
		m.err = &Error{Path: m.Where(), Op: "manifest", Err: err}
		return m.err
	}
	if err := m.f.Sync(); err != nil {
		m.err = &Error{Path: m.Where(), Op: "manifest", Err: err}
	}
	return m.err
}

// Flush publishes a bucket manifest's lines so far; for a local directory every line already is.
func (m *Manifest) Flush(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil || m.f != nil || !m.dirty {
		return m.err
	}
	if err := m.s.be.put(ctx, m.name, m.buf.Bytes()); err != nil {
		m.err = &Error{Path: m.Where(), Op: "manifest", Err: err}
		return m.err
	}
	m.dirty = false
	return nil
}

// Close flushes and releases the manifest; it is idempotent.
func (m *Manifest) Close(ctx context.Context) error {
	m.mu.Lock()
	done := m.done
	m.mu.Unlock()
	if done {
		return nil
	}
	err := m.Flush(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = true
	if m.f != nil {
		if cerr := m.f.Close(); err == nil {
			err = cerr
		}
		m.f = nil
	}
	return err
}
