package layers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

const module = "github.com/framesweep/framesweep/"

// rule is one row of the package table: what a package may import, and whether only tests may import it.
type rule struct {
	any       bool
	allowed   map[string]bool
	testsOnly bool
}

// floor is one row of the floors table: its number and name, and the packages on it, each a package
// path or a pattern whose `*` stands for one path element (`internal/*` is internal/num, not
// internal/engine/worker).
type floor struct {
	n     int
	name  string
	names []string
}

// theMap is what docs/architecture.md says: the floors and the package table.
type theMap struct {
	rules  map[string]rule
	floors []floor
}

var code = regexp.MustCompile("`([^`]+)`")

// testSupport is the name of the floor that holds the test-support packages (its packages are the
// ones whose row says "(tests only)").
const testSupport = "test support"

// readMap parses docs/architecture.md: the table under "## Floors" (| N name | packages | what |) and
// the one under "## Packages" (| `pkg` | job | may import |).
func readMap(t *testing.T, file string) theMap {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := theMap{rules: map[string]rule{}}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			section = line
			continue
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("%s: a row of a table has %d cells, want 3: %s", file, len(cells), line)
		}
		switch section {
		case "## Floors":
			if fl, ok := parseFloor(t, file, cells); ok {
				m.floors = append(m.floors, fl)
			}
		case "## Packages":
			name, r := parseRule(t, file, cells)
			if name == "" {
				continue
			}
			if _, dup := m.rules[name]; dup {
				t.Fatalf("%s: %s has two rows", file, name)
			}
			m.rules[name] = r
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(m.floors) == 0 || len(m.rules) == 0 {
		t.Fatalf("%s: no floors table or no package table (%d floors, %d packages)", file, len(m.floors), len(m.rules))
	}
	return m
}

// parseFloor reads a row of the floors table; the header row ("floor | packages | …") is no floor.
func parseFloor(t *testing.T, file string, cells []string) (floor, bool) {
	num, name, _ := strings.Cut(strings.TrimSpace(cells[0]), " ")
	n, err := strconv.Atoi(num)
	if err != nil {
		if num == "floor" {
			return floor{}, false
		}
		t.Fatalf("%s: floor %q does not start with its number", file, cells[0])
	}
	fl := floor{n: n, name: strings.TrimSpace(name)}
	for _, c := range code.FindAllStringSubmatch(cells[1], -1) {
		fl.names = append(fl.names, c[1])
	}
	return fl, true
}

// parseRule reads a row of the package table; the header row names no package.
func parseRule(t *testing.T, file string, cells []string) (string, rule) {
	name := code.FindStringSubmatch(cells[0])
	if name == nil {
		if strings.TrimSpace(cells[0]) == "package" {
			return "", rule{}
		}
		t.Fatalf("%s: no package in %q", file, cells[0])
	}
	r := rule{allowed: map[string]bool{}, testsOnly: strings.Contains(cells[1], "(tests only)")}
	switch may := strings.TrimSpace(cells[2]); may {
	case "`*`":
		r.any = true
	case "—":
	default:
		for _, m := range code.FindAllStringSubmatch(may, -1) {
			r.allowed[m[1]] = true
		}
	}
	return name[1], r
}

// matches reports whether a floors-table entry names pkg: the same path, or a pattern whose `*`
// elements each stand for one element of pkg.
func matches(entry, pkg string) bool {
	if !strings.Contains(entry, "*") {
		return entry == pkg
	}
	ok, err := path.Match(entry, pkg)
	return err == nil && ok
}

// floorOf is the floor of pkg; ok is false when no floor names it. A package named by entries of two
// floors is an error.
func (m theMap) floorOf(pkg string) (f floor, ok bool, err error) {
	for _, fl := range m.floors {
		for _, e := range fl.names {
			if !matches(e, pkg) {
				continue
			}
			if ok && f.n != fl.n {
				return f, true, fmt.Errorf("%s is on two floors (%d %s and %d %s)", pkg, f.n, f.name, fl.n, fl.name)
			}
			f, ok = fl, true
		}
	}
	return f, ok, nil
}

// pkg is what go list says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string // outside tests
}

// listPackages runs go list in the module at root; fewer than least packages means it read another
// module than the one meant.
func listPackages(t *testing.T, root string, least int) []pkg {
	t.Helper()
	gotool := testenv.Need(t, "go")
	cmd := exec.Command(gotool, "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
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
	if len(ps) < least {
		t.Fatalf("go list gave %d packages: not the module this test reads", len(ps))
	}
	return ps
}

// check returns the ways the packages break the map: a package off either table, a row or floor
// entry that names nothing, an import its row does not allow, an import from a higher floor, test
// support imported outside tests, and a package whose floor and row disagree on being test support.
func check(m theMap, ps []pkg) []string {
	var bad []string
	seen := map[string]bool{}
	floorOf := map[string]floor{}
	for _, p := range ps {
		seen[p.ImportPath] = true
		f, ok, err := m.floorOf(p.ImportPath)
		switch {
		case err != nil:
			bad = append(bad, err.Error())
		case !ok:
			bad = append(bad, fmt.Sprintf("%s has no floor (add it to the floors table of docs/architecture.md)", p.ImportPath))
		default:
			floorOf[p.ImportPath] = f
		}
	}
	for _, p := range ps {
		r, ok := m.rules[p.ImportPath]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is not on the map (add its row to docs/architecture.md)", p.ImportPath))
			continue
		}
		f, floored := floorOf[p.ImportPath]
		if floored && r.testsOnly != (f.name == testSupport) {
			bad = append(bad, fmt.Sprintf("%s is on floor %d %s, but its row says (tests only) %v: test support is its own floor", p.ImportPath, f.n, f.name, r.testsOnly))
		}
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if !r.any && !r.allowed[dep] {
				bad = append(bad, fmt.Sprintf("%s imports %s, which its row of the map does not allow", p.ImportPath, dep))
			}
			if m.rules[dep].testsOnly {
				bad = append(bad, fmt.Sprintf("%s imports %s outside its tests (test support)", p.ImportPath, dep))
			}
			if g, ok := floorOf[dep]; ok && floored && g.n > f.n {
				bad = append(bad, fmt.Sprintf("%s (floor %d %s) imports %s (floor %d %s): an import from a higher floor", p.ImportPath, f.n, f.name, dep, g.n, g.name))
			}
		}
	}
	for name := range m.rules {
		if !seen[name] {
			bad = append(bad, fmt.Sprintf("the map names %s, which is not a package", name))
		}
	}
	for _, fl := range m.floors {
		for _, e := range fl.names {
			if !slicesAny(ps, func(p pkg) bool { return matches(e, p.ImportPath) }) {
				bad = append(bad, fmt.Sprintf("floor %d %s names %s, which is no package", fl.n, fl.name, e))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func slicesAny(ps []pkg, f func(pkg) bool) bool {
	for _, p := range ps {
		if f(p) {
			return true
		}
	}
	return false
}

// TestImportsFollowTheMap: every package of the module has a floor and a row on the map of
// docs/architecture.md, imports only what its row allows and nothing of a higher floor; no package
// imports test support outside its tests.
func TestImportsFollowTheMap(t *testing.T) {
	root := filepath.Join("..", "..")
	m := readMap(t, filepath.Join(root, "docs", "architecture.md"))
	for _, b := range check(m, listPackages(t, root, 40)) {
		t.Error(b)
	}
}

// TestCheckFindsBackDoors: the check refuses a producer reaching into the analysis, a package off
// the map, a row for nothing, and test support imported by code.
func TestCheckFindsBackDoors(t *testing.T) {
	m := theMap{
		rules: map[string]rule{
			"record":                       {allowed: map[string]bool{}},
			"audit":                        {allowed: map[string]bool{"record": true}},
			"sweep":                        {allowed: map[string]bool{"record": true}},
			"internal/testsupport/testenv": {allowed: map[string]bool{}, testsOnly: true},
			"gone":                         {allowed: map[string]bool{}},
		},
		floors: []floor{
			{n: 0, name: "basics", names: []string{"record", "gone"}},
			{n: 6, name: "producers", names: []string{"sweep", "newpkg"}},
			{n: 7, name: "analysis", names: []string{"audit"}},
			{n: 9, name: testSupport, names: []string{"internal/testsupport/*"}},
		},
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
		"sweep (floor 6 producers) imports audit (floor 7 analysis): an import from a higher floor",
		"sweep imports internal/testsupport/testenv outside its tests",
		"sweep (floor 6 producers) imports internal/testsupport/testenv (floor 9 test support)",
		"newpkg is not on the map",
		"the map names gone, which is not a package",
		"floor 0 basics names gone, which is no package",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the check did not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "audit imports") || strings.Contains(got, "testenv is on floor") {
		t.Errorf("an allowed import or a well-placed package was refused:\n%s", got)
	}
}

// TestFloorsAreEnforced: in a module written here, with its own docs/architecture.md read as the
// real one is, a floor-0 helper that imports the decoder (internal/num → decode), a package no floor
// names, a package two floors name, and test support on a floor of its own that its row does not mark
// "(tests only)" are each refused, the offending pair or package named; a test file importing test
// support, and test support importing a higher floor, are not.
func TestFloorsAreEnforced(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	imp := func(pkgs ...string) string {
		var b strings.Builder
		for _, p := range pkgs {
			fmt.Fprintf(&b, "import _ %q\n", module+p)
		}
		return b.String()
	}
	write("go.mod", "module "+strings.TrimSuffix(module, "/")+"\n\ngo 1.22\n")
	write("rgb/rgb.go", "package rgb\n")
	write("rgb/rgb_test.go", "package rgb\n\n"+imp("internal/testsupport/testenv"))
	write("internal/num/num.go", "package num\n\n"+imp("decode"))
	write("decode/decode.go", "package decode\n\n"+imp("rgb"))
	write("sweep/sweep.go", "package sweep\n\n"+imp("decode"))
	write("internal/testsupport/testenv/testenv.go", "package testenv\n\n"+imp("sweep"))
	write("internal/testsupport/unmarked/unmarked.go", "package unmarked\n")
	write("loose/loose.go", "package loose\n")
	write("twice/twice.go", "package twice\n")
	write("docs/architecture.md", `# the map

## Floors

| floor | packages | what lives there |
|---|---|---|
| 0 basics | `+"`rgb`, `internal/*`, `twice`"+` | x |
| 1 kernels and codecs | `+"`decode`, `twice`"+` | x |
| 6 producers | `+"`sweep`"+` | x |
| 9 test support | `+"`internal/testsupport/*`"+` | imported by tests only |

## Packages

| package | job | may import |
|---|---|---|
| `+"`rgb`"+` | x | — |
| `+"`internal/num`"+` | x | `+"`decode`"+` |
| `+"`decode`"+` | x | `+"`rgb`"+` |
| `+"`sweep`"+` | x | `+"`decode`"+` |
| `+"`internal/testsupport/testenv`"+` | x (tests only) | `+"`sweep`"+` |
| `+"`internal/testsupport/unmarked`"+` | x | — |
| `+"`loose`"+` | x | — |
| `+"`twice`"+` | x | — |
`)
	m := readMap(t, filepath.Join(dir, "docs", "architecture.md"))
	got := check(m, listPackages(t, dir, 8))
	want := []string{
		"internal/num (floor 0 basics) imports decode (floor 1 kernels and codecs): an import from a higher floor",
		"internal/testsupport/unmarked is on floor 9 test support, but its row says (tests only) false: test support is its own floor",
		"loose has no floor (add it to the floors table of docs/architecture.md)",
		"twice is on two floors (0 basics and 1 kernels and codecs)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the check said:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
