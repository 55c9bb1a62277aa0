//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cache

import (
	"errors"
	"os"
)

// Without flock nothing proves a temp file's writer dead: temps are written unlocked and never swept
// (Verify still lists them).

func lockTemp(*os.File) error { return nil }

func tryLockTemp(*os.File) (bool, error) { return false, errors.ErrUnsupported }

func stillLinked(f *os.File, path string) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	if path == "" {
		return true
	}
	pst, err := os.Lstat(path)
	return err == nil && os.SameFile(st, pst)
}
