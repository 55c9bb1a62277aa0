package apilist

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

var update = flag.Bool("update", false, "rewrite api/framesweep.txt from the code")

const (
	module   = "github.com/framesweep/framesweep"
	listFile = "api/framesweep.txt"
	header   = `# The exported API of github.com/framesweep/framesweep: one line per exported identifier of each
# importable package (internal/ and package main are not). internal/apilist's test holds the code to
# it. After a change meant to add or remove exports:
#   go test ./internal/apilist -run TestExportedNamesAreListed -update
`
)

// listedPkg is what go list says of one package: its files under any build tags (a name a file of
// another platform or tag defines is exported there).
type listedPkg struct {
	ImportPath, Dir, Name             string
	GoFiles, CgoFiles, IgnoredGoFiles []string
}

// modulePackages lists the importable packages of the module at root.
func modulePackages(t *testing.T, root string) []listedPkg {
	t.Helper()
	cmd := exec.Command(testenv.Need(t, "go"), "list", "-e", "-json=ImportPath,Dir,Name,GoFiles,CgoFiles,IgnoredGoFiles", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var ps []listedPkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if p.Name == "main" || rel == "internal" || strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/") || strings.HasSuffix(rel, "/internal") {
			continue
		}
		p.ImportPath = rel
		ps = append(ps, p)
	}
	return ps
}

// exportsOf lists the exported names of one package's files, as "pkg P, kind …" lines.
func exportsOf(t *testing.T, p listedPkg) []string {
	t.Helper()
	fset := token.NewFileSet()
	seen := map[string]bool{}
	add := func(format string, a ...any) {
		seen[fmt.Sprintf("pkg %s, "+format, append([]any{p.ImportPath}, a...)...)] = true
	}
	files := append(append(append([]string(nil), p.GoFiles...), p.CgoFiles...), p.IgnoredGoFiles...)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" || f.Name.Name == "documentation" {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				funcExport(d, add)
			case *ast.GenDecl:
				genExports(fset, d, add)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for l := range seen {
		out = append(out, l)
	}
	return out
}

// funcExport lists an exported function, or an exported method of an exported type.
func funcExport(d *ast.FuncDecl, add func(string, ...any)) {
	if !d.Name.IsExported() {
		return
	}
	if d.Recv == nil {
		add("func %s", d.Name.Name)
		return
	}
	typ, ptr := receiver(d.Recv.List[0].Type)
	if ast.IsExported(typ) {
		add("method (%s%s) %s", ptr, typ, d.Name.Name)
	}
}

// receiver is a method's receiver type name, without type parameters, and "*" for a pointer.
func receiver(e ast.Expr) (name, ptr string) {
	if s, ok := e.(*ast.StarExpr); ok {
		ptr, e = "*", s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name, ptr
	}
	return "", ptr
}

// genExports lists the exported constants, variables and types of a declaration, with the exported
// fields of a struct and the methods of an interface.
func genExports(fset *token.FileSet, d *ast.GenDecl, add func(string, ...any)) {
	for _, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.ValueSpec:
			kind := "var"
			if d.Tok == token.CONST {
				kind = "const"
			}
			for _, n := range s.Names {
				if n.IsExported() {
					add("%s %s", kind, n.Name)
				}
			}
		case *ast.TypeSpec:
			if !s.Name.IsExported() {
				continue
			}
			typeExports(fset, s, add)
		}
	}
}

func typeExports(fset *token.FileSet, s *ast.TypeSpec, add func(string, ...any)) {
	name := s.Name.Name
	switch x := s.Type.(type) {
	case *ast.StructType:
		add("type %s struct", name)
		for _, f := range x.Fields.List {
			if len(f.Names) == 0 {
				if n, _ := receiver(f.Type); ast.IsExported(n) {
					add("type %s struct, embedded %s", name, n)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					add("type %s struct, %s", name, n.Name)
				}
			}
		}
	case *ast.InterfaceType:
		add("type %s interface", name)
		for _, m := range x.Methods.List {
			for _, n := range m.Names {
				if n.IsExported() {
					add("type %s interface, %s", name, n.Name)
				}
			}
			if len(m.Names) == 0 {
				add("type %s interface, embedded %s", name, exprString(fset, m.Type))
			}
		}
	default:
		eq := ""
		if s.Assign.IsValid() {
			eq = "= "
		}
		add("type %s %s%s", name, eq, exprString(fset, s.Type))
	}
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, fset, e)
	return strings.Join(strings.Fields(b.String()), " ")
}

// moduleAPI is the module's exported names, sorted, one line each.
func moduleAPI(t *testing.T, root string) []string {
	var all []string
	for _, p := range modulePackages(t, root) {
		all = append(all, exportsOf(t, p)...)
	}
	sort.Strings(all)
	return all
}

// readList reads a list file: its lines but blank ones and # comments.
func readList(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (write it: go test ./internal/apilist -run TestExportedNamesAreListed -update)", err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// diff is what got has that want lacks (new) and the reverse (gone).
func diff(got, want []string) (added, gone []string) {
	in := func(l []string) map[string]bool {
		m := make(map[string]bool, len(l))
		for _, x := range l {
			m[x] = true
		}
		return m
	}
	g, w := in(got), in(want)
	for _, x := range got {
		if !w[x] {
			added = append(added, x)
		}
	}
	for _, x := range want {
		if !g[x] {
			gone = append(gone, x)
		}
	}
	return added, gone
}

// TestExportedNamesAreListed: every exported name of every importable package is in
// api/framesweep.txt, and every name there is still exported; each difference is named. -update
// rewrites the list.
func TestExportedNamesAreListed(t *testing.T) {
	root := filepath.Join("..", "..")
	got := moduleAPI(t, root)
	if len(got) < 500 {
		t.Fatalf("%d exported names: not the module this test reads", len(got))
	}
	file := filepath.Join(root, listFile)
	if *update {
		if err := os.WriteFile(file, []byte(header+strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d names", listFile, len(got))
		return
	}
	added, gone := diff(got, readList(t, file))
	for _, x := range added {
		t.Errorf("a new export not in %s: %s", listFile, x)
	}
	for _, x := range gone {
		t.Errorf("%s names an export that is gone: %s", listFile, x)
	}
	if len(added)+len(gone) > 0 {
		t.Logf("if the change is meant: go test ./internal/apilist -run TestExportedNamesAreListed -update, and review the diff of %s", listFile)
	}
}

// TestListCatchesChanges: in a module written here, an export added beside the list, and a listed
// export removed, are each named; unexported names, methods of unexported types, test files,
// internal packages and package main are not part of the API.
func TestListCatchesChanges(t *testing.T) {
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
	write("go.mod", "module "+module+"\n\ngo 1.22\n")
	write("cache/cache.go", `package cache

// Store is exported; its field root is not.
type Store struct {
	Loc  string
	root string
}

func (s *Store) Close() error { return nil }
func (s *Store) sync()        {}

type backend interface{ Put() }

type dir struct{}

func (dir) Put() {}

const Version = 1

var ErrNotFound error

func Open() *Store { return nil }

func NewSpool() {}
`)
	write("cache/cache_test.go", "package cache\n\nfunc TestHelper() {}\n")
	write("internal/x/x.go", "package x\n\nfunc Hidden() {}\n")
	write("cmd/tool/main.go", "package main\n\nfunc Exported() {}\nfunc main() {}\n")
	got := moduleAPI(t, dir)
	want := []string{
		"pkg cache, const Version",
		"pkg cache, func Open",
		"pkg cache, func NewSpool",
		"pkg cache, method (*Store) Close",
		"pkg cache, type Store struct",
		"pkg cache, type Store struct, Loc",
		"pkg cache, var ErrNotFound",
		"pkg cache, func Removed",
	}
	added, gone := diff(got, want)
	if strings.Join(added, "\n") != "" || strings.Join(gone, "\n") != "pkg cache, func Removed" {
		t.Errorf("against a list without Removed: new %q, gone %q", added, gone)
	}
	added, _ = diff(got, want[:2])
	if !strings.Contains(strings.Join(added, "\n"), "pkg cache, func NewSpool") {
		t.Errorf("an export beside the list was not named: %q", added)
	}
}
