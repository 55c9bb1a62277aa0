// Package upstream regenerates the sources of package mtmd (llm/llamacpp/internal/mtmd): llama.cpp's
// tools/mtmd (clip, mtmd, the graph builders of models/) and the public headers they include, copied
// from the pinned module github.com/ollama/ollama (which vendors llama.cpp ec98e2002), with the patch
// set in ../patches applied. `go run ./llm/llamacpp/internal/mtmd/upstream/cmd/sync` writes them;
// TestVendoredSources checks that the committed files are exactly that.
package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Module is the Go module whose vendored llama.cpp is copied (the version pinned in go.mod).
const Module = "github.com/ollama/ollama"

// Files maps each copied file (path in package mtmd) to its path in the module.
var Files = map[string]string{
	"LICENSE":         "llama/llama.cpp/LICENSE", // llama.cpp and ggml (MIT)
	"LICENSE.ollama":  "LICENSE",                 // ollama, whose patches the vendored copy carries (MIT)
	"build-info.cpp":  "llama/build-info.cpp",    // LLAMA_COMMIT, as ollama's llama package links it
	"include/llama.h": "llama/llama.cpp/include/llama.h",
}

func init() {
	for _, f := range []string{"clip.cpp", "clip.h", "clip-impl.h", "clip-model.h", "clip-graph.h", "mtmd.cpp", "mtmd.h",
		"mtmd-audio.cpp", "mtmd-audio.h"} {
		Files[f] = "llama/llama.cpp/tools/mtmd/" + f
	}
	for _, f := range []string{"models.h", "cogvlm.cpp", "glm4v.cpp", "internvl.cpp", "kimivl.cpp", "llama4.cpp", "llava.cpp",
		"minicpmv.cpp", "pixtral.cpp", "qwen2vl.cpp", "qwen3vl.cpp", "siglip.cpp", "whisper-enc.cpp"} {
		Files["models/"+f] = "llama/llama.cpp/tools/mtmd/models/" + f
	}
	for _, f := range []string{"ggml.h", "ggml-alloc.h", "ggml-backend.h", "ggml-cpp.h", "ggml-cpu.h", "ggml-opt.h", "gguf.h"} {
		Files["include/"+f] = "ml/backend/ggml/ggml/include/" + f
	}
}

// ModuleDir returns the module's directory in the module cache (go list -m, run in repo).
func ModuleDir(repo string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", Module)
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %v", Module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("go list -m %s: module not downloaded (go mod download)", Module)
	}
	return dir, nil
}

// Names returns the copied files in a fixed order.
func Names() []string {
	out := make([]string, 0, len(Files))
	for k := range Files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Sync writes the copied files from moduleDir into dst and applies every patches/*.patch of
// patchDir in name order (git apply, which refuses a patch whose context does not match).
func Sync(moduleDir, patchDir, dst string) error {
	for _, name := range Names() {
		b, err := os.ReadFile(filepath.Join(moduleDir, Files[name]))
		if err != nil {
			return err
		}
		p := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	patches, err := filepath.Glob(filepath.Join(patchDir, "*.patch"))
	if err != nil {
		return err
	}
	sort.Strings(patches)
	for _, p := range patches {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		cmd := exec.Command("git", "apply", "--whitespace=nowarn", "-p1", abs)
		cmd.Dir = dst
		cmd.Env = append(os.Environ(), "GIT_DIR=/nonexistent") // apply to the files, not to a repository
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("git apply %s: %v: %s", filepath.Base(p), err, strings.TrimSpace(errb.String()))
		}
	}
	return nil
}

// Diff regenerates into a temporary directory and returns the names of the files of dir that
// differ from it (empty when the committed sources are exactly upstream + patches).
func Diff(moduleDir, patchDir, dir string) ([]string, error) {
	tmp, err := os.MkdirTemp("", "mtmd-sync")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := Sync(moduleDir, patchDir, tmp); err != nil {
		return nil, err
	}
	var diff []string
	for _, name := range Names() {
		want, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			return nil, err
		}
		got, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) || !bytes.Equal(got, want) {
			diff = append(diff, name)
		} else if err != nil {
			return nil, err
		}
	}
	return diff, nil
}
