package pipeline

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const decodePkg = "github.com/framesweep/framesweep/decode"

// openers are the decode functions that open a video file; everything else in decode (Info, Frame,
// Stats, errors, option parsers) is a type or a value a caller may use.
var openers = map[string]bool{"Open": true, "Probe": true}

// mayOpen are the packages that may open a video with decode: decode itself, the engine's source
// layer, and the worker child that decodes for it in another process.
var mayOpen = map[string]bool{
	decodePkg: true,
	"github.com/framesweep/framesweep/pipeline":        true,
	"github.com/framesweep/framesweep/internal/worker": true,
}

// TestOneSourceLayer: no package of the module outside mayOpen calls decode.Open or decode.Probe in
// its non-test source (every build-tag variant included), so serve, the sweep, bench, ask, frames,
// probe and plan reach the decoder only through pipeline.OpenVideo / OpenSource. `go list -json` names
// each package's imports and files; the files of those that import decode are parsed and every
// selector on decode's local name is checked. Tests may open the decoder directly: they use it as an
// independent oracle of what the engine serves.
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
			imports = imports || im == decodePkg
		}
		if !imports || mayOpen[p.ImportPath] {
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
				t.Errorf("%s: %s opens a video with decode.%s; open it through pipeline.OpenVideo or pipeline.OpenSource", p.ImportPath, c.pos, c.name)
			}
			checked++
		}
	}
	if checked == 0 || len(reached) > 0 {
		t.Fatalf("%d files checked; packages not reached: %v", checked, reached)
	}
	t.Logf("%d files that import decode checked", checked)
}

type openCall struct{ pos, name string }

// openCalls lists the uses of decode's openers in one Go file (src, or the file when src is nil),
// under whatever name the file imports decode as.
func openCalls(path string, src any) ([]openCall, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	name := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == decodePkg {
			name = "decode"
			if im.Name != nil {
				name = im.Name.Name
			}
		}
	}
	if name == "" || name == "_" {
		return nil, nil
	}
	var calls []openCall
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && (x.Name == name || name == ".") && openers[sel.Sel.Name] {
			calls = append(calls, openCall{pos: fset.Position(sel.Pos()).String(), name: sel.Sel.Name})
		}
		return true
	})
	if name == "." { // a dot import: the openers are bare identifiers
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && openers[id.Name] {
					calls = append(calls, openCall{pos: fset.Position(id.Pos()).String(), name: id.Name})
				}
			}
			return true
		})
	}
	return calls, nil
}

// TestOpenCallsFinds: the checker sees an opener under any import name, also as a value, and nothing
// in a file that uses decode's types only.
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
	} {
		calls, err := openCalls("x.go", c.src)
		if err != nil || len(calls) != c.want {
			t.Errorf("%s: %v calls (%v), want %d", c.src, calls, err, c.want)
		}
	}
}
