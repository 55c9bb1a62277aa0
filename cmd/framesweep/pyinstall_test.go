package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPythonClientInstallsOffline installs integrations/python as its README says, offline
// (`pip install --no-build-isolation --no-index`: Debian's setuptools builds it, no index is asked),
// and checks that the package imports from where it went and that the source tree holds exactly the
// files it held before: no build/, no *.egg-info (setuptools runs in a temporary copy,
// _build/framesweep_build.py).
func TestPythonClientInstallsOffline(t *testing.T) {
	py := needPython(t, "pip", "setuptools", "numpy")
	src := filepath.Join(t.TempDir(), "python")
	if out, err := exec.Command("cp", "-r", filepath.Join(repoDir(t), "integrations", "python"), src).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	before := treeFiles(t, src)
	site := filepath.Join(t.TempDir(), "site")
	cmd := exec.Command(py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps", "--no-cache-dir",
		"--disable-pip-version-check", "--target", site, src)
	cmd.Env = append(os.Environ(), "PIP_NO_INPUT=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pip install --no-build-isolation: %v\n%s", err, out)
	}
	if after := treeFiles(t, src); !slices.Equal(before, after) {
		t.Fatalf("the install changed the source tree:\nbefore %v\nafter  %v", before, after)
	}
	imp := exec.Command(py, "-c", "import framesweep_client, sys; assert framesweep_client.__file__.startswith(sys.argv[1]), framesweep_client.__file__; print(framesweep_client.Client)", site)
	imp.Env = append(os.Environ(), "PYTHONPATH="+site)
	if out, err := imp.CombinedOutput(); err != nil || !strings.Contains(string(out), "Client") {
		t.Fatalf("import from %s: %v\n%s", site, err, out)
	}
}

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
