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
)

// root is one --root: the absolute path as given and where it resolves.
type root struct {
	abs  string // absolute, cleaned, as given (may contain symlinks)
	real string // filepath.EvalSymlinks(abs): what containment is checked against
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

// resolve maps a request's video name to the real path of a regular file inside one root, or a 403
// (outside every root, a symlink leaving its root, a URL, a non-regular file) / 404 (missing) error.
// The name is relative to the roots (the first root holding it wins) or absolute inside one; it may
// not contain ".." elements. Symlinks are resolved (filepath.EvalSymlinks) and containment is
// checked on the result, against the root the name was found in.
func (rs roots) resolve(name string) (string, error) {
	if strings.Contains(name, "://") || scheme.MatchString(name) {
		return "", forbidden("video %q: URLs and protocols are not accepted, only paths under a root", name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return "", forbidden("video %q: \"..\" is not allowed in a video path", name)
		}
	}
	var cand string
	var rt root
	if filepath.IsAbs(name) {
		clean := filepath.Clean(name)
		found := false
		for _, r := range rs {
			if within(clean, r.abs) || within(clean, r.real) {
				cand, rt, found = clean, r, true
				break
			}
		}
		if !found {
			return "", forbidden("video %q: an absolute path outside every root", name)
		}
		if _, err := os.Lstat(cand); err != nil {
			return "", statErr(name, err)
		}
	} else {
		var firstErr error
		for _, r := range rs {
			c := filepath.Join(r.real, name)
			if _, err := os.Lstat(c); err != nil {
				if firstErr == nil || isMissing(firstErr) && !isMissing(err) {
					firstErr = err
				}
				continue
			}
			cand, rt = c, r
			break
		}
		if cand == "" {
			return "", statErr(name, firstErr)
		}
	}
	real, err := filepath.EvalSymlinks(cand)
	if err != nil {
		return "", statErr(name, err)
	}
	if !within(real, rt.real) {
		return "", forbidden("video %q: resolves (through a symlink) outside its root", name)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", statErr(name, err)
	}
	if !st.Mode().IsRegular() {
		return "", forbidden("video %q: not a regular file (%s)", name, kind(st.Mode()))
	}
	return real, nil
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
	return forbidden("video %q: %v", name, errors.Unwrap(err))
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}
