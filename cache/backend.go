package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/internal/atomicfile"
	"github.com/framesweep/framesweep/internal/bucket"
)

// backend is the storage under a Store: names are slash-separated paths relative to its root.
type backend interface {
	put(ctx context.Context, name string, parts ...[]byte) error // publishes the concatenation atomically
	// putObject publishes a content-addressed object (name = its digest) that body yields, once: an
	// object store never overwrites an intact one.
	putObject(ctx context.Context, name, digest string, body func() io.Reader) error
	get(ctx context.Context, name string, max int64) ([]byte, error)
	open(ctx context.Context, name string) (io.ReadCloser, int64, error) // a reader and the size; ErrNotFound when absent
	list(ctx context.Context, prefix string) ([]string, error)
	remove(ctx context.Context, name string) error // ErrNotFound when absent
	where(name string) string
	close() error

	// openAppend creates name for appending, each write durable once synced (the new name and any new
	// directory synced too), or returns a nil file when the backend cannot append (an object store:
	// the caller keeps what it writes and puts it whole).
	openAppend(name string) (*os.File, error)
	// spoolPlace is where a spool of an object on its way in is created (createTemp's dir and
	// pattern): beside the objects of a directory, in os.TempDir for an object store. dir is set even
	// with an error.
	spoolPlace() (dir, pattern string, err error)
	// leftovers lists the temp files of interrupted writes that lie in the store, dead (no live writer
	// holds them) and live; an object store holds none (a write is published whole).
	leftovers() (dead, live []TempFile, err error)
	// removeDeadTemps deletes the temp files dead writers through this backend left on this machine
	// (a directory's own; an object store's spools in os.TempDir) and returns them.
	removeDeadTemps() ([]TempFile, error)
}

// Both backends carry every method the Store needs, so no caller asks which one it has
// (TestNoBackendAssertions).
var (
	_ backend = (*dirBackend)(nil)
	_ backend = (*blobBackend)(nil)
)

// dirBackend writes a local directory with the crash-safe protocol
// temp file → fsync → rename → fsync(dir). fileblob does temp+rename without any fsync (and puts its
// temp files in os.TempDir, which may be another filesystem), so local paths do not go through it.
type dirBackend struct{ root string }

func (d *dirBackend) where(name string) string {
	return filepath.Join(d.root, filepath.FromSlash(name))
}

func (d *dirBackend) put(_ context.Context, name string, parts ...[]byte) error {
	return d.publish(name, func(f *os.File) error {
		for _, p := range parts {
			if _, err := f.Write(p); err != nil {
				return err
			}
		}
		return nil
	})
}

// putObject writes through the temp-file protocol, as every other name: a concurrent writer of the same
// object renames identical bytes, and a rebuild replaces a damaged one.
func (d *dirBackend) putObject(_ context.Context, name, _ string, body func() io.Reader) error {
	return d.publish(name, func(f *os.File) error {
		_, err := io.Copy(f, body()) // a MultiReader of parts (Store.Put) is one write(2) per part
		return err
	})
}

// publish writes name through a temp file in its directory: write → fsync → rename → fsync(dir). The
// temp stays open, and so locked (createTemp), until it has its final name: a temp without a lock is a
// dead writer's leftover (RemoveDeadTemps).
func (d *dirBackend) publish(name string, write func(*os.File) error) error {
	full := d.where(name)
	dir := filepath.Dir(full)
	created := missingDirs(d.root, dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := createTemp(dir, tempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp) // before Close: unlocked, it would look like a dead writer's for an instant
		}
		f.Close()
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	// rename is atomic: a concurrent writer of the same name replaces identical bytes.
	if err := os.Rename(tmp, full); err != nil {
		return err
	}
	renamed = true
	// The rename is durable only once the directory is synced; the parent too, in case MkdirAll
	// just created dir (or another writer did and has not synced yet), and the parent of every
	// further directory MkdirAll created (cas/ and cas/sha256/ on a store's first object).
	if err := atomicfile.SyncDir(dir); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	for _, c := range created {
		if p := filepath.Dir(c); p != filepath.Dir(dir) {
			if err := atomicfile.SyncDir(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// missingDirs lists dir and those of its ancestors below root that do not exist yet, deepest first.
func missingDirs(root, dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if rel, err := filepath.Rel(root, d); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			break
		}
		if _, err := os.Stat(d); err == nil {
			break
		}
		out = append(out, d)
	}
	return out
}

func (d *dirBackend) get(_ context.Context, name string, max int64) ([]byte, error) {
	f, err := os.Open(d.where(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, wrapf(ErrTooLarge, "%d bytes > %d", st.Size(), max)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	// A file that grew after Stat is not the object we sized.
	if n, _ := f.Read(make([]byte, 1)); n != 0 {
		return nil, wrapf(ErrCorrupt, "file changed while reading")
	}
	return b, nil
}

func (d *dirBackend) open(_ context.Context, name string) (io.ReadCloser, int64, error) {
	f, err := os.Open(d.where(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

func (d *dirBackend) list(_ context.Context, prefix string) ([]string, error) {
	var out []string
	root := d.where(prefix)
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			return err
		}
		if e.IsDir() || isTempName(e.Name()) {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out, err
}

func (d *dirBackend) close() error { return nil }

func (d *dirBackend) remove(_ context.Context, name string) error {
	err := os.Remove(d.where(name))
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	return err
}

// blobBackend stores through a gocloud.dev/blob bucket (package bucket; object stores publish a
// write atomically on Close; for file:// URLs use ?no_tmp_dir=1&metadata=skip so the temp file sits
// beside the object and no sidecar is written).
type blobBackend struct{ b *bucket.Bucket }

func (b *blobBackend) where(name string) string { return b.b.Where(name) }

// notFound maps the bucket's ErrNotFound to the store's.
func notFound(err error) error {
	if errors.Is(err, bucket.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

const octets = "application/octet-stream"

// putObject writes a content-addressed object once: the write is conditional (bucket.ErrExists when
// the name is taken), so an object store never overwrites one. When the name exists already (a
// concurrent writer, or a rebuild after a crash between object and ref) the existing bytes are
// re-hashed: intact, they are the object (nothing is written); damaged, they are deleted and written
// again, so a rebuild repairs what Stat or a read found corrupt.
func (b *blobBackend) putObject(ctx context.Context, name, digest string, body func() io.Reader) error {
	for attempt := 0; ; attempt++ {
		err := b.b.Write(ctx, name, body(), octets, true)
		if !errors.Is(err, bucket.ErrExists) {
			return err
		}
		ok, herr := b.intact(ctx, name, digest)
		switch {
		case herr != nil && !errors.Is(herr, ErrNotFound):
			return herr
		case ok:
			return nil
		case attempt > 0:
			return wrapf(ErrCorrupt, "%s: still damaged after a rewrite (another writer?)", b.where(name))
		}
		if err := b.remove(ctx, name); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
	}
}

// intact streams name through sha256 and compares with digest.
func (b *blobBackend) intact(ctx context.Context, name, digest string) (bool, error) {
	r, _, err := b.open(ctx, name)
	if err != nil {
		return false, err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return false, err
	}
	return hex.EncodeToString(h.Sum(nil)) == digest, nil
}

func (b *blobBackend) put(ctx context.Context, name string, parts ...[]byte) error {
	rs := make([]io.Reader, len(parts))
	for i, p := range parts {
		rs[i] = bytes.NewReader(p)
	}
	return b.b.Write(ctx, name, io.MultiReader(rs...), octets, false)
}

func (b *blobBackend) get(ctx context.Context, name string, max int64) ([]byte, error) {
	r, size, err := b.open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if size > max {
		return nil, wrapf(ErrTooLarge, "%d bytes > %d", size, max)
	}
	return io.ReadAll(io.LimitReader(r, max+1))
}

func (b *blobBackend) open(ctx context.Context, name string) (io.ReadCloser, int64, error) {
	r, size, err := b.b.NewReader(ctx, name)
	return r, size, notFound(err)
}

func (b *blobBackend) list(ctx context.Context, prefix string) ([]string, error) {
	return b.b.List(ctx, prefix)
}

func (b *blobBackend) remove(ctx context.Context, name string) error {
	return notFound(b.b.Delete(ctx, name))
}

func (b *blobBackend) close() error { return b.b.Close() }
