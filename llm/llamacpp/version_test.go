package llamacpp

import (
	"testing"

	"github.com/framesweep/framesweep/internal/version"
)

func TestBuildCommit(t *testing.T) {
	if got := BuildCommit(); got != version.LlamaCpp {
		t.Errorf("linked llama.cpp %q, pinned %q", got, version.LlamaCpp)
	}
}
