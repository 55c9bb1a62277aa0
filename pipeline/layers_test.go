package pipeline

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	decodePkg = "github.com/framesweep/framesweep/decode"
	loadPkg   = "github.com/framesweep/framesweep/loader/load"
)

// openers are the decode functions that open a video file; everything else in decode (Info, Frame,
// Stats, errors, option parsers) is a type or a value a caller may use.
var openers = map[string]bool{"Open": true, "Probe": true}

// mayOpen are the packages that may open a video with decode: decode itself, the engine's source
// layer, and the worker child that decodes for it in another process.
var mayOpen = map[string]bool{
	decodePkg: true,
	"github.com/framesweep/framesweep/pipeline":               true,
	"github.com/framesweep/framesweep/internal/engine/worker": true,
}

// TestOneSourceLayer: no package of the module outside mayOpen calls decode.Open or decode.Probe in
// its non-test source (every build-tag variant included), so serve, the sweep, bench, ask, frames,
// probe and plan reach the decoder only through pipeline.OpenVideo / OpenSource. Nor does any
// package but decode reach a decoder by a type assertion or a type switch (to decode.Video or to
// load.Reader, the back door a harness loader once came in by), and only pipeline calls load.Run: a
// loader reads what the source layer opened for it (openLocal's LocalSource). `go list -json` names
// each package's imports and files; the files of those that import decode or loader/load are parsed
// and every selector on their local names is checked. Tests may open the decoder directly: they use
// it as an independent oracle of what the engine serves.
func TestOneSourceLayer(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "github.com/framesweep/framesweep/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		ImportPath                        string
		Dir                               string
		Imports                           []string
		GoFiles, CgoFiles, IgnoredGoFiles []string
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	checked := 0
	// The readers of videos the issue names: each must be among the packages listed (and so checked,
	// when it imports decode at all).
	reached := map[string]bool{"serve": false, "sweep": false, "bench": false, "cmd/framesweep": false}
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		delete(reached, strings.TrimPrefix(p.ImportPath, "github.com/framesweep/framesweep/")) // listed: checked if it imports decode
		imports := false
		for _, im := range p.Imports {
			imports = imports || im == decodePkg || im == loadPkg
		}
		if !imports || p.ImportPath == decodePkg {
			continue
		}
		files := append(append(append([]string{}, p.GoFiles...), p.CgoFiles...), p.IgnoredGoFiles...)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			calls, err := openCalls(filepath.Join(p.Dir, f), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range calls {
				switch {
				case c.name == "assert":
					t.Errorf("%s: %s reaches a decoder by a type assertion; a loader reads a pipeline.LocalSource (openLocal)", p.ImportPath, c.pos)
				case c.name == "Run" && p.ImportPath != "github.com/framesweep/framesweep/pipeline":
					t.Errorf("%s: %s runs a harness loader with load.Run; run it through pipeline.RunLoader", p.ImportPath, c.pos)
				case openers[c.name] && !mayOpen[p.ImportPath]:
					t.Errorf("%s: %s opens a video with decode.%s; open it through pipeline.OpenVideo or pipeline.OpenSource", p.ImportPath, c.pos, c.name)
				}
			}
			checked++
		}
	}
	if checked == 0 || len(reached) > 0 {
		t.Fatalf("%d files checked; packages not reached: %v", checked, reached)
	}
	t.Logf("%d files that import decode or loader/load checked", checked)
}

type openCall struct{ pos, name string }

// localNames are the names a file imports decode and loader/load as ("" when it does not).
func localNames(f *ast.File) (dec, ld string) {
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if p != decodePkg && p != loadPkg {
			continue
		}
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		if p == decodePkg {
			dec = name
		} else {
			ld = name
		}
	}
	return dec, ld
}

// openCalls lists, in one Go file (src, or the file when src is nil), under whatever names the file
// imports decode and loader/load as: the uses of decode's openers (by name), of load.Run ("Run"), and
// the type assertions and type switch cases to decode.Video or load.Reader ("assert").
func openCalls(path string, src any) ([]openCall, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	dec, ld := localNames(f)
	if (dec == "" || dec == "_") && (ld == "" || ld == "_") {
		return nil, nil
	}
	is := func(e ast.Expr, pkg string, names map[string]bool) bool {
		if s, ok := e.(*ast.StarExpr); ok {
			e = s.X
		}
		switch x := e.(type) {
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			return ok && id.Name == pkg && names[x.Sel.Name]
		case *ast.Ident:
			return pkg == "." && names[x.Name]
		}
		return false
	}
	backDoor := func(e ast.Expr) bool {
		return is(e, dec, map[string]bool{"Video": true}) || is(e, ld, map[string]bool{"Reader": true})
	}
	var calls []openCall
	add := func(n ast.Node, name string) {
		calls = append(calls, openCall{pos: fset.Position(n.Pos()).String(), name: name})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.TypeAssertExpr:
			if x.Type != nil && backDoor(x.Type) {
				add(x, "assert")
			}
		case *ast.TypeSwitchStmt:
			for _, c := range x.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					if backDoor(e) {
						add(e, "assert")
					}
				}
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == dec && openers[x.Sel.Name] {
				add(x, x.Sel.Name)
			} else if ok && id.Name == ld && x.Sel.Name == "Run" {
				add(x, "Run")
			}
		case *ast.CallExpr:
			if id, ok := x.Fun.(*ast.Ident); ok && dec == "." && openers[id.Name] { // a dot import
				add(id, id.Name)
			}
		}
		return true
	})
	return calls, nil
}

// TestOpenCallsFinds: the checker sees an opener under any import name, also as a value, a type
// assertion or type switch to decode.Video or load.Reader, a call of load.Run, and nothing in a file
// that uses those packages' types only.
func TestOpenCallsFinds(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{`package x; import "` + decodePkg + `"; func f() { decode.Open("v", decode.Options{}) }`, 1},
		{`package x; import d "` + decodePkg + `"; var open = d.Probe; func f() { d.Open("v", d.Options{}) }`, 2},
		{`package x; import . "` + decodePkg + `"; func f() { Open("v", Options{}) }`, 1},
		{`package x; import "` + decodePkg + `"; func f(i decode.Info, s decode.Stats) error { return decode.ErrDamaged }`, 0},
		{`package x; import "os"; func f() { os.Open("v") }`, 0},
		// The back door: a decoder reached by a type assertion, and a loader run outside pipeline.
		{`package x; import "` + decodePkg + `"; func f(s any) { _ = s.(*decode.Video) }`, 1},
		{`package x; import l "` + loadPkg + `"; func f(s any) { r, _ := s.(l.Reader); _ = r }`, 1},
		{`package x; import "` + loadPkg + `"; func f(s any) { switch s.(type) { case load.Reader, int: } }`, 1},
		{`package x; import "` + loadPkg + `"; func f() { load.Run(nil, nil, "", "", nil, load.Options{}) }`, 1},
		{`package x; import "` + loadPkg + `"; func f(r load.Reader) load.Options { return load.Options{} }`, 0},
	} {
		calls, err := openCalls("x.go", c.src)
		if err != nil || len(calls) != c.want {
			t.Errorf("%s: %v calls (%v), want %d", c.src, calls, err, c.want)
		}
	}
}
