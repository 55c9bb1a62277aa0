package extract

import (
	"bufio"
	"errors"
	"fmt"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/framesweep/framesweep/rgb"
)

// outDir is `frames --out DIR`, where every mode of `frames` writes. DIR is opened as an os.Root, so
// no name is resolved through a link to outside it, and each file is written whole as a new temporary
// file (O_EXCL) renamed over its name: a link already there is replaced, never written through, and a
// failed write leaves no half file. Before anything is written, claim refuses a DIR that holds entries
// the run does not write (another input's outputs would sit beside this one's) unless --force.
type outDir struct {
	path   string
	root   *os.Root
	others []string // entries of DIR this run does not write (kept under --force), DIR-relative
}

// openOut makes DIR (and its parents) and opens it; Close releases it.
func openOut(dir string) (*outDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &outDir{path: dir, root: r}, nil
}

// Close releases DIR; idempotent.
func (d *outDir) Close() error {
	if d == nil || d.root == nil {
		return nil
	}
	err := d.root.Close()
	d.root = nil
	return err
}

// where is name (slash-separated, DIR-relative) as a path, for the JSON and messages.
func (d *outDir) where(name string) string { return filepath.Join(d.path, filepath.FromSlash(name)) }

// claim checks DIR against the files the run writes (names, DIR-relative, slash-separated): every entry
// must be a regular file of names, or a directory names write into (whose entries are checked alike).
// Anything else is refused unless force: another input's outputs and directories force keeps (and
// lists: others), a link under an output's name force replaces (never writing through it).
func (d *outDir) claim(names []string, force bool) error {
	want, dirs := map[string]bool{}, map[string]bool{}
	for _, n := range names {
		want[n] = true
		for p := path.Dir(n); p != "."; p = path.Dir(p) {
			dirs[p] = true
		}
	}
	var others, links []string
	var walk func(dir string) error
	walk = func(dir string) error {
		f, err := d.root.Open(dir)
		if err != nil {
			return err
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return err
		}
		for _, e := range ents {
			rel := path.Join(dir, e.Name())
			switch {
			case want[rel] && e.Type().IsRegular(): // replaced whole
			case want[rel] && !e.IsDir():
				links = append(links, rel) // a link or a device: replaced under --force
			case dirs[rel] && e.IsDir():
				if err := walk(rel); err != nil {
					return err
				}
			default:
				others = append(others, rel)
			}
		}
		return nil
	}
	if err := walk("."); err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	sort.Strings(others)
	sort.Strings(links)
	switch {
	case force:
	case len(links) > 0:
		return fmt.Errorf("%s%s under the name of an output: outputs are never written through one; remove it, or --force to replace it",
			d.where(links[0]), describeEntry(d, links[0]))
	case len(others) > 0:
		return fmt.Errorf("%s holds %d entr%s this run does not write (%s%s): another input's outputs would sit beside this one's; give an empty --out, or --force to write beside them",
			d.path, len(others), plural(len(others), "y", "ies"), d.where(others[0]), describeEntry(d, others[0]))
	}
	d.others = others
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// describeEntry says what an unexpected entry is when it is not a plain file.
func describeEntry(d *outDir, name string) string {
	st, err := d.root.Lstat(name)
	switch {
	case err != nil:
		return ""
	case st.Mode()&fs.ModeSymlink != 0:
		return ": a symbolic link"
	case st.IsDir():
		return ": a directory"
	case !st.Mode().IsRegular():
		return ": not a regular file"
	}
	return ""
}

// others is the list of entries kept under --force, as paths (nil when none).
func (d *outDir) otherPaths() []string {
	var out []string
	for _, o := range d.others {
		out = append(out, d.where(o))
	}
	return out
}

// mkdir makes the directory name inside DIR (an existing directory is fine; a link is not followed
// out of DIR).
func (d *outDir) mkdir(name string) error {
	err := d.root.Mkdir(name, 0o755)
	if err == nil || errors.Is(err, fs.ErrExist) {
		if st, serr := d.root.Lstat(name); serr == nil && st.IsDir() {
			return nil
		}
		return fmt.Errorf("%s: not a directory of --out", d.where(name))
	}
	return fmt.Errorf("%s: %w", d.where(name), err)
}

var tmpSeq atomic.Int64

// create writes name whole: fill writes the bytes to a new temporary file beside it, which is renamed
// over name. It returns name's path.
func (d *outDir) create(name string, fill func(io.Writer) error) (string, error) {
	tmp := path.Join(path.Dir(name), ".tmp-"+path.Base(name)+"-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(tmpSeq.Add(1), 10))
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("%s: %w", d.where(name), err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.root.Rename(tmp, name)
	}
	if err != nil {
		_ = d.root.Remove(tmp) // a truncated file (disk full) must not sit beside the good ones
		return "", fmt.Errorf("%s: %w", d.where(name), err)
	}
	return d.where(name), nil
}

// writePNG writes an 8-bit RGB PNG (an opaque NRGBA, which png encodes as RGB) as name.
func (d *outDir) writePNG(name string, m *rgb.Image) (string, error) {
	return d.create(name, func(w io.Writer) error { return png.Encode(w, m.NRGBA()) })
}
