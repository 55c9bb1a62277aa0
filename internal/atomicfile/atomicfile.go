// Package atomicfile writes a file whole or not at all: a temporary file in the same directory,
// fsynced, renamed over the target, and the directory fsynced, so a crash leaves the old file or the
// new one, never half of either (run.json, an items file).
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with b atomically.
func Write(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
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

// SyncDir fsyncs a directory, so a rename or a new file in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
