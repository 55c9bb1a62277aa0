// Package testenv is the one switch for tests that need an oracle outside the Go toolchain (Debian's
// python3 with Pillow/NumPy/PyAV, the ffmpeg CLI, ../shared/testdata, ONNX Runtime, a server): on a
// laptop without it such a test skips; under CI (CI=true, which .ci/run sets) it fails, so a CI run
// that lost a parity oracle cannot pass by skipping it.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
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
