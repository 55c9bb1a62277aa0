package testenv

import (
	"encoding/json"
	"os"
	"testing"
)

// WriteFile writes b to path (mode 0644) or fails the test.
func WriteFile(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// ReadFile returns the contents of path or fails the test.
func ReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// DecodeJSON decodes b into v or fails the test naming what did not decode: a test that reads a key
// of the CLI's JSON fails on a renamed or retyped key here, not later as an index panic on an empty
// value.
func DecodeJSON(tb testing.TB, b []byte, v any) {
	tb.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		const max = 300
		s := string(b)
		if len(s) > max {
			s = s[:max] + "…"
		}
		tb.Fatalf("decoding %T: %v in %q", v, err, s)
	}
}
