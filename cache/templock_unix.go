//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cache

import (
	"errors"
	"os"
	"syscall"
)

// flock applies how (LOCK_EX, LOCK_EX|LOCK_NB) to f. flock locks belong to the open file description, so
// two opens of one file conflict even inside one process, and the kernel drops a lock when its process
// dies in any way, kill -9 included: a temp file nobody holds locked has no live writer.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), how); ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// lockTemp holds an exclusive lock on a temp file being written, until it is closed. On a filesystem
// without flock the write goes ahead unlocked: tryLockTemp fails there too, so no sweeper removes it.
func lockTemp(f *os.File) error {
	if err := flock(f, syscall.LOCK_EX); err != nil && !lockUnsupported(err) {
		return err
	}
	return nil
}

// tryLockTemp reports whether f's lock was free (and is now held by f): proof that no live process is
// writing it. An error means nothing is proven.
func tryLockTemp(f *os.File) (bool, error) {
	err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func lockUnsupported(err error) bool {
	return errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.ENOSYS)
}

// stillLinked reports whether f still has a name (a sweeper may have removed it in the instant between
// its creation and its lock) and, when path is given, whether path still names f.
func stillLinked(f *os.File, path string) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok && s.Nlink == 0 {
		return false
	}
	if path == "" {
		return true
	}
	pst, err := os.Lstat(path)
	return err == nil && os.SameFile(st, pst)
}
