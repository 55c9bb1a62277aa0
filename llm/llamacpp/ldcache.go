package llamacpp

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Where the dynamic loader finds a library by soname, in its order (ld.so(8)): LD_LIBRARY_PATH, the
// library's own run path, the cache /etc/ld.so.cache, then the default directories. The CUDA build
// choice (cuda.go) asks this of every library a build needs, without loading any of them.

// ldCachePath is the loader's cache (a variable for the tests).
var ldCachePath = "/etc/ld.so.cache"

// defaultLibDirs are the loader's trusted directories on Debian and other multiarch systems.
var defaultLibDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// ldCache reads the loader's cache (glibc's "glibc-ld.so.cache1.1" format, alone or after the old
// "ld.so-1.7.0" one) into soname → path for this machine's libraries; nil when unreadable.
func ldCache(path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 64<<20 {
		return nil
	}
	const oldMagic, newMagic = "ld.so-1.7.0\x00", "glibc-ld.so.cache1.1"
	base := 0
	if bytes.HasPrefix(b, []byte(oldMagic)) && len(b) >= 16 {
		n := int(binary.LittleEndian.Uint32(b[12:]))
		base = (16 + 12*n + 7) &^ 7 // the new format follows, 8-aligned
		if n < 0 || base > len(b) {
			return nil
		}
	}
	h := b[base:]
	if !bytes.HasPrefix(h, []byte(newMagic)) || len(h) < 48 {
		return nil
	}
	nlibs := int(binary.LittleEndian.Uint32(h[20:]))
	if nlibs < 0 || nlibs > (len(h)-48)/24 {
		return nil
	}
	// Entry flags: the ELF libc6 type (3) with the architecture bits of x86-64 (0x0300) or AArch64
	// (0x0a00).
	arch := map[string]int32{"amd64": 0x0303, "arm64": 0x0a03}[runtime.GOARCH]
	str := func(off uint32) string { // string offsets count from the new header
		o := int(off)
		if o >= len(h) {
			return ""
		}
		if end := bytes.IndexByte(h[o:], 0); end >= 0 {
			return string(h[o : o+end])
		}
		return ""
	}
	out := map[string]string{}
	for i := 0; i < nlibs; i++ {
		e := h[48+24*i:]
		flags := int32(binary.LittleEndian.Uint32(e))
		if flags != arch {
			continue
		}
		key, val := str(binary.LittleEndian.Uint32(e[4:])), str(binary.LittleEndian.Uint32(e[8:]))
		if _, seen := out[key]; key != "" && val != "" && !seen {
			out[key] = val // the cache lists the preferred entry first
		}
	}
	return out
}

// libSearch finds libraries by soname the way the loader would, with extra directories searched first
// (a Python environment's nvidia/*/lib, which the loader does not know).
type libSearch struct {
	first []string // searched before everything else
	env   []string // LD_LIBRARY_PATH
	cache map[string]string
}

// newLibSearch reads LD_LIBRARY_PATH and the loader's cache now.
func newLibSearch(first []string) *libSearch {
	s := &libSearch{first: first, cache: ldCache(ldCachePath)}
	for _, d := range filepath.SplitList(os.Getenv("LD_LIBRARY_PATH")) {
		if d != "" {
			s.env = append(s.env, d)
		}
	}
	return s
}

// Where a library was found (libSearch.where).
const (
	fromPython  = "the Python environment (" + EnvCUDAPython + ")"
	fromEnv     = "LD_LIBRARY_PATH"
	fromRunpath = "the run path"
	fromSystem  = "the system"
)

// find returns where soname resolves, searching rpath (the needing library's own run path, $ORIGIN
// expanded) after the environment; "" when nowhere.
func (s *libSearch) find(soname string, rpath []string) string {
	p, _ := s.where(soname, rpath)
	return p
}

// where is find, with which of the places above the library came from.
func (s *libSearch) where(soname string, rpath []string) (path, from string) {
	if strings.Contains(soname, "/") {
		return existing(soname), fromRunpath
	}
	for i, group := range [][]string{s.first, s.env, rpath} {
		for _, d := range group {
			if p := existing(filepath.Join(d, soname)); p != "" {
				return p, []string{fromPython, fromEnv, fromRunpath}[i]
			}
		}
	}
	if p := existing(s.cache[soname]); p != "" {
		return p, fromSystem
	}
	for _, d := range defaultLibDirs {
		if p := existing(filepath.Join(d, soname)); p != "" {
			return p, fromSystem
		}
	}
	return "", ""
}

// existing is p when it names a file (through links), else "".
func existing(p string) string {
	if p == "" {
		return ""
	}
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return ""
}
