// Package testenv is the one switch for tests that need an oracle outside the Go toolchain (Debian's
// python3 with Pillow/NumPy/PyAV, the ffmpeg CLI, ../shared/testdata, ONNX Runtime, a server): on a
// laptop without it such a test skips; under CI (CI=true, which .ci/run sets) it fails, so a CI run
// that lost a parity oracle cannot pass by skipping it. Skips for other reasons (-short, a CPU level
// or a GPU this machine lacks) are not oracles and stay plain t.Skip.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// CI reports whether missing oracles must fail the run.
func CI() bool { return os.Getenv("CI") == "true" }

// Missing ends the test for want of an oracle: Fatal under CI, Skip elsewhere.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := "oracle missing: " + fmt.Sprintf(format, args...)
	if CI() {
		tb.Fatal(msg + " (CI=true: a missing oracle fails the run)")
	}
	tb.Skip(msg)
}

// Need returns the path of the executable name, or ends the test through Missing.
func Need(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, "%s not on PATH", name)
	}
	return p
}

// NeedFile returns path if it exists, or ends the test through Missing.
func NeedFile(tb testing.TB, path string) string {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(tb, "%v", err)
	}
	return path
}

// NeedEnv returns the value of each named environment variable, or ends the test through Missing when
// one is empty (scripts/env.sh sets the paths of installed oracles such as FRAMESWEEP_ORT_LIB).
func NeedEnv(tb testing.TB, names ...string) []string {
	tb.Helper()
	vals := make([]string, len(names))
	for i, n := range names {
		if vals[i] = os.Getenv(n); vals[i] == "" {
			Missing(tb, "%s not set (source scripts/env.sh after make deps)", n)
		}
	}
	return vals
}

// Python is Debian's interpreter, the one with python3-pil, python3-numpy and python3-av (a pyenv
// python3 earlier on PATH lacks them).
const Python = "/usr/bin/python3"

var pyChecks sync.Map // module list → error string ("" when importable)

// NeedPython returns Python once it exists and imports every named module ("PIL", "numpy", "av"),
// or ends the test through Missing. The import check runs once per module list and test binary.
func NeedPython(tb testing.TB, modules ...string) string {
	tb.Helper()
	key := strings.Join(modules, ",")
	v, ok := pyChecks.Load(key)
	if !ok {
		msg := ""
		if _, err := os.Stat(Python); err != nil {
			msg = err.Error()
		} else if len(modules) > 0 {
			if out, err := exec.Command(Python, "-c", "import "+key).CombinedOutput(); err != nil {
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				msg = fmt.Sprintf("%s cannot import %s: %v: %s", Python, key, err, lines[len(lines)-1])
			}
		}
		v, _ = pyChecks.LoadOrStore(key, msg)
	}
	if msg := v.(string); msg != "" {
		Missing(tb, "%s", msg)
	}
	return Python
}

// sharedRoot is ../shared beside the repository root (CI places it beside its clone), found from this
// file's own place in the repository, so every test finds it whatever its package's depth.
func sharedRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared")
}

// Shared returns the path of elem under ../shared (the shared test videos and the upstream oracles),
// or ends the test through Missing when it is absent.
func Shared(tb testing.TB, elem ...string) string {
	tb.Helper()
	return NeedFile(tb, filepath.Join(append([]string{sharedRoot()}, elem...)...))
}

// SharedVideos returns the directory of the shared real test videos (../shared/testdata/videos, which
// its MANIFEST.tsv describes), or ends the test through Missing.
func SharedVideos(tb testing.TB) string {
	tb.Helper()
	dir := Shared(tb, "testdata", "videos")
	NeedFile(tb, filepath.Join(dir, "MANIFEST.tsv"))
	return dir
}

// SharedVideo returns the path of one shared test video (rel: its path under SharedVideos, e.g.
// "torchcodec/nasa_13013.mp4"), or ends the test through Missing.
func SharedVideo(tb testing.TB, rel string) string {
	tb.Helper()
	return NeedFile(tb, filepath.Join(SharedVideos(tb), filepath.FromSlash(rel)))
}
