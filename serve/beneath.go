package serve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Opening beneath a root. A video is opened relative to a descriptor of its root, never by its full
// name: openat2 with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, where the kernel
// refuses any step of the resolution that leaves the root (a "..", an absolute or escaping symlink, a
// /proc magic link), or, where the kernel has no openat2 (ENOSYS, or a seccomp filter's EPERM), a walk
// of one component at a time, each opened with O_NOFOLLOW relative to the directory before it, that
// reads symlinks itself and follows only those that stay inside. What is opened is the file used from
// then on (checked, hashed and decoded through the descriptor), so swapping a name between the check
// and the use changes nothing.

// useOpenat2 is false to run the walk on a kernel with openat2 (tests).
var useOpenat2 = true

// openFlags open the final component: read-only, and non-blocking so that a FIFO opens at once (and is
// then refused as not a regular file) instead of waiting for a writer.
const openFlags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK

// maxLinks bounds the symlinks one walk follows (as the kernel's 40).
const maxLinks = 40

// errEscape: the name leads outside its root.
var errEscape = errors.New("resolves outside its root")

// openBeneath opens rel (relative to the root rt) without leaving the root. Symlinks are followed while
// they stay inside it: relative ones from where they are, absolute ones when they name a path inside
// the root (as given or as resolved at start). The file may be of any type: the caller checks it.
func (rt root) openBeneath(rel string) (*os.File, error) {
	rel = filepath.Clean(rel)
	// The root itself is the operator's: it is opened by its resolved name for each request (a
	// renamed or replaced root is followed, not kept open).
	dfd, err := unix.Open(rt.real, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: rt.real, Err: err}
	}
	defer unix.Close(dfd)
	fd, err := -1, error(nil)
	if useOpenat2 {
		fd, err = unix.Openat2(dfd, rel, &unix.OpenHow{Flags: openFlags, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS})
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), rel), nil
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			// No openat2 here: the walk does its work.
		case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP):
			// An escape, a magic link, or an absolute symlink, which RESOLVE_BENEATH refuses even
			// when it names a path inside the root: the walk tells them apart.
		default:
			return nil, err
		}
	}
	if fd, err = rt.walk(dfd, rel); err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// walk resolves rel beneath the directory rootfd one component at a time, every open with O_NOFOLLOW
// relative to the directory descriptor before it; ".." pops the walk's own stack of directories
// (never above the root); symlinks are read (readlinkat) and their targets walked the same way. It
// returns a descriptor of the final file, opened with openFlags.
func (rt root) walk(rootfd int, rel string) (int, error) {
	stack := []int{rootfd} // stack[0] is the caller's
	defer func() {
		for _, d := range stack[1:] {
			unix.Close(d)
		}
	}()
	todo := components(rel)
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == ".." {
			if len(stack) == 1 {
				return -1, errEscape
			}
			unix.Close(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			continue
		}
		dir := stack[len(stack)-1]
		if target, ok, err := readlink(dir, c); err != nil {
			return -1, err
		} else if ok {
			if links++; links > maxLinks {
				return -1, unix.ELOOP
			}
			if filepath.IsAbs(target) {
				inside, ok := rt.relative(target)
				if !ok {
					return -1, errEscape
				}
				for _, d := range stack[1:] {
					unix.Close(d)
				}
				stack = stack[:1]
				target = inside
			}
			todo = append(components(target), todo...)
			continue
		}
		last := len(todo) == 0
		flags := unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			flags = openFlags | unix.O_NOFOLLOW
		}
		fd, err := unix.Openat(dir, c, flags, 0)
		if err != nil {
			// The name became a symlink since it was read: read it again (counted, so a name flipped
			// forever ends in ELOOP).
			if (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR)) && isLink(dir, c) {
				if links++; links > maxLinks {
					return -1, unix.ELOOP
				}
				todo = append([]string{c}, todo...)
				continue
			}
			return -1, err
		}
		if last {
			return fd, nil
		}
		stack = append(stack, fd)
	}
	// The name ended on a directory step ("", ".", "..", a link to a directory): open that directory
	// (the caller refuses it).
	return unix.Openat(stack[len(stack)-1], ".", openFlags, 0)
}

// relative maps an absolute symlink target to a path relative to the root, when it lies inside the
// root as given or as resolved at start.
func (rt root) relative(target string) (string, bool) {
	t := filepath.Clean(target)
	for _, dir := range []string{rt.real, rt.abs} {
		if within(t, dir) {
			return strings.TrimPrefix(strings.TrimPrefix(t, dir), "/"), true
		}
	}
	return "", false
}

// components splits a relative path into its names (empty names and "." dropped).
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// readlink reads name in dir when it is a symlink (ok true); a name that is not one is ok false, err
// nil; a missing name (or other failure) is err.
func readlink(dir int, name string) (string, bool, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dir, name, buf)
	switch {
	case err == nil:
		if n >= len(buf) {
			return "", false, unix.ENAMETOOLONG
		}
		return string(buf[:n]), true, nil
	case errors.Is(err, unix.EINVAL):
		return "", false, nil
	}
	return "", false, err
}

func isLink(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}
