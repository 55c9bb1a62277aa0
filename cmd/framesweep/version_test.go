package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/version"
)

// TestVersionJSON: the versions come from the running libraries (Debian 12: FFmpeg 5.1's
// libavcodec 59, OpenCV 4.6), the linked libggml reports the pinned release, and the CPU backend loaded is named.
func TestVersionJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"version", "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d %s", code, errb.String())
	}
	var rep versionReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	xyz := regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	for _, l := range []string{"libavcodec", "libavformat", "libavutil", "libswscale", "opencv"} {
		if !xyz.MatchString(rep.Libraries[l]) {
			t.Errorf("%s = %q", l, rep.Libraries[l])
		}
	}
	if rep.Libraries["llama_cpp"] != version.LlamaCpp+" (ggml "+version.GGML+" "+version.GGMLCommit+")" || rep.Engine != version.Engine {
		t.Errorf("%+v", rep)
	}
	if !strings.HasPrefix(rep.Libraries["llama_cpp_backends"], "CPU (libggml-cpu-") {
		t.Errorf("llama_cpp_backends = %q, want the CPU backend's variant", rep.Libraries["llama_cpp_backends"])
	}
	if rep.Libraries["onnxruntime"] == "" {
		t.Error("no onnxruntime entry")
	}
}
