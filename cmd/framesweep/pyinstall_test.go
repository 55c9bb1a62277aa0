package main

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// treeFiles lists every path under dir (relative, sorted).
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestPythonClientInstallsOffline runs the Python client's install line as README.md, docs/serve.md and
// integrations/python/README.md write it (the three must agree), in a copy of the tree with Debian's
// python3 first on PATH, offline: on Debian 12 the system Python refuses `pip install` (PEP 668), so the
// line makes a venv that sees Debian's numpy and setuptools and installs with --no-build-isolation
// (Debian's setuptools builds it, no index is asked). The venv's python then imports the package from
// the venv, and the source tree holds exactly the files it held: no build/, no *.egg-info (setuptools
// runs in a temporary copy, _build/framesweep_build.py). pip's --target install is TestServeBinary/python's.
func TestPythonClientInstallsOffline(t *testing.T) {
	t.Parallel()
	py := needPython(t, "pip", "setuptools", "numpy", "ensurepip")
	var line string
	for _, doc := range []string{"README.md", filepath.Join("docs", "serve.md"), filepath.Join("integrations", "python", "README.md")} {
		b, err := os.ReadFile(filepath.Join(repoDir(t), doc))
		if err != nil {
			t.Fatal(err)
		}
		found := ""
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "python3 -m venv ") {
				found = l
				break
			}
		}
		switch {
		case found == "":
			t.Fatalf("%s: no install line (python3 -m venv …)", doc)
		case line != "" && found != line:
			t.Fatalf("%s: install line %q, elsewhere %q", doc, found, line)
		}
		line = found
	}
	root := t.TempDir()
	src := filepath.Join(root, "integrations", "python")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", filepath.Join(repoDir(t), "integrations", "python"), src).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	before := treeFiles(t, src)
	bin := t.TempDir()
	if err := os.Symlink(py, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "PIP_NO_INPUT=1", "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	if after := treeFiles(t, src); !slices.Equal(before, after) {
		t.Fatalf("the install changed the source tree:\nbefore %v\nafter  %v", before, after)
	}
	venv := filepath.Join(root, ".venv")
	out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import framesweep_client, numpy, sys; assert framesweep_client.__file__.startswith(sys.argv[1]), framesweep_client.__file__; print(framesweep_client.Client)", venv).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Client") {
		t.Fatalf("import from the venv: %v\n%s", err, out)
	}
}
