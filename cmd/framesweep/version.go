package main

import (
	"io"
	"runtime"

	"github.com/framesweep/framesweep/internal/version"
)

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", stderr)
	if _, err := parseInterleaved(fs, args); err != nil {
		return flagParseStatus(err)
	}
	if err := writeJSON(stdout, map[string]string{
		"engine":      version.Engine,
		"go":          runtime.Version(),
		"ffmpeg":      version.FFmpeg,
		"opencv":      version.OpenCV,
		"llama_cpp":   version.LlamaCpp,
		"onnxruntime": version.ONNXRuntime,
	}); err != nil {
		return failErr(stderr, "version", err)
	}
	return exitOK
}
