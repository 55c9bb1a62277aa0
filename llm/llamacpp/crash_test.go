package llamacpp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/testmodel"
)

// TestModelFilesCannotCrash: each reproducer (testmodel.Patches: one value of a family's file changed
// in place, which the pinned llama.cpp aborts the process on) is refused by the Go checks in one line
// naming the patched file and the key; and with those checks off, the load probe's child aborts on it
// instead of this process, and the error names the file and llama.cpp's assertion (or signal).
func TestModelFilesCannotCrash(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, p := range testmodel.Patches {
		t.Run(p.Name, func(t *testing.T) {
			paths, err := p.Write(t.TempDir(), testmodel.DefaultSeed)
			if err != nil {
				t.Fatal(err)
			}
			bad := paths.Model
			if p.Mmproj {
				bad = paths.Mmproj
			}
			_, err = New(paths.Model, paths.Mmproj, Options{Threads: 1, Context: 1024})
			oneLine(t, "checks", err, bad, p.Target)

			goChecks = false
			defer func() { goChecks = true }()
			_, err = New(paths.Model, paths.Mmproj, Options{Threads: 1, Context: 1024})
			oneLine(t, "probe", err, bad, "load probe")
			if msg := err.Error(); !strings.Contains(msg, "llama.cpp aborted: ") && !strings.Contains(msg, "llama.cpp crashed: ") {
				t.Errorf("probe: %v, want llama.cpp's assertion or the signal", err)
			}
			t.Logf("checks off: %v", err)
		})
	}
	if LiveHandles() != 0 {
		t.Errorf("LiveHandles = %d", LiveHandles())
	}
}

// oneLine: err is an ErrModel for path, on one line, saying want.
func oneLine(t *testing.T, what string, err error, path, want string) {
	t.Helper()
	var e *llm.Error
	if !errors.Is(err, llm.ErrModel) || !errors.As(err, &e) || e.Path != path ||
		strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: err = %v, want ErrModel naming %s and %q on one line", what, err, path, want)
	}
}

// TestLoadProbe: a pair passes the probe once and is remembered across processes by its files'
// identity (a record in the user's cache directory), and EnvProbe takes only its documented values.
func TestLoadProbe(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir := t.TempDir()
	p, err := testmodel.WriteArch(dir, testmodel.ArchQwen2VL, testmodel.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if err := probe(p.Model, p.Mmproj); err != nil {
		t.Fatal(err)
	}
	key, _, err := probeKey(p.Model, p.Mmproj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cache, "framesweep", "llama-probe", key)); err != nil {
		t.Errorf("the passed probe is not remembered: %v", err)
	}
	// A changed file is another pair: its identity (size, time) differs.
	b, _ := os.ReadFile(p.Model)
	if err := os.WriteFile(p.Model, append(b, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if k2, _, _ := probeKey(p.Model, p.Mmproj); k2 == key {
		t.Error("a rewritten model keeps its probe key")
	}
	t.Setenv(EnvProbe, "sometimes")
	if err := probe(p.Model, p.Mmproj); !errors.Is(err, llm.ErrBadSpec) || !strings.Contains(err.Error(), EnvProbe) {
		t.Errorf("%s=sometimes: %v", EnvProbe, err)
	}
}
