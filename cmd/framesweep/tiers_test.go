package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestTiersNameRealTests holds the Makefile's INTEGRATION list (the tests `make test` runs on the plain
// binary beside the race step, docs/testing.md) to the code: each name is a test of cmd/framesweep or
// deploy/slurm, the packages the integration step runs, and no test elsewhere in the module has that
// name, since the race step skips the names in every package. A test renamed away from the list runs in
// the race step on the race-built binary; a name no test has fails here.
func TestTiersNameRealTests(t *testing.T) {
	t.Parallel()
	root := repoDir(t)
	mk := string(testenv.ReadFile(t, filepath.Join(root, "Makefile")))
	m := regexp.MustCompile(`(?m)^INTEGRATION := (.+)$`).FindStringSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no INTEGRATION := line")
	}
	listed := strings.Split(strings.TrimSpace(m[1]), "|")
	where := map[string][]string{} // test name → packages declaring it
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "third_party" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, sm := range decl.FindAllStringSubmatch(string(b), -1) {
			where[sm[1]] = append(where[sm[1]], filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range listed {
		pkgs := where[name]
		switch {
		case len(pkgs) == 0:
			t.Errorf("Makefile INTEGRATION names %s: no such test", name)
		case len(pkgs) > 1:
			t.Errorf("Makefile INTEGRATION names %s, a test of %v: the race step would skip it in each", name, pkgs)
		case pkgs[0] != "cmd/framesweep" && pkgs[0] != "deploy/slurm":
			t.Errorf("Makefile INTEGRATION names %s of %s: the integration step runs only cmd/framesweep and deploy/slurm", name, pkgs[0])
		}
	}
}
