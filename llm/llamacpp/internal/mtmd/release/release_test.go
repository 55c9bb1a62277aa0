package release

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

const pkgDir = ".." // package mtmd

// TestSources: the committed wrappers are exactly one per source of the release's mtmd library
// (go generate ./llm/llamacpp/internal/mtmd rewrites them).
func TestSources(t *testing.T) {
	testenv.NeedFile(t, filepath.Join(pkgDir, SrcRel, "tools/mtmd/CMakeLists.txt"))
	want, err := Want(pkgDir)
	if err != nil {
		t.Fatal(err)
	}
	have, err := Have(pkgDir)
	if err != nil {
		t.Fatal(err)
	}
	for n, b := range want {
		if !bytes.Equal(have[n], b) {
			t.Errorf("%s: missing or stale (run go generate ./llm/llamacpp/internal/mtmd)", n)
		}
	}
	for n := range have {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: not a source of the release's mtmd (run go generate ./llm/llamacpp/internal/mtmd)", n)
		}
	}
	// mtmd, clip, the image and audio preprocessors and the graph builders; no helper.
	for _, f := range []string{"src_mtmd.cpp", "src_clip.cpp", "src_mtmd-image.cpp", "src_models_qwen2vl.cpp", "src_models_internvl.cpp"} {
		if want[f] == nil {
			t.Errorf("%s is not among the sources", f)
		}
	}
	for n := range want {
		if strings.Contains(n, "helper") {
			t.Errorf("%s: the helpers are not compiled", n)
		}
	}
}

// TestPinsAgree: scripts/deps.sh installs the release the constants name: the npm version it packs,
// the release node-llama-cpp's metadata names, and the commit of its source bundle.
func TestPinsAgree(t *testing.T) {
	root := filepath.Join(pkgDir, "..", "..", "..", "..")
	deps, err := os.ReadFile(filepath.Join(root, "scripts", "deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^NLC=(\S+)$`).FindSubmatch(deps); m == nil || string(m[1]) != NodeLlamaCpp {
		t.Errorf("scripts/deps.sh NLC=%q, internal/version.NodeLlamaCpp %q", m, NodeLlamaCpp)
	}
	ll := filepath.Join(root, "third_party", "llama")
	meta := testenv.NeedFile(t, filepath.Join(ll, "binariesGithubRelease.json"))
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	var rel struct{ Release string }
	if err := json.Unmarshal(b, &rel); err != nil || rel.Release != Name {
		t.Errorf("%s: release %q (%v), pinned %q", meta, rel.Release, err, Name)
	}
	c, err := os.ReadFile(filepath.Join(ll, "commit"))
	if err != nil || strings.TrimSpace(string(c)) != Commit {
		t.Errorf("third_party/llama/commit %q (%v), pinned %q", c, err, Commit)
	}
}
