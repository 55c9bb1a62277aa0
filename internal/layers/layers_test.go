package layers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

const module = "github.com/framesweep/framesweep/"

// rule is one row of the map: what a package may import, and whether only tests may import it.
type rule struct {
	any       bool
	allowed   map[string]bool
	testsOnly bool
}

// readMap parses the table under "## Packages" in docs/architecture.md: | `pkg` | job | may import |.
func readMap(t *testing.T, path string) map[string]rule {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	code := regexp.MustCompile("`([^`]+)`")
	out := map[string]rule{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("%s: a row of the package table has %d cells, want 3: %s", path, len(cells), line)
		}
		name := code.FindStringSubmatch(cells[0])
		if name == nil {
			t.Fatalf("%s: no package in %q", path, cells[0])
		}
		r := rule{allowed: map[string]bool{}, testsOnly: strings.Contains(cells[1], "(tests only)")}
		may := strings.TrimSpace(cells[2])
		switch may {
		case "`*`":
			r.any = true
		case "—":
		default:
			for _, m := range code.FindAllStringSubmatch(may, -1) {
				r.allowed[m[1]] = true
			}
		}
		if _, dup := out[name[1]]; dup {
			t.Fatalf("%s: %s has two rows", path, name[1])
		}
		out[name[1]] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pkg is what go list says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string // outside tests
}

func listPackages(t *testing.T, root string) []pkg {
	t.Helper()
	gotool := testenv.Need(t, "go")
	cmd := exec.Command(gotool, "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var ps []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		ps = append(ps, p)
	}
	if len(ps) < 40 {
		t.Fatalf("go list gave %d packages: not the module this test reads", len(ps))
	}
	return ps
}

// check returns the ways the packages break the map.
func check(m map[string]rule, ps []pkg) []string {
	var bad []string
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.ImportPath] = true
		r, ok := m[p.ImportPath]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is not on the map (add its row to docs/architecture.md)", p.ImportPath))
			continue
		}
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if !r.any && !r.allowed[dep] {
				bad = append(bad, fmt.Sprintf("%s imports %s, which its row of the map does not allow", p.ImportPath, dep))
			}
			if m[dep].testsOnly {
				bad = append(bad, fmt.Sprintf("%s imports %s outside its tests (test support)", p.ImportPath, dep))
			}
		}
	}
	for name := range m {
		if !seen[name] {
			bad = append(bad, fmt.Sprintf("the map names %s, which is not a package", name))
		}
	}
	sort.Strings(bad)
	return bad
}

// TestImportsFollowTheMap: every package of the module is on the map of docs/architecture.md and
// imports only what its row allows; no package imports test support outside its tests.
func TestImportsFollowTheMap(t *testing.T) {
	root := filepath.Join("..", "..")
	m := readMap(t, filepath.Join(root, "docs", "architecture.md"))
	for _, b := range check(m, listPackages(t, root)) {
		t.Error(b)
	}
}

// TestCheckFindsBackDoors: the check refuses a producer reaching into the analysis, a package off
// the map, a row for nothing, and test support imported by code.
func TestCheckFindsBackDoors(t *testing.T) {
	m := map[string]rule{
		"record":                       {allowed: map[string]bool{}},
		"audit":                        {allowed: map[string]bool{"record": true}},
		"sweep":                        {allowed: map[string]bool{"record": true}},
		"internal/testsupport/testenv": {allowed: map[string]bool{}, testsOnly: true},
		"gone":                         {allowed: map[string]bool{}},
	}
	ps := []pkg{
		{ImportPath: "record"},
		{ImportPath: "audit", Imports: []string{module + "record", "fmt"}},
		{ImportPath: "sweep", Imports: []string{module + "record", module + "audit", module + "internal/testsupport/testenv"}},
		{ImportPath: "internal/testsupport/testenv"},
		{ImportPath: "newpkg"},
	}
	got := strings.Join(check(m, ps), "\n")
	for _, want := range []string{
		"sweep imports audit, which its row of the map does not allow",
		"sweep imports internal/testsupport/testenv outside its tests",
		"newpkg is not on the map",
		"the map names gone, which is not a package",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the check did not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "audit imports") {
		t.Errorf("an allowed import was refused:\n%s", got)
	}
}
