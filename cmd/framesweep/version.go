package main

import (
	"io"
	"os"
	"runtime"

	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/llm/llamacpp"
	"github.com/framesweep/framesweep/llm/onnx"
	"github.com/framesweep/framesweep/pipeline"
)

// versionReport is `framesweep version --json`: the libraries this process runs with, read from
// the linked code (shared-object versions, OpenCV's and ONNX Runtime's own version strings,
// llama.cpp's build info), beside the versions the build pins.
type versionReport struct {
	Engine    string            `json:"engine"`
	Go        string            `json:"go"`
	Libraries map[string]string `json:"libraries"`
	Pinned    map[string]string `json:"pinned"`
}

func libraryVersions() map[string]string {
	libs := pipeline.Libraries()
	libs["llama_cpp"] = llamacpp.BuildCommit()
	if v, err := onnx.LibraryVersion(os.Getenv("FRAMESWEEP_ORT_LIB")); err == nil {
		libs["onnxruntime"] = v
	} else {
		libs["onnxruntime"] = "unavailable: " + pipeline.OneLine(err)
	}
	return libs
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", stderr)
	fs.Bool("json", true, "JSON output (the only form)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return flagParseStatus(err)
	}
	rep := versionReport{
		Engine: version.Engine, Go: runtime.Version(), Libraries: libraryVersions(),
		Pinned: map[string]string{
			"ffmpeg": version.FFmpeg, "go-astiav": version.GoAstiav, "opencv": version.OpenCV, "gocv": version.Gocv,
			"llama_cpp": version.LlamaCpp, "ollama": version.Ollama, "onnxruntime": version.ONNXRuntime,
		},
	}
	if err := writeJSON(stdout, rep); err != nil {
		return failErr(stderr, "version", err)
	}
	return exitOK
}
