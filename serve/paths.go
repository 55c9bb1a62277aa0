package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/framesweep/framesweep/internal/engine/procfd"
)

// root is one --root: the absolute path as given and where it resolves.
type root struct {
	abs  string // absolute, cleaned, as given (may contain symlinks)
	real string // filepath.EvalSymlinks(abs): the directory opened, and what containment is checked against
}

// roots confine every video a request names.
type roots []root

func newRoots(dirs []string) (roots, error) {
	if len(dirs) == 0 {
		return nil, errors.New("at least one root is required")
	}
	var out roots
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("root %s: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("root %s: %w", d, err)
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("root %s: %w", d, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("root %s: not a directory", d)
		}
		out = append(out, root{abs: abs, real: real})
	}
	return out, nil
}

// within reports whether path p is dir or lies under it (both clean and absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// scheme matches a URL scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":") at the start.
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// video is a file opened beneath a root for one request: what the request's name led to at that moment,
// and from then on the only thing read (checked, hashed and decoded through f).
type video struct {
	f    *os.File
	path string // the kernel's name of the opened file (/proc/self/fd/N's link), inside its root
	id   fileID
}

// Close closes the request's descriptor.
func (v *video) Close() error { return v.f.Close() }

// open opens a request's video name beneath the roots and checks what it opened: a regular file still
// linked inside its root. Errors are 403 (outside every root, a symlink leading out, a URL, not a
// regular file, unreadable) or 404 (missing). The name is relative to the roots (the first root
// holding it wins) or absolute inside one; it may not contain ".." elements. Symlinks are followed
// only while they stay inside the root the name was found in (beneath.go).
func (rs roots) open(name string) (*video, error) {
	if strings.Contains(name, "://") || scheme.MatchString(name) {
		return nil, forbidden("video %q: URLs and protocols are not accepted, only paths under a root", name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return nil, forbidden("video %q: \"..\" is not allowed in a video path", name)
		}
	}
	var f *os.File
	var rt root
	var err error
	if filepath.IsAbs(name) {
		clean := filepath.Clean(name)
		rel, found := "", false
		for _, r := range rs {
			if rel, found = r.relative(clean); found {
				rt = r
				break
			}
		}
		if !found {
			return nil, forbidden("video %q: an absolute path outside every root", name)
		}
		if f, err = rt.openBeneath(rel); err != nil {
			return nil, openErr(name, err)
		}
	} else {
		var firstErr error
		for _, r := range rs {
			if f, err = r.openBeneath(name); err == nil {
				rt = r
				break
			}
			if !isMissing(err) {
				return nil, openErr(name, err)
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		if f == nil {
			return nil, openErr(name, firstErr)
		}
	}
	v, err := checkOpened(name, f, rt)
	if err != nil {
		f.Close()
		return nil, err
	}
	return v, nil
}

// checkOpened checks the file a name led to: a regular file, still linked, that the kernel names
// inside the root (a directory moved out of the root during the walk would show here).
func checkOpened(name string, f *os.File, rt root) (*video, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, statErr(name, err)
	}
	if !st.Mode().IsRegular() {
		return nil, forbidden("video %q: not a regular file (%s)", name, FileKind(st.Mode()))
	}
	id, nlink, err := fileIdentity(st)
	if err != nil {
		return nil, statErr(name, err)
	}
	if nlink == 0 {
		return nil, apiErr(http.StatusNotFound, CodeNotFound, "video %q: removed while it was opened", name)
	}
	path, err := os.Readlink(procfd.FilePath(f))
	if err != nil {
		return nil, statErr(name, err)
	}
	if !within(path, rt.real) {
		return nil, forbidden("video %q: resolves outside its root", name)
	}
	return &video{f: f, path: path, id: id}, nil
}

// openErr maps an error of openBeneath to the API.
func openErr(name string, err error) error {
	switch {
	case errors.Is(err, errEscape), errors.Is(err, unix.EXDEV):
		return forbidden("video %q: resolves (through a symlink) outside its root", name)
	case errors.Is(err, unix.ELOOP):
		return forbidden("video %q: too many symbolic links (or a link that loops, or one through /proc)", name)
	case errors.Is(err, unix.ENXIO):
		return forbidden("video %q: not a regular file (a socket or a device without a reader)", name)
	}
	return statErr(name, err)
}

// isMissing: no such file, or a path through a regular file ("a.mp4/b", ENOTDIR).
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func statErr(name string, err error) error {
	if isMissing(err) {
		return apiErr(http.StatusNotFound, CodeNotFound, "video %q: no such file under any root", name)
	}
	if errors.Is(err, fs.ErrPermission) {
		return forbidden("video %q: not readable", name)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is the server's, the name is the request's
	}
	return forbidden("video %q: %v", name, err)
}

// FileKind names a file type that is not a regular file, for errors (serve's videos, its token file).
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a " + m.Type().String() + " file"
}
