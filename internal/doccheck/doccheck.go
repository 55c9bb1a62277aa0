// Package doccheck finds comments that name an identifier of this module that does not exist: a
// function moved to another package (the audit's ReadRecords, long after it became record.Read), a
// renamed type, a truncated name. Code that names a moved identifier does not compile; a comment that does still
// reads as true, and a reader follows it to nothing. TestModuleDocReferences holds the module to it.
//
// The rule, chosen so that what it reports is a stale name and not prose:
//
//   - Every comment of every .go file of the module is read (doc comments, field comments, comments
//     inside functions, tests included), not testdata, third_party, node_modules or a nested module.
//   - A reference is QUAL.Name or QUAL.Name.Member, optionally behind a *, where Name starts with an
//     upper-case letter (only exported names can be named from another package; `audit.md`,
//     `record.jsonl` and `pipeline.yaml` are file names, not references). A match that continues a
//     longer dotted or slashed word (`x.audit.Foo`, `docs/audit.Foo`, a URL) is not one.
//   - QUAL is a package of this module: the name the file imports it under, or else the package name
//     of exactly one directory of the module (a name two packages share is not resolved, and a
//     qualifier that names no package of the module, `json.Number`, `torch.Tensor`, is not ours).
//   - Name must be a top-level function, type, variable or constant of that package in any of its
//     files (every build tag). Member, when given and Name is a type, must be one of its methods,
//     fields or interface methods; a type that embeds another may have promoted members, so its
//     members are not checked. QUAL.Name* (a * right after the name) names a family of names: one
//     of them must start with Name.
package doccheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Stale is one comment reference to an identifier that does not exist.
type Stale struct {
	Pos  token.Position // where the reference stands
	Ref  string         // as written, without the *
	Why  string         // what is missing
	Path string         // the import path QUAL resolved to
}

func (s Stale) String() string { return fmt.Sprintf("%s: %s: %s", s.Pos, s.Ref, s.Why) }

// pkgInfo is what one package of the module defines.
type pkgInfo struct {
	name    string
	decls   map[string]bool            // top-level names
	types   map[string]bool            // the type names among them
	members map[string]map[string]bool // type → its methods and fields
	open    map[string]bool            // types whose members are not checked (they embed another)
}

// ref matches QUAL.Name[.Member]; the character before it is checked apart (Go's regexp has no
// look-behind).
var ref = regexp.MustCompile(`\b([a-z][a-z0-9_]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?`)

// Check reads the module whose go.mod is in root and returns its stale comment references, sorted
// by position.
func Check(root string) ([]Stale, error) {
	modPath, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	files := map[string][]*ast.File{} // import path → files (tests included)
	pkgs := map[string]*pkgInfo{}     // import path → definitions
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(root, p, d.Name())
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		ip := modPath
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		files[ip] = append(files[ip], f)
		if !strings.HasSuffix(p, "_test.go") && !strings.HasSuffix(f.Name.Name, "_test") {
			define(pkgs, ip, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	byName := map[string][]string{} // package name → import paths
	for ip, pi := range pkgs {
		byName[pi.name] = append(byName[pi.name], ip)
	}
	var out []Stale
	for _, fs := range files {
		for _, f := range fs {
			out = append(out, checkFile(fset, f, modPath, pkgs, byName)...)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	return out, nil
}

// skipDir leaves out what is not the module's own code: data, vendored trees, hidden directories and
// nested modules.
func skipDir(root, p, name string) error {
	if p == root {
		return nil
	}
	switch {
	case name == "testdata" || name == "third_party" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_"):
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
}

// define records the top-level names of one non-test file of package ip.
func define(pkgs map[string]*pkgInfo, ip string, f *ast.File) {
	pi := pkgs[ip]
	if pi == nil {
		pi = &pkgInfo{name: f.Name.Name, decls: map[string]bool{}, types: map[string]bool{}, members: map[string]map[string]bool{}, open: map[string]bool{}}
		pkgs[ip] = pi
	}
	member := func(typ, name string) {
		if pi.members[typ] == nil {
			pi.members[typ] = map[string]bool{}
		}
		pi.members[typ][name] = true
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				pi.decls[d.Name.Name] = true
			} else if t := recvType(d.Recv.List[0].Type); t != "" {
				member(t, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					pi.decls[s.Name.Name], pi.types[s.Name.Name] = true, true
					typeMembers(pi, s, member)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						pi.decls[n.Name] = true
					}
				}
			}
		}
	}
}

// typeMembers records a type's fields or interface methods; one that embeds another is open.
func typeMembers(pi *pkgInfo, s *ast.TypeSpec, member func(typ, name string)) {
	var fields *ast.FieldList
	switch t := s.Type.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return
	}
	for _, fl := range fields.List {
		if len(fl.Names) == 0 {
			pi.open[s.Name.Name] = true
		}
		for _, n := range fl.Names {
			member(s.Name.Name, n.Name)
		}
	}
}

// recvType is the type name of a method's receiver (T, *T, T[K], *T[K]).
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// checkFile checks every comment of f.
func checkFile(fset *token.FileSet, f *ast.File, modPath string, pkgs map[string]*pkgInfo, byName map[string][]string) []Stale {
	imported := map[string]string{} // local name → import path, this module's imports only
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if pkgs[p] == nil {
			continue
		}
		name := pkgs[p].name
		if im.Name != nil {
			name = im.Name.Name
		}
		imported[name] = p
	}
	var out []Stale
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			for _, m := range ref.FindAllStringSubmatchIndex(c.Text, -1) {
				if m[0] > 0 && strings.ContainsRune("./-_:@#$%&=~\\", rune(c.Text[m[0]-1])) || m[0] > 0 && isWord(c.Text[m[0]-1]) {
					continue // part of a longer dotted or slashed word: a path, a URL, a module path
				}
				qual, name := c.Text[m[2]:m[3]], c.Text[m[4]:m[5]]
				memberName := ""
				if m[6] >= 0 {
					memberName = c.Text[m[6]:m[7]]
				}
				ip, ok := imported[qual]
				if !ok {
					if ips := byName[qual]; len(ips) == 1 {
						ip = ips[0]
					} else {
						continue // not a package of the module, or a name two packages share
					}
				}
				if m[1] < len(c.Text) && c.Text[m[1]] == '*' && memberName == "" {
					name += "*" // a family: loader.Count* for CountHeader, CountDecoded, …
				}
				if why := missing(pkgs[ip], name, memberName); why != "" {
					pos := fset.Position(c.Slash)
					pos.Offset += m[0]
					pos.Column += m[0] // the comment is one line (//) or the position of its start (/*)
					out = append(out, Stale{Pos: pos, Ref: c.Text[m[0]:m[1]], Why: why, Path: ip})
				}
			}
		}
	}
	return out
}

func isWord(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// missing says what of name (and member) package pi lacks; "" when it has them.
func missing(pi *pkgInfo, name, member string) string {
	if prefix, ok := strings.CutSuffix(name, "*"); ok {
		for d := range pi.decls {
			if strings.HasPrefix(d, prefix) {
				return ""
			}
		}
		return fmt.Sprintf("package %s has no name starting with %s", pi.name, prefix)
	}
	switch {
	case !pi.decls[name]:
		return fmt.Sprintf("package %s has no %s", pi.name, name)
	case member != "" && pi.types[name] && !pi.open[name] && !pi.members[name][member]:
		return fmt.Sprintf("%s.%s has no method or field %s", pi.name, name, member)
	}
	return ""
}
