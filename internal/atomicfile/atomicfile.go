// Package atomicfile writes a file whole or not at all: a temporary file in the same directory,
// fsynced, renamed over the target, and the directory fsynced, so a crash leaves the old file or the
// new one, never half of either (run.json, an items file).
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with b atomically (mode 0600: run.json, an items file).
func Write(path string, b []byte) error { return WritePerm(path, b, 0o600) }

// WritePerm replaces path with b atomically, with mode perm (0644: a report others read).
func WritePerm(path string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if err == nil && perm != 0o600 {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(dir)
}

// WriteNew creates path with b and mode perm whole or not at all, and never replaces a file already
// there: the temporary file is hard-linked to path, which fails when path exists (an error satisfying
// errors.Is(err, fs.ErrExist)), so of two writers racing for one name exactly one succeeds. A file
// system without hard links gets an O_EXCL create, which never replaces either but may be seen
// half-written by a reader.
func WriteNew(path string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err = os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		err = createExcl(path, b, perm)
	}
	if err != nil {
		return err
	}
	return SyncDir(dir)
}

// createExcl writes b to a new file path (O_EXCL).
func createExcl(path string, b []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// SyncDir fsyncs a directory, so a rename or a new file in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
