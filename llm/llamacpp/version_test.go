package llamacpp

import (
	"testing"

	"github.com/framesweep/framesweep/internal/version"
)

// TestLinkedGGML: the libggml-base this test runs is the pinned release's (read from the library).
func TestLinkedGGML(t *testing.T) {
	v, c := LinkedGGML()
	if v != version.GGML || c != version.GGMLCommit {
		t.Errorf("linked ggml %s %s, pinned %s %s", v, c, version.GGML, version.GGMLCommit)
	}
}
