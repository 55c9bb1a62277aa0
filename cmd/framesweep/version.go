package main

import (
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/llm/llamacpp"
	"github.com/framesweep/framesweep/llm/onnx"
)

// versionReport is `framesweep version --json`: the libraries this process runs with, read from
// the linked code (shared-object versions, OpenCV's and ONNX Runtime's own version strings, the
// version and commit libggml reports and the ggml backends loaded: the CPU level's library, any GPU;
// the backend libraries skipped as damaged; the CUDA build that would load and its runtime), beside
// the versions the build pins.
type versionReport struct {
	Engine    string            `json:"engine"`
	Go        string            `json:"go"`
	Libraries map[string]string `json:"libraries"`
	Pinned    map[string]string `json:"pinned"`
}

func libraryVersions() map[string]string {
	libs := extract.Libraries()
	gv, gc := llamacpp.LinkedGGML()
	libs["llama_cpp"] = llamacpp.Release + " (ggml " + gv + " " + gc + ")"
	if bs, err := llamacpp.Backends(); err == nil {
		var names []string
		for _, b := range bs {
			names = append(names, b.String())
		}
		libs["llama_cpp_backends"] = strings.Join(names, ", ")
	} else {
		libs["llama_cpp_backends"] = "unavailable: " + oneLine(err)
	}
	if v, err := onnx.LibraryVersion(""); err == nil {
		libs["onnxruntime"] = v
	} else {
		libs["onnxruntime"] = "unavailable: " + oneLine(err)
	}
	return libs
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", stderr)
	asJSON := addJSON(fs, false)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) > 0 {
		return usageErr(stderr, "version", "unexpected argument %q", pos[0])
	}
	libs := libraryVersions()
	// What the checks before dlopen refused, and the CUDA build device=cudaN would load (found without
	// loading it; `framesweep doctor` asks the driver too). Here only, not in a RUN's libraries: they
	// hold this host's paths.
	var skipped []string
	for _, s := range llamacpp.Skipped() {
		skipped = append(skipped, s.File+": "+s.Why)
	}
	if len(skipped) > 0 {
		libs["llama_cpp_skipped"] = strings.Join(skipped, "; ")
	}
	libs["llama_cpp_cuda"] = llamacpp.ResolveCUDA(0).String()
	rep := versionReport{
		Engine: version.Engine, Go: runtime.Version(), Libraries: libs,
		Pinned: map[string]string{
			"ffmpeg": version.FFmpeg, "go-astiav": version.GoAstiav, "opencv": version.OpenCV, "gocv": version.Gocv,
			"llama_cpp": version.LlamaCpp, "node-llama-cpp": version.NodeLlamaCpp, "ggml": version.GGML + " " + version.GGMLCommit,
			"onnxruntime": version.ONNXRuntime,
		},
	}
	if *asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return failErr(stderr, "version", err)
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "framesweep %s (%s)\n", rep.Engine, rep.Go)
	for _, part := range []struct {
		title string
		m     map[string]string
	}{{"running with", rep.Libraries}, {"pinned", rep.Pinned}} {
		fmt.Fprintf(stdout, "%s:\n", part.title)
		names := make([]string, 0, len(part.m))
		for n := range part.m {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stdout, "  %-20s %s\n", n, part.m[n])
		}
	}
	return exitOK
}

// oneLine is err's message on one line.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
