package grid

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/sampler"
)

func TestExampleGrid(t *testing.T) {
	g, err := Load("../examples/grid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// (3 uniform + 3 nested + 3×2 random + (3+1) qwen + (3+1) lmms-eval) × 3 resolutions × 2 pipelines + text-only
	if len(g.Configs) != 121 {
		t.Fatalf("%d configs", len(g.Configs))
	}
	ids := map[string]*Config{}
	for i := range g.Configs {
		c := &g.Configs[i]
		if ids[c.ID] != nil {
			t.Fatalf("duplicate id %s", c.ID)
		}
		ids[c.ID] = c
	}
	for _, id := range []string{"f16-uniform-448x448-raw", "f8-random-s1-224x224-cached", "fps1-qwen2.5-vl-qwen2.5-vl-raw", "text-only"} {
		if ids[id] == nil {
			t.Fatalf("no config %s", id)
		}
	}
	c := ids["f32-uniform-448x448-raw"]
	if c.VisualTokens != 32*256 || !c.OverContext || c.Geometry() == nil {
		t.Fatalf("matched grid: %+v", c)
	}
	if a, b := ids["f8-uniform-448x448-raw"], ids["f32-uniform-224x224-raw"]; a.IsoGroup == "" || a.IsoGroup != b.IsoGroup || a.OverContext {
		t.Fatalf("iso groups %q %q", a.IsoGroup, b.IsoGroup)
	}
	// Qwen geometry at the 1920x1080 source: 560x1008 → 720 tokens per 2 frames (SAMPLING.md §1).
	if q := ids["f8-uniform-qwen2.5-vl-raw"]; q.VisualTokens != 4*720 {
		t.Fatalf("qwen geometry tokens %d", q.VisualTokens)
	}
	// Deterministic: the same file gives the same ids in the same order.
	g2, _ := Load("../examples/grid.yaml")
	for i := range g.Configs {
		if g.Configs[i].ID != g2.Configs[i].ID {
			t.Fatal("ids not deterministic")
		}
	}
	// Every config plans a 60 s video; the union is what one decode pass needs.
	v := sampler.Video{Frames: 1800, FPS: 30}
	var plans []sampler.Selection
	for _, cp := range g.SelectAll(v) {
		if cp.Err != nil {
			t.Fatalf("%s: %v", cp.Config.ID, cp.Err)
		}
		plans = append(plans, cp.Selection)
	}
	u := sampler.Union(plans...)
	if u.Size == 0 || u.Size >= u.Requested || u.Shared == 0 {
		t.Fatalf("union %+v", u)
	}
	// nested configs in the grid are subsets of each other.
	p8, _ := ids["f8-nested-448x448-raw"].Select(v)
	p32, _ := ids["f32-nested-448x448-raw"].Select(v)
	for _, x := range p8.Indices {
		if !slices.Contains(p32.Indices, x) {
			t.Fatalf("nested f8 frame %d not in f32", x)
		}
	}
	tp, err := ids["text-only"].Select(v)
	if err != nil || len(tp.Indices) != 0 || tp.Policy != "text-only" {
		t.Fatalf("text-only plan %+v %v", tp, err)
	}
}

func TestGridPlanErrors(t *testing.T) {
	g, err := Parse([]byte("frames: [4, 64]\npolicies: [nested, uniform]\npresets: [qwen2.5-vl]\n"))
	if err != nil {
		t.Fatal(err)
	}
	v := sampler.Video{Frames: 20, FPS: 10}
	var failed []string
	for _, cp := range g.SelectAll(v) {
		if cp.Err != nil {
			if !errors.Is(cp.Err, sampler.ErrBudget) || !strings.Contains(cp.Err.Error(), cp.Config.ID) {
				t.Fatalf("%s: %v", cp.Config.ID, cp.Err)
			}
			failed = append(failed, cp.Config.ID)
		} else if len(cp.Selection.Indices) != cp.Config.Frames {
			t.Fatalf("%s: %v", cp.Config.ID, cp.Selection.Indices)
		}
	}
	// The 4-frame nested config still works on a 20-frame video: the ladder keeps budgets that fit.
	// The preset's configs take its geometry (no resolutions given), named in their ids.
	if !slices.Equal(failed, []string{"f64-nested-raw", "f64-uniform-raw", "f64-qwen2.5-vl-qwen2.5-vl-raw"}) {
		t.Fatalf("failed %v", failed)
	}
}

func TestGridDrop(t *testing.T) {
	g, err := Parse([]byte(`
frames: [8, 16, 32]
policies: [uniform]
resolutions: ["448x448"]
text_only: true
model: {context: 4096, prompt_tokens: 100, tokens_per_frame: 256, over_context: drop}
`))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range g.Configs {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(ids, []string{"f8-uniform-448x448-raw", "text-only"}) || !slices.Equal(g.Dropped, []string{"f16-uniform-448x448-raw", "f32-uniform-448x448-raw"}) {
		t.Fatalf("kept %v dropped %v", ids, g.Dropped)
	}
}

func TestGridErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		err        error
		msg        string
	}{
		{"empty", "", ErrGrid, "empty"},
		{"malformed", "frames: [8\n", ErrGrid, "malformed"},
		{"second document after an empty one", "frames: [8]\npolicies: [uniform]\n---\n---\nfoo: 1\n", ErrGrid, "one YAML document"},
		{"second document", "frames: [8]\npolicies: [uniform]\n---\nframes: [16]\n", ErrGrid, "one YAML document"},
		{"unknown field", "frames: [8]\npolicies: [uniform]\nframez: 3\n", ErrGrid, "framez"},
		{"unknown preset", "frames: [8]\npresets: [qwen9]\n", sampler.ErrUnknown, "qwen9"},
		{"policy as preset", "frames: [8]\npresets: [uniform]\n", sampler.ErrUnknown, "uniform"},
		{"no samplers", "frames: [8]\n", ErrGrid, "no policies"},
		{"no budgets", "policies: [uniform]\n", ErrGrid, "no frames"},
		{"zero budget", "frames: [0]\npolicies: [uniform]\n", ErrGrid, "budget 0"},
		{"budget over the limit", "frames: [131073]\npolicies: [uniform]\n", ErrGrid, "outside [1, 131072]"},
		{"dup budget", "frames: [8, 8]\npolicies: [uniform]\n", ErrGrid, "twice"},
		{"bad fps", "sample_fps: [-1]\npolicies: [fps]\n", ErrGrid, "sample_fps"},
		{"fps policy without fps", "frames: [8]\npolicies: [fps]\n", ErrGrid, "needs sample_fps"},
		{"frames-only preset without frames", "sample_fps: [1]\npresets: [videomme]\n", ErrGrid, "no fps mode"},
		{"bad pipeline", "frames: [8]\npolicies: [uniform]\npipelines: [jpeg]\n", ErrGrid, "jpeg"},
		{"bad resolution", "frames: [8]\npolicies: [uniform]\nresolutions: [\"abc\"]\n", ErrGrid, "resolutions"},
		{"bad torch", "frames: [8]\npolicies: [uniform]\noptions: {torch: \"9\"}\n", ErrGrid, "torch"},
		{"bad context", "frames: [8]\npolicies: [uniform]\nmodel: {context: 0}\n", ErrGrid, "context"},
		{"iso without tokens", "frames: [8]\npolicies: [uniform]\niso_compute: true\n", ErrGrid, "iso_compute"},
		{"tokens for unknown resolution", "frames: [8]\npolicies: [uniform]\nmodel: {context: 10, tokens_per_resolution: {\"1x1\": 3}}\n", ErrGrid, "1x1"},
		{"bad source size", "frames: [8]\npolicies: [uniform]\nmodel: {context: 10, source_size: big}\n", ErrGrid, "source_size"},
		{"too many configs", "frames: [" + budgetsCSV(400) + "]\npolicies: [random]\nseeds: [" + budgetsCSV(400) + "]\n", ErrGrid, "limit"},
		{"negative seed", "frames: [8]\npolicies: [random]\nseeds: [-1]\n", ErrGrid, "line 3: grid: seeds[0]: -1 is negative"},
		{"not a mapping", "a,b\n", ErrGrid, "line 1: grid: a grid is a YAML mapping of fields (frames:, policies:, …), this is a single value"},
		{"a list", "- frames: [8]\n", ErrGrid, "this is a list"},
		{"fractional budget", "frames: [8.5]\npolicies: [uniform]\n", ErrGrid, `line 1: grid: frames[0]: "8.5" is not an integer`},
		{"float budget", "policies: [uniform]\nframes:\n  - 4\n  - 8.0\n", ErrGrid, `line 4: grid: frames[1]: "8.0" is not an integer`},
		{"exponent budget", "frames: [1e2]\npolicies: [uniform]\n", ErrGrid, `frames[0]: "1e2" is not an integer`},
		{"budget past int64", "frames: [100000000000000000000]\npolicies: [uniform]\n", ErrGrid, "frames[0]: 100000000000000000000 is out of range"},
		{"string budget", "frames: [\"8\"]\npolicies: [uniform]\n", ErrGrid, `frames[0]: "8" is not an integer`},
		{"bool budget", "frames: [true]\npolicies: [uniform]\n", ErrGrid, `frames[0]: "true" is not an integer`},
		{"nested list budget", "frames: [[8]]\npolicies: [uniform]\n", ErrGrid, "frames[0]: want an integer, got a list"},
		{"fractional seed", "frames: [8]\npolicies: [random]\nseeds: [1.5]\n", ErrGrid, `line 3: grid: seeds[0]: "1.5" is not an integer`},
		{"fractional min_frames", "sample_fps: [1]\npolicies: [fps]\noptions:\n  min_frames: 2.5\n", ErrGrid, `line 4: grid: options.min_frames: "2.5" is not an integer`},
		{"fractional max_frames", "sample_fps: [1]\npolicies: [fps]\noptions: {max_frames: 64.0}\n", ErrGrid, `options.max_frames: "64.0" is not an integer`},
		{"fractional context", "frames: [8]\npolicies: [uniform]\nmodel: {context: 4096.5}\n", ErrGrid, `model.context: "4096.5" is not an integer`},
		{"fractional prompt tokens", "frames: [8]\npolicies: [uniform]\nmodel: {context: 9, prompt_tokens: 1.5}\n", ErrGrid, `model.prompt_tokens: "1.5" is not an integer`},
		{"fractional tokens per frame", "frames: [8]\npolicies: [uniform]\nmodel: {context: 9, tokens_per_frame: 0.5}\n", ErrGrid, `model.tokens_per_frame: "0.5" is not an integer`},
		{"fractional tokens per resolution", "frames: [8]\npolicies: [uniform]\nresolutions: [\"8x8\"]\nmodel:\n  context: 9\n  tokens_per_resolution: {\"8x8\": 2.5}\n", ErrGrid, `line 6: grid: model.tokens_per_resolution["8x8"]: "2.5" is not an integer`},
		{"fractional budget through an alias", "x: &b 8.5\nframes: [*b]\npolicies: [uniform]\n", ErrGrid, `frames[0]: "8.5" is not an integer`},
		{"fractional size", "frames: [8]\npolicies: [uniform]\nresolutions: [\"448.5x448\"]\n", ErrGrid, "448.5x448"},
		{"fractional source size", "frames: [8]\npolicies: [uniform]\nmodel: {context: 10, source_size: 640.5x480}\n", ErrGrid, "integer sides"},
		{"id collision", "frames: [8]\npolicies: [uniform]\nresolutions: [\"maxpix:100\", \"maxpix: 100\"]\n", ErrGrid, "id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, c.err, c.msg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
		})
	}
}

func TestGridTrailingEmptyDocument(t *testing.T) {
	if _, err := Parse([]byte("frames: [8]\npolicies: [uniform]\n---\n# nothing\n")); err != nil {
		t.Fatalf("an empty trailing document is harmless: %v", err)
	}
}

func budgetsCSV(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(parts, ",")
}

func TestLoadGridNamesFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	var e *sampler.Error
	if !errors.As(err, &e) || !strings.HasSuffix(e.Path, "missing.yaml") || !errors.Is(err, ErrGrid) {
		t.Fatalf("err = %v", err)
	}
	p := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(p, []byte("frames: [8]\npresets: [nope]\n"), 0o644)
	_, err = Load(p)
	if !strings.HasPrefix(err.Error(), p+": ") || !errors.Is(err, sampler.ErrUnknown) {
		t.Fatalf("err = %v", err)
	}
	// A non-integer names the file, the line and the key.
	os.WriteFile(p, []byte("name: x\npolicies: [uniform]\nframes: [4, 8.5]\n"), 0o644)
	_, err = Load(p)
	if want := p + `:3: grid: frames[1]: "8.5" is not an integer`; err == nil || err.Error() != want || !errors.Is(err, ErrGrid) {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("../examples/grid.yaml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"frames: [8]\npolicies: [uniform]\n",
		"frames: [1, 2, 3]\npolicies: [nested, random, random-segment]\nseeds: [0, 18446744073709551615]\n",
		"sample_fps: [0.5, 2]\npolicies: [fps, dense-start]\npresets: [vlmevalkit, llava-video]\n",
		"text_only: true\n",
		"frames: [4]\npresets: [internvl3]\nresolutions: [\"internvl3:max_num=4\"]\nmodel: {context: 100, source_size: 640x480}\niso_compute: true\n",
		"{}", "[]", "frames: {a: 1}", "frames: [8]\npolicies: [uniform]\n---\nfoo: 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse(data)
		if err != nil {
			var e *sampler.Error
			if !errors.As(err, &e) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for i := range g.Configs {
			c := &g.Configs[i]
			if c.ID == "" || seen[c.ID] {
				t.Fatalf("bad or duplicate id %q", c.ID)
			}
			seen[c.ID] = true
			if i < 20 { // keep each input fast
				p, err := c.Select(sampler.Video{Frames: 37, FPS: 12.5})
				if err == nil {
					for _, x := range p.Indices {
						if x < 0 || x >= 37 {
							t.Fatalf("%s: index %d", c.ID, x)
						}
					}
				}
			}
		}
	})
}

// TestOneMatchesExpand: every config of a grid is the config One builds from its fields.
func TestOneMatchesExpand(t *testing.T) {
	g, err := Parse([]byte("frames: [8, 16]\nsample_fps: [1]\npolicies: [uniform, random, nested]\npresets: [qwen2.5-vl]\nseeds: [3]\nresolutions: [\"224x224\", \"qwen2.5-vl\"]\npipelines: [raw, cached]\n"))
	if err != nil {
		t.Fatal(err)
	}
	v := sampler.Video{Frames: 900, FPS: 30}
	for _, c := range g.Configs {
		name := c.Policy + c.Preset
		one, err := One(name, sampler.Request{Frames: c.Frames, SampleFPS: c.SampleFPS, Seed: c.Seed}, c.Resolution, c.Pipeline)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		if one.ID != c.ID || one.Geometry().String() != c.Geometry().String() {
			t.Errorf("One gives %s / %v, the grid %s / %v", one.ID, one.Geometry(), c.ID, c.Geometry())
		}
		if name == "nested" {
			continue // the grid's ladder is every budget; One's is its own
		}
		a, err1 := c.Select(v)
		b, err2 := one.Select(v)
		if (err1 == nil) != (err2 == nil) || !slices.Equal(a.Indices, b.Indices) {
			t.Errorf("%s: plans differ: %v %v / %v %v", c.ID, a.Indices, err1, b.Indices, err2)
		}
	}
	d, err := One("qwen2.5-vl", sampler.Request{}, "", "")
	if err != nil || d.ID != "default-qwen2.5-vl-qwen2.5-vl-raw" || d.Resolution != "qwen2.5-vl" {
		t.Fatalf("preset default: %+v %v", d, err)
	}
	if p, err := d.Select(v); err != nil || len(p.Indices) == 0 {
		t.Fatalf("preset default plan: %v %v", p, err)
	}
	for _, bad := range []func() (Config, error){
		func() (Config, error) { return One("nope", sampler.Request{Frames: 8}, "", "") },
		func() (Config, error) { return One("uniform", sampler.Request{Frames: 8}, "bogus", "") },
		func() (Config, error) { return One("uniform", sampler.Request{Frames: 8}, "", "jpeg") },
		func() (Config, error) { return One("uniform", sampler.Request{Frames: -1}, "", "") },
	} {
		if _, err := bad(); err == nil {
			t.Error("bad config accepted")
		}
	}
}

// TestGridBOM: a grid saved with a UTF-8 byte order mark (Windows editors) parses, as every other
// reader of user files accepts one.
func TestGridBOM(t *testing.T) {
	g, err := Parse([]byte("\xef\xbb\xbfframes: [8]\npolicies: [uniform]\n"))
	if err != nil || len(g.Configs) != 1 {
		t.Fatalf("%v %v", g, err)
	}
	if _, err := Parse([]byte("\xef\xbb\xbfframes: [8.5]\npolicies: [uniform]\n")); err == nil || !strings.Contains(err.Error(), "line 1: grid: frames[0]") {
		t.Fatalf("integer check behind a BOM: %v", err)
	}
}

// TestPresetGeometryWithoutResolutions: a preset in a grid without resolutions gives the config the
// grid with `resolutions: [PRESET]` gives (the preset's own geometry, the same id), for every sampler
// preset with a geometry of its own; the presets whose readers hand source-size frames (lmms-eval,
// vlmevalkit, videomme) keep the source size, and policies too. One (ask, serve) does the same.
func TestPresetGeometryWithoutResolutions(t *testing.T) {
	for _, info := range sampler.Catalog() {
		name := info.Name
		if s, _ := sampler.Lookup(name); !info.Preset || !info.Frames || s.NeedsFPS() {
			continue // policies; fps-only presets: TestHarnessPresetsInGrid has one
		}
		implicit, err := Parse([]byte("frames: [8]\npresets: [" + name + "]\n"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res := PresetResolution(name)
		c := implicit.Configs[0]
		if res == "" {
			if c.Resolution != "" || c.Geometry() != nil {
				t.Errorf("%s: source-size preset got resolution %q", name, c.Resolution)
			}
			continue
		}
		explicit, err := Parse([]byte("frames: [8]\npresets: [" + name + "]\nresolutions: [" + res + "]\n"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e := explicit.Configs[0]
		if c.ID != e.ID || c.Resolution != e.Resolution || c.Geometry().String() != e.Geometry().String() {
			t.Errorf("%s: implicit %s %q %v, explicit %s %q %v", name, c.ID, c.Resolution, c.Geometry(), e.ID, e.Resolution, e.Geometry())
		}
		one, err := One(name, sampler.Request{Frames: 8}, "", "")
		if err != nil || one.ID != e.ID || one.Geometry().String() != e.Geometry().String() {
			t.Errorf("%s: One gives %s %v (%v), the grid %s", name, one.ID, one.Geometry(), err, e.ID)
		}
	}
	for name, want := range map[string]string{"qwen2.5-vl": "qwen2.5-vl", "qwen3-vl": "qwen3-vl", "internvl3": "internvl3",
		"llava-onevision": "llava-onevision", "lmms-eval": "", "vlmevalkit": "", "videomme": "", "uniform": ""} {
		if got := PresetResolution(name); got != want {
			t.Errorf("PresetResolution(%s) = %q, want %q", name, got, want)
		}
	}
	// A resolution given wins, `native` included (source-size frames under a preset).
	g, err := Parse([]byte("frames: [8]\npresets: [qwen2.5-vl]\npolicies: [uniform]\nresolutions: [native]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Configs {
		if c.Resolution != "native" {
			t.Errorf("%s: resolution %q, want native", c.ID, c.Resolution)
		}
	}
}

func TestHarnessPresetsInGrid(t *testing.T) {
	g, err := Parse([]byte("frames: [16]\nsample_fps: [2]\npresets: [lmms-eval/qwen2.5-vl, qwen3-vl/videomme]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range g.Configs {
		ids = append(ids, c.ID)
	}
	// No resolutions: each preset's configs take the preset's geometry, named in their ids.
	if !slices.Equal(ids, []string{"f16-lmms-eval_qwen2.5-vl-lmms-eval_qwen2.5-vl-raw", "fps2-qwen3-vl_videomme-qwen3-vl_videomme-raw"}) {
		t.Fatalf("%v", ids)
	}
	if _, err := Parse([]byte("frames: [16]\npresets: [qwen3-vl/videomme]\n")); !errors.Is(err, ErrGrid) {
		t.Fatalf("fps-only preset without sample_fps: %v", err)
	}
}
