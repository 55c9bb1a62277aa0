package cache

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoBackendAssertions: no code of the package asks which backend a Store has (a type assertion or
// type switch on a backend): what a caller needs of a backend is a method of the interface.
func TestNoBackendAssertions(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ta, ok := n.(*ast.TypeAssertExpr)
			if !ok {
				return true
			}
			typ := "a type switch"
			if ta.Type != nil {
				typ = string(src[fset.Position(ta.Type.Pos()).Offset:fset.Position(ta.Type.End()).Offset])
			}
			if strings.Contains(typ, "Backend") || ta.Type == nil && isBackendExpr(ta.X) {
				t.Errorf("%s: a type assertion on a backend (%s): give the interface the method instead", fset.Position(ta.Pos()), typ)
			}
			return true
		})
	}
}

// isBackendExpr reports whether e is a Store's backend field (x.be).
func isBackendExpr(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "be"
}
