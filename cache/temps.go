package cache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tempPrefix marks in-flight local writes (object and ref temps, spools); listings skip them.
const tempPrefix = ".tmp-"

// tempSubtrees are the store's own subtrees that hold temps: Verify and the sweep walk only these, so
// a directory that is not a cache is never walked whole.
var tempSubtrees = []string{"cas", "ac", "manifests"}

// bucketSpoolPrefix names the spools of bucket stores, which live in os.TempDir.
const bucketSpoolPrefix = "framesweep-spool-"

// createTemp creates a temp file (os.CreateTemp's dir and pattern) that holds an exclusive lock for as
// long as it stays open, so that a sweeper can tell a live writer's temp from a dead one. A sweeper may
// find the file unlocked in the instant between its creation and the lock and remove it; the writer
// sees that (no name left) and starts over.
func createTemp(dir, pattern string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		if err := lockTemp(f); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
		if stillLinked(f, f.Name()) {
			return f, nil
		}
		f.Close()
		if attempt == 8 {
			return nil, fmt.Errorf("%s: temp files keep disappearing after creation", dir)
		}
	}
}

// TempFile is a leftover temp file found by Verify or removed by RemoveDeadTemps.
type TempFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// classifyTemps walks the temps of a local store: dead are those whose lock was free (no live writer),
// live those a writer holds. With remove set, dead temps are deleted while their lock is held (so a
// writer that created one in the same instant notices and starts over). Temps whose state cannot be
// proven (no flock on this filesystem) count as live.
func classifyTemps(roots []string, match func(name string) bool, remove bool) (dead, live []TempFile, err error) {
	var errs []error
	visit := func(p string) {
		f, oerr := os.Open(p)
		if oerr != nil {
			if !errors.Is(oerr, fs.ErrNotExist) { // gone: published, or another sweeper was first
				errs = append(errs, oerr)
			}
			return
		}
		defer f.Close()
		st, _ := f.Stat()
		t := TempFile{Path: p}
		if st != nil {
			t.Size = st.Size()
		}
		free, lerr := tryLockTemp(f)
		switch {
		case lerr != nil || !free:
			live = append(live, t)
		case !stillLinked(f, p):
			// Published (renamed) or removed since it was listed: not a leftover.
		case !remove:
			dead = append(dead, t)
		default:
			if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				errs = append(errs, rerr)
				return
			}
			dead = append(dead, t)
		}
	}
	for _, root := range roots {
		werr := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				return nil
			}
			if !e.IsDir() && e.Type().IsRegular() && match(e.Name()) {
				visit(p)
			}
			return nil
		})
		if werr != nil {
			errs = append(errs, werr)
		}
	}
	return dead, live, errors.Join(errs...)
}

func isTempName(name string) bool { return strings.HasPrefix(name, tempPrefix) }

// leftovers: a directory's temps lie under its own subtrees.
func (d *dirBackend) leftovers() (dead, live []TempFile, err error) { return d.temps(false) }

func (d *dirBackend) removeDeadTemps() ([]TempFile, error) {
	dead, _, err := d.temps(true)
	return dead, err
}

// temps lists (or, with remove, deletes) the temps under the store's subtrees.
func (d *dirBackend) temps(remove bool) (dead, live []TempFile, err error) {
	roots := make([]string, len(tempSubtrees))
	for i, sub := range tempSubtrees {
		roots[i] = d.where(sub)
	}
	return classifyTemps(roots, isTempName, remove)
}

// leftovers: an object store publishes each write whole, so it holds no temp file.
func (b *blobBackend) leftovers() (dead, live []TempFile, err error) { return nil, nil, nil }

// removeDeadTemps deletes the dead spools of bucket stores in os.TempDir (top level only): this
// machine's, whichever bucket they were meant for.
func (b *blobBackend) removeDeadTemps() ([]TempFile, error) {
	tmp := os.TempDir()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	var dead []TempFile
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), bucketSpoolPrefix) {
			continue
		}
		d, _, cerr := classifyTemps([]string{filepath.Join(tmp, e.Name())}, func(string) bool { return true }, true)
		dead, err = append(dead, d...), errors.Join(err, cerr)
	}
	return dead, err
}

// RemoveDeadTemps deletes the temp files that interrupted writes left (a process killed while writing
// an object, a ref or a spool): those no live process holds locked. It is safe while other processes
// write to the same store, and runs at most once per Store: the first write does it anyway, so that a
// rerun cleans up after the run that was killed. It returns what it removed.
func (s *Store) RemoveDeadTemps(ctx context.Context) ([]TempFile, error) {
	s.sweep.Do(func() {
		if ctx.Err() != nil {
			s.sweepErr = ctx.Err()
			return
		}
		var err error
		s.swept, err = s.be.removeDeadTemps()
		if err != nil {
			s.sweepErr = &Error{Path: s.loc, Op: "remove temps", Err: err}
		}
	})
	return s.swept, s.sweepErr
}
