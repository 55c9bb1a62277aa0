package onnx

import (
	"os"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

func TestLibraryVersion(t *testing.T) {
	if os.Getenv("FRAMESWEEP_ORT_LIB") == "" {
		testenv.Missing(t, "FRAMESWEEP_ORT_LIB not set (source scripts/env.sh after make deps)")
	}
	v, err := LibraryVersion("")
	if err != nil {
		t.Fatal(err)
	}
	if v != "1.30.0" { // the library deps.sh installs
		t.Errorf("version %q, want 1.30.0", v)
	}
	if LiveHandles() != 0 {
		t.Errorf("%d live handles", LiveHandles())
	}
	if _, err := LibraryVersion("/nonexistent/libonnxruntime.so"); err == nil {
		t.Error("missing library accepted")
	}
}
