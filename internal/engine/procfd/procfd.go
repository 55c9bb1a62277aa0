// Package procfd names an open file by its descriptor, for libraries that open paths (FFmpeg). Opening
// /proc/self/fd/N opens the inode descriptor N holds — the file that was opened, wherever it is now and
// whatever name now leads elsewhere — so a caller that opened and checked a file can have it decoded
// without its path being resolved again. It needs procfs mounted at /proc (Check says whether it is).
package procfd

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/framesweep/framesweep/decode"
)

// Path is the name of descriptor fd of this process.
func Path(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// Dup returns a new descriptor of f's open file (close-on-exec), owned by the caller, named name.
// Holding its own descriptor, the caller does not depend on f staying open.
func Dup(f *os.File, name string) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd := -1
	cerr := rc.Control(func(fd uintptr) { nfd, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) })
	if cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: dup: %w", name, err)
	}
	return os.NewFile(uintptr(nfd), name), nil
}

// Check reports whether /proc/self/fd names this process's descriptors (procfs mounted at /proc).
func Check() error {
	f, err := os.Open("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("opening files by descriptor needs procfs at /proc: %w", err)
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var st1, st2 unix.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) {
		if serr = unix.Fstat(int(fd), &st1); serr == nil {
			serr = unix.Stat(Path(int(fd)), &st2)
		}
	}); err != nil {
		return err
	}
	if serr != nil || st1.Dev != st2.Dev || st1.Ino != st2.Ino {
		return fmt.Errorf("opening files by descriptor needs procfs at /proc: /proc/self/fd does not name this process's descriptors (%v)", serr)
	}
	return nil
}

// Rename gives a decoder error that names the descriptor path from the file's name instead (err is
// changed in place and returned); other errors are returned as they are.
func Rename(err error, from, name string) error {
	var de *decode.Error
	if errors.As(err, &de) && de.Path == from {
		de.Path = name
	}
	return err
}

// FilePath is Path of f's descriptor. It names f's file only while f is open and reachable: the caller
// keeps f (and closes it after the last use of the name).
func FilePath(f *os.File) string { return Path(int(f.Fd())) }
