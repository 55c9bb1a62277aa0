package version

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// soVersion matches a shared library's file name with its full version: libavcodec.so.59.37.100.
var soVersion = regexp.MustCompile(`^(lib[A-Za-z0-9_+-]+)\.so\.([0-9]+(?:\.[0-9]+)*)$`)

var (
	loadedOnce sync.Once
	loaded     map[string]string
)

// Loaded returns the version (x.y.z, from the file name the dynamic linker resolved) of every
// shared library mapped into this process, by library name ("libavcodec" → "59.37.100"). It reads
// /proc/self/maps, so it reports what actually runs, not what the build was pinned to; on a system
// without /proc the map is empty. The set is read once: libraries are linked at start.
func Loaded() map[string]string {
	loadedOnce.Do(func() {
		loaded = map[string]string{}
		f, err := os.Open("/proc/self/maps")
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			i := len(line) - 1
			for i >= 0 && line[i] != ' ' {
				i--
			}
			if m := soVersion.FindStringSubmatch(filepath.Base(line[i+1:])); m != nil {
				if v, ok := loaded[m[1]]; !ok || len(m[2]) > len(v) {
					loaded[m[1]] = m[2]
				}
			}
		}
	})
	out := make(map[string]string, len(loaded))
	for k, v := range loaded {
		out[k] = v
	}
	return out
}

// Library returns Loaded()[name], or "unknown".
func Library(name string) string {
	if v, ok := Loaded()[name]; ok {
		return v
	}
	return "unknown"
}
