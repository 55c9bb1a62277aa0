package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIIsFlagsAndPrinting: the CLI's own files are flags and printing. None is over 300 lines (tests
// aside), and none lays out a geometry (a `.Layout(` call: extract and the engine do) or reaches the
// engine's planner or pass by name; the imports themselves are docs/architecture.md's row for
// cmd/framesweep, which internal/layers holds (no pipeline, no decode).
func TestCLIIsFlagsAndPrinting(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	engine := map[string]bool{"PlanJobs": true, "PlanJobsContext": true, "PlanConfigs": true, "PlanFrames": true, "RunLoader": true}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n > 300 {
			t.Errorf("%s: %d lines (at most 300: move what is not flags and printing to a package)", f, n)
		}
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, f, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); strings.HasSuffix(p, "/pipeline") || strings.HasSuffix(p, "/decode") {
				t.Errorf("%s imports %s: the CLI asks extract, sweep or serve", f, p)
			}
		}
		ast.Inspect(af, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Layout" || engine[sel.Sel.Name]) {
				t.Errorf("%s calls %s (the engine's planning, not the CLI's)", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
		checked++
	}
	if checked < 20 {
		t.Fatalf("%d files checked: not the CLI's directory", checked)
	}
}
