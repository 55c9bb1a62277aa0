package upstream

import (
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testenv"
)

// TestVendoredSources: the committed sources of package mtmd are exactly the pinned module's files
// with patches/*.patch applied (git apply refuses a patch whose context moved), so no edit to them
// goes unrecorded in the patch set.
func TestVendoredSources(t *testing.T) {
	testenv.Need(t, "git")
	mod, err := ModuleDir(".")
	if err != nil {
		t.Fatal(err)
	}
	diff, err := Diff(mod, filepath.Join("..", "patches"), "..")
	if err != nil {
		t.Fatal(err)
	}
	if len(diff) > 0 {
		t.Errorf("differ from %s + patches/: %v (regenerate: go run ./llm/llamacpp/internal/mtmd/upstream/cmd/sync)", Module, diff)
	}
}
