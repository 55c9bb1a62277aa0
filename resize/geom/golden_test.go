package geom

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// The source sizes of SAMPLING.md, as W×H.
var (
	p1080 = Size{1920, 1080}
	p720  = Size{1280, 720}
	p480  = Size{640, 480}
	p360  = Size{480, 360}
	port  = Size{1080, 1920}
)

func mustParse(t *testing.T, spec string) Geometry {
	t.Helper()
	g, err := Parse(spec)
	if err != nil {
		t.Fatalf("Parse(%q): %v", spec, err)
	}
	return g
}

// TestGoldenResize checks every geometry preset on the SAMPLING.md sizes, including every number the
// document states (its H×W pairs are written here as W×H).
func TestGoldenResize(t *testing.T) {
	cases := []struct {
		spec   string
		src    Size
		frames int
		want   Size
		tokens int // per TokenFrames frames; -1: do not check
	}{
		// qwen-vl-utils 0.0.10/0.0.11 defaults, 16 or 64 frames: cap 602112 (SAMPLING.md §1).
		{"qwen2.5-vl", p1080, 16, Size{1008, 560}, 720},
		{"qwen2.5-vl", p1080, 64, Size{1008, 560}, 720},
		{"qwen2.5-vl", p720, 16, Size{1008, 560}, 720},
		{"qwen2.5-vl", p480, 64, Size{644, 476}, 23 * 17},
		{"qwen2.5-vl", p360, 16, Size{476, 364}, 17 * 13},
		{"qwen2.5-vl", port, 16, Size{560, 1008}, 720},
		{"qwen2.5-vl", p1080, 768, Size{644, 336}, 23 * 12}, // cap 235200.0
		{"qwen2.5-vl:version=0.0.10", p1080, 64, Size{1008, 560}, 720},
		// qwen-vl-utils 0.0.14, factor 32 (§2).
		{"qwen3-vl", p1080, 16, Size{1152, 640}, 36 * 20},
		{"qwen3-vl", p1080, 64, Size{1152, 640}, 720},
		{"qwen3-vl", p720, 64, Size{1152, 640}, 720},
		{"qwen3-vl", p480, 16, Size{640, 480}, 20 * 15},
		{"qwen3-vl", p360, 64, Size{480, 352}, 15 * 11},
		{"qwen3-vl", port, 16, Size{640, 1152}, 720},
		// VLMEvalKit Qwen2.5-VL ForVideo, 128 frames: cap 301056 (§5).
		{"vlmevalkit/qwen2.5-vl-forvideo", p1080, 128, Size{728, 392}, 26 * 14},
		// Qwen3-VL official Video-MME eval (§2): ≤64 frames and 512 frames (cap 75264.0).
		{"qwen3-vl/videomme", p1080, 64, Size{832, 448}, 26 * 14},
		{"qwen3-vl/videomme", p1080, 32, Size{832, 448}, -1},
		{"qwen3-vl/videomme", p1080, 512, Size{352, 192}, 11 * 6},
		// lmms-eval adapters (§5): per-frame cap 602112 / 786432.
		{"lmms-eval/qwen2.5-vl", p1080, 32, Size{1008, 560}, 720},
		{"lmms-eval/qwen3-vl", p1080, 32, Size{1152, 640}, 720},
		// HF Qwen3-VL processor, checkpoint size (§2).
		{"qwen3-vl-hf", p1080, 16, Size{1664, 928}, 52 * 29},
		{"qwen3-vl-hf", p1080, 64, Size{832, 448}, 26 * 14},
		// LLaVA (§4).
		{"llava-onevision", p1080, 32, Size{384, 384}, 196},
		{"llava-onevision", port, 32, Size{384, 384}, 196},
		{"llava-video", p360, 64, Size{384, 384}, 169},
		{"short:336+crop", p1080, 1, Size{597, 336}, -1},
		{"short:336+crop", port, 1, Size{336, 597}, -1},
		{"short:336+crop", p480, 1, Size{448, 336}, -1},
		{"short:336", p720, 1, Size{597, 336}, -1},
		// Plain policies.
		{"448x448", p1080, 8, Size{448, 448}, -1},
		{"native", p720, 8, Size{1280, 720}, -1},
		{"lmms-eval", p480, 8, Size{640, 480}, -1},
		{"vlmevalkit", p360, 8, Size{480, 360}, -1},
		{"videomme", port, 8, Size{1080, 1920}, -1},
		{"maxpix:602112", p1080, 8, Size{1034, 581}, -1},
		{"maxpix:602112", p480, 8, Size{640, 480}, -1},
	}
	for _, c := range cases {
		t.Run(c.spec+"/"+c.src.String(), func(t *testing.T) {
			l, err := mustParse(t, c.spec).Layout(c.src.W, c.src.H, c.frames)
			if err != nil {
				t.Fatal(err)
			}
			if l.Resize != c.want {
				t.Errorf("%d frames of %v: resize %v, want %v", c.frames, c.src, l.Resize, c.want)
			}
			if c.tokens >= 0 && l.Tokens != c.tokens {
				t.Errorf("tokens %d, want %d", l.Tokens, c.tokens)
			}
		})
	}
}

func TestCLIPCrop(t *testing.T) {
	// 1080×1920 (H×W) → 336×597, crop left (597−336)//2 = 130 (SAMPLING.md §4).
	l, err := mustParse(t, "llava-next-video").Layout(1920, 1080, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Rect{X: 130, Y: 0, W: 336, H: 336}); l.Crop == nil || *l.Crop != want {
		t.Fatalf("crop %+v, want %+v", l.Crop, want)
	}
	if l.Output() != (Size{336, 336}) || l.Tokens != 144 {
		t.Fatalf("output %v tokens %d", l.Output(), l.Tokens)
	}
	l, _ = mustParse(t, "short:256+crop:224").Layout(480, 640, 1) // portrait: 256×341, top (341−224)//2
	if want := (Rect{X: 16, Y: 58, W: 224, H: 224}); l.Resize != (Size{256, 341}) || *l.Crop != want {
		t.Fatalf("resize %v crop %+v", l.Resize, *l.Crop)
	}
}

func TestInternVLGolden(t *testing.T) {
	tiles := func(cols, rows int) []Rect {
		var r []Rect
		for y := 0; y < rows; y++ {
			for x := 0; x < cols; x++ {
				r = append(r, Rect{x * 448, y * 448, 448, 448})
			}
		}
		return r
	}
	cases := []struct {
		spec       string
		src        Size
		frames     int
		cols, rows int
		thumb      bool
	}{
		// README / VLMEvalKit vs lmms-eval for 1080p at max_num 8 and 12 (SAMPLING.md §3).
		{"internvl3:max_num=8", p1080, 1, 4, 2, true},
		{"internvl3:max_num=12", p1080, 1, 4, 2, true},
		{"internvl3:max_num=8,order=lmms-eval", p1080, 1, 2, 1, true},
		{"internvl3:max_num=12,order=lmms-eval", p1080, 1, 2, 1, true},
		// lmms-eval auto max_num: 8 frames → 8, 16 → 4, 32 → 2, 64 → 1.
		{"lmms-eval/internvl3", p1080, 8, 2, 1, true},
		{"lmms-eval/internvl3", p1080, 32, 2, 1, true},
		{"lmms-eval/internvl3", p1080, 64, 1, 1, false},
		{"lmms-eval/internvl3", port, 16, 1, 2, true},
		{"lmms-eval/internvl3", p480, 16, 1, 1, false}, // 4:3 → (1,1) beats (2,1)
		// Default README video path: max_num=1, one tile, no thumbnail.
		{"internvl3", p1080, 32, 1, 1, false},
		{"internvl3", p720, 32, 1, 1, false},
		{"internvl3", p480, 32, 1, 1, false},
		{"internvl3", p360, 32, 1, 1, false},
		{"internvl3", port, 32, 1, 1, false},
		{"internvl3:max_num=6", p480, 1, 3, 2, true}, // 1.5 is closer to 4/3 than 1
		{"internvl3:max_num=6", port, 1, 1, 2, true},
		{"internvl3:max_num=12", p480, 1, 4, 3, true}, // 4/3 exact
		{"internvl3:max_num=12,thumbnail=false", p720, 1, 4, 2, false},
	}
	for _, c := range cases {
		t.Run(c.spec+"/"+c.src.String(), func(t *testing.T) {
			l, err := mustParse(t, c.spec).Layout(c.src.W, c.src.H, c.frames)
			if err != nil {
				t.Fatal(err)
			}
			if l.Resize != (Size{448 * c.cols, 448 * c.rows}) {
				t.Fatalf("resize %v, want grid %dx%d", l.Resize, c.cols, c.rows)
			}
			if !reflect.DeepEqual(l.Tiles, tiles(c.cols, c.rows)) {
				t.Errorf("tiles %v", l.Tiles)
			}
			if (l.Thumb != nil) != c.thumb || (c.thumb && *l.Thumb != Size{448, 448}) {
				t.Errorf("thumb %v, want %v", l.Thumb, c.thumb)
			}
			if l.Tokens != 256*l.Images() {
				t.Errorf("tokens %d for %d images", l.Tokens, l.Images())
			}
		})
	}
}

func TestTokensFor(t *testing.T) {
	l, _ := mustParse(t, "qwen2.5-vl").Layout(1920, 1080, 16)
	if l.TokensFor(16) != 8*720 || l.TokensFor(17) != 9*720 || l.TokensFor(0) != 0 {
		t.Fatalf("TokensFor: %d %d", l.TokensFor(16), l.TokensFor(17))
	}
	l, _ = mustParse(t, "internvl3:max_num=8").Layout(1920, 1080, 1)
	if l.Images() != 9 || l.TokensFor(4) != 4*9*256 {
		t.Fatalf("internvl images %d tokens %d", l.Images(), l.TokensFor(4))
	}
	l, _ = mustParse(t, "448x448").Layout(10, 10, 1)
	if l.TokensFor(8) != 0 {
		t.Fatal("fixed without tokens must report 0")
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		spec   string
		w, h   int
		frames int
		want   error
	}{
		{"qwen2.5-vl", 201, 1, 16, ErrAspect},
		{"qwen3-vl", 1, 300, 16, ErrAspect},
		{"qwen3-vl-hf", 4020, 20, 16, ErrAspect},
		{"qwen2.5-vl", 0, 100, 16, ErrSize},
		{"448x448", -3, 100, 16, ErrSize},
		{"native", MaxSide + 1, 100, 1, ErrSize},
		{"qwen2.5-vl", 640, 480, 0, ErrFrames},
		{"qwen3-vl-hf", 640, 480, 1, ErrFrames},
		{"lmms-eval/internvl3", 640, 480, 0, ErrFrames},
		{"qwen3-vl:max_pixels=1000,min_pixels=5000", 640, 480, 16, ErrPixels},
		{"qwen2.5-vl:version=0.0.10,max_pixels=1", 640, 480, 16, ErrEmpty},
		{"short:4096", 1, MaxSide, 1, ErrTooLarge},
		{"qwen2.5-vl:min_pixels=1e13", 640, 480, 16, ErrTooLarge},
		{"iso:9.7e6,tol=0.001", 1920, 1080, 64, ErrTolerance},
	}
	for _, c := range cases {
		_, err := mustParse(t, c.spec).Layout(c.w, c.h, c.frames)
		if !errors.Is(err, c.want) {
			t.Errorf("%s %dx%d n=%d: err %v, want %v", c.spec, c.w, c.h, c.frames, err, c.want)
		}
		var ge *Error
		if err != nil && (!errors.As(err, &ge) || ge.Op == "" || ge.Spec == "") {
			t.Errorf("%s: error %v is not a *geom.Error with Op and Spec", c.spec, err)
		}
	}
	// 0.0.11 keeps max(factor, ·) where 0.0.10 collapses to 0 (SAMPLING.md §8.3).
	if l, err := mustParse(t, "qwen2.5-vl:max_pixels=1").Layout(640, 480, 16); err != nil || l.Resize != (Size{28, 28}) {
		t.Errorf("0.0.11 tiny cap: %v %v", l.Resize, err)
	}
	if _, err := ForPreset("qwen9"); !errors.Is(err, ErrUnknownPreset) {
		t.Errorf("ForPreset(qwen9): %v", err)
	}
	for _, bad := range []string{"", "448x", "x448", "0x10", "short:", "short:336+crip", "short:336+crop:400",
		"maxpix:0", "iso:", "iso:nan", "iso:1e7,tol=2", "qwen2.5-vl:", "qwen2.5-vl:version=0.0.12",
		"qwen2.5-vl:max_pixels=1,max_pixels=2", "qwen3-vl:foo=1", "internvl3:order=sorted", "native:x",
		"internvl3:max_num=0", "qwen3-vl-hf:cap=maybe", "448x448:tokens=0", "+448x448"} {
		if _, err := Parse(bad); !errors.Is(err, ErrBadSpec) {
			t.Errorf("Parse(%q): %v, want ErrBadSpec", bad, err)
		}
	}
}

func TestForPreset(t *testing.T) {
	for _, n := range SamplerPresets {
		g, err := ForPreset(n)
		if err != nil {
			t.Fatal(err)
		}
		if g.String() != n {
			t.Errorf("ForPreset(%q).String() = %q", n, g.String())
		}
		if _, err := g.Layout(1920, 1080, 32); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	infos := Presets()
	if len(infos) != len(presetTable) {
		t.Fatalf("Presets lists %d of %d", len(infos), len(presetTable))
	}
	for _, p := range infos {
		g, err := Parse(p.Spec)
		if err != nil {
			t.Errorf("preset %s: spec %q does not parse: %v", p.Name, p.Spec, err)
			continue
		}
		want, _ := ForPreset(p.Name)
		if nm, ok := want.(Named); ok {
			want = nm.Geometry
		}
		if !reflect.DeepEqual(g, want) {
			t.Errorf("preset %s: spec %q parses to %#v, want %#v", p.Name, p.Spec, g, want)
		}
	}
}

// TestQwenCapTruncation pins Python's int(min_pixels * 1.05): with a rounded source area of exactly
// 564480 and min_pixels = (564480 − 0.25)/1.05 the cap is 564479 (truncated), so the frame shrinks;
// rounding the product instead would keep 1008×560.
func TestQwenCapTruncation(t *testing.T) {
	spec := "qwen2.5-vl:total_pixels=1000,min_pixels=" + ftoa((564480-0.25)/1.05)
	g := mustParse(t, spec)
	minP, maxP, err := g.(Qwen).Caps(64)
	if err != nil || maxP != 564479 || minP != (564480-0.25)/1.05 {
		t.Fatalf("caps %v %v %v", minP, maxP, err)
	}
	l, err := g.Layout(1008, 560, 64)
	if err != nil || l.Resize != (Size{980, 532}) {
		t.Fatalf("%v %v, want 980x532", l.Resize, err)
	}
	// 0.0.14 with its float default total (117964800.0): 768 frames → cap 307200.0 (SAMPLING.md §2).
	if _, maxP, _ := mustParse(t, "qwen3-vl").(Qwen).Caps(768); maxP != 307200 {
		t.Fatalf("qwen3-vl cap at 768 frames = %v", maxP)
	}
	if _, maxP, _ := mustParse(t, "qwen2.5-vl").(Qwen).Caps(768); maxP != 235200 {
		t.Fatalf("qwen2.5-vl cap at 768 frames = %v", maxP)
	}
	if _, maxP, _ := mustParse(t, "vlmevalkit/qwen2.5-vl-forvideo").(Named).Geometry.(Qwen).Caps(128); maxP != 301056 {
		t.Fatalf("ForVideo cap at 128 frames = %v", maxP)
	}
}

// TestHandBuilt: geometries built as struct literals (not parsed) are validated too.
func TestHandBuilt(t *testing.T) {
	for _, g := range []Geometry{
		Qwen{Version: "0.0.9", Factor: 28}, Qwen{Version: QwenV0011}, Qwen{Version: QwenV0011, Factor: 28, MaxPixels: -1},
		QwenHF{Factor: 32}, ShortEdge{Size: 224, Crop: 336}, ShortEdge{}, MaxPixels{},
		InternVL{MaxNum: 4, MinNum: 1, TileSize: 448}, InternVL{MaxNum: 4, MinNum: 1, Order: OrderReadme},
	} {
		if _, err := g.Layout(1920, 1080, 16); !errors.Is(err, ErrBadSpec) {
			t.Errorf("%#v: %v, want ErrBadSpec", g, err)
		}
	}
	g := Qwen{Version: QwenV0014, Factor: 32}
	if g.String() != "qwen2.5-vl:version=0.0.14,factor=32" {
		t.Errorf("hand-built Qwen String %q", g.String())
	}
	l, err := g.Layout(1920, 1080, 16)
	if err != nil || l.Resize != (Size{1152, 640}) {
		t.Errorf("hand-built 0.0.14: %v %v", l.Resize, err)
	}
}

// TestDocsTable pins every cell of the size table in docs/geometry.md ("Resize size · tokens per
// TokenFrames"), so the document cannot drift from the code. Cells are "WxH·tokens", with "+crop@X,Y"
// for a centre crop and "/tiles+thumb" for InternVL grids; the sources are 1080p, 720p, 480p, 360p and
// portrait 1080×1920. The formulas behind them are checked against Python in TestDifferentialPython.
func TestDocsTable(t *testing.T) {
	srcs := []Size{p1080, p720, p480, p360, port}
	rows := []struct {
		spec   string
		frames []int
		cells  [5]string
	}{
		{"qwen2.5-vl", []int{16, 64}, [5]string{"1008x560·720", "1008x560·720", "644x476·391", "476x364·221", "560x1008·720"}},
		{"qwen2.5-vl", []int{768}, [5]string{"644x336·276", "644x336·276", "560x420·300", "476x364·221", "336x644·276"}},
		{"qwen3-vl", []int{16, 64}, [5]string{"1152x640·720", "1152x640·720", "640x480·300", "480x352·165", "640x1152·720"}},
		{"qwen3-vl", []int{768}, [5]string{"736x384·276", "736x384·276", "640x480·300", "480x352·165", "384x736·276"}},
		{"qwen3-vl-hf", []int{16}, [5]string{"1664x928·1508", "1280x704·880", "640x480·300", "480x352·165", "928x1664·1508"}},
		{"qwen3-vl-hf", []int{64}, [5]string{"832x448·364", "832x448·364", "640x480·300", "480x352·165", "448x832·364"}},
		{"qwen3-vl/videomme", []int{2, 16, 64}, [5]string{"832x448·364", "832x448·364", "640x480·300", "480x352·165", "448x832·364"}},
		{"qwen3-vl/videomme", []int{512}, [5]string{"352x192·66", "", "", "", ""}},
		{"vlmevalkit/qwen2.5-vl-forvideo", []int{128}, [5]string{"728x392·364", "", "", "", ""}},
		{"lmms-eval/qwen2.5-vl", []int{16, 64}, [5]string{"1008x560·720", "1008x560·720", "644x476·391", "532x392·266", "560x1008·720"}},
		{"lmms-eval/qwen3-vl", []int{16, 64}, [5]string{"1152x640·720", "1152x640·720", "640x480·300", "544x416·221", "640x1152·720"}},
		{"internvl3", []int{1, 32, 768}, [5]string{"448x448·256", "448x448·256", "448x448·256", "448x448·256", "448x448·256"}},
		{"lmms-eval/internvl3", []int{16}, [5]string{"896x448/2+thumb·768", "896x448/2+thumb·768", "448x448·256", "448x448·256", "448x896/2+thumb·768"}},
		{"lmms-eval/internvl3", []int{64}, [5]string{"448x448·256", "", "", "", ""}},
		{"llava-onevision", []int{1, 32}, [5]string{"384x384·196", "384x384·196", "384x384·196", "384x384·196", "384x384·196"}},
		{"llava-next-video", []int{1}, [5]string{"597x336+crop@130,0·144", "597x336+crop@130,0·144", "448x336+crop@56,0·144", "448x336+crop@56,0·144", "336x597+crop@0,130·144"}},
	}
	for _, r := range rows {
		for _, n := range r.frames {
			for i, src := range srcs {
				if r.cells[i] == "" {
					continue
				}
				l, err := mustParse(t, r.spec).Layout(src.W, src.H, n)
				if err != nil {
					t.Errorf("%s n=%d %v: %v", r.spec, n, src, err)
					continue
				}
				got := l.Resize.String()
				if l.Crop != nil {
					got += fmt.Sprintf("+crop@%d,%d", l.Crop.X, l.Crop.Y)
					if l.Output() != (Size{336, 336}) {
						t.Errorf("%s %v: output %v", r.spec, src, l.Output())
					}
				}
				if len(l.Tiles) > 1 {
					got += fmt.Sprintf("/%d", len(l.Tiles))
					if l.Thumb != nil {
						got += "+thumb"
					}
				}
				got += fmt.Sprintf("·%d", l.Tokens)
				if got != r.cells[i] {
					t.Errorf("%s n=%d %v: %s, docs/geometry.md says %s", r.spec, n, src, got, r.cells[i])
				}
			}
		}
	}
}
