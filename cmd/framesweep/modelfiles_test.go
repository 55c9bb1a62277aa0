package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/llm/testmodel"
)

// TestAskModelFilesCannotCrash: `ask` with each reproducer (testmodel.Patches: model files the pinned
// llama.cpp aborts on; before, exit 2 with a Go traceback and a debugger attached) ends in one stderr
// line naming the patched file, exit 1; the first also through the binary, as a process.
func TestAskModelFilesCannotCrash(t *testing.T) {
	bin := ""
	if !testing.Short() {
		bin = testenv.Binary(t) // before XDG_CACHE_HOME moves: go build keeps its cache there
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the load probe's records
	var first []string
	for _, p := range testmodel.Patches {
		paths, err := p.Write(t.TempDir(), testmodel.DefaultSeed)
		if err != nil {
			t.Fatal(err)
		}
		bad := paths.Model
		if p.Mmproj {
			bad = paths.Mmproj
		}
		args := []string{"ask", "--runtime", "llamacpp:model=" + paths.Model + ",mmproj=" + paths.Mmproj + ",threads=1",
			"--question", "Which?", "--options", "A. a", "B. b", "--text-only", "--json"}
		rc, out, errs := askCLI(args...)
		if rc != exitError || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, bad) || !strings.Contains(errs, p.Target) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and one line naming %s and %s", p.Name, rc, errs, bad, p.Target)
		}
		if first == nil {
			first = args
		}
	}
	if bin == "" {
		return
	}
	cmd := exec.Command(bin, first...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
		t.Errorf("the binary: %v, stderr %q; want exit 1 and one line", err, errb.String())
	}
}
