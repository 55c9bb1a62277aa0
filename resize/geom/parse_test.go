package geom

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestParseOptionMessages: every geometry's options go through one table-driven parser; the detail of
// each kind of bad option (unknown key, bad value of each type, a bad enum, malformed or duplicate
// pairs) names the key and the cause.
func TestParseOptionMessages(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"448x448:tokens=0", `tokens: "0" out of range 1..16777216`},
		{"448x448:bogus=1", `unknown option "bogus"`},
		{"short:336+crop,tokens=x", `tokens: not an integer: "x"`},
		{"short:336,pixels=3", `unknown option "pixels"`},
		{"iso:9.7e6,factor=0", `factor: "0" out of range 1..4096`},
		{"iso:9.7e6,tol=1", `tol: "1" out of range 1e-09..0.999`},
		{"qwen2.5-vl:version=0.0.12", `version "0.0.12" (want 0.0.10, 0.0.11 or 0.0.14)`},
		{"qwen3-vl:min_pixels=nan", `min_pixels: not a number: "nan"`},
		{"qwen3-vl-hf:cap=maybe", `cap: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{"qwen3-vl-hf:max_pixels=0", `max_pixels: "0" out of range`},
		{"internvl3:order=random", `order "random" (want readme or lmms-eval)`},
		{"internvl3:max_num=99", `max_num: "99" out of range 1..64`},
		{"internvl3:tile=448,tile=448", `duplicate option "tile"`},
		{"internvl3:tile", `want key=value, got "tile"`},
		{"native:x=1", "native takes no options"},
		{"maxpix:-1", `maxpix: "-1" out of range`},
	} {
		_, err := Parse(c.spec)
		var ge *Error
		if !errors.Is(err, ErrBadSpec) || !errors.As(err, &ge) || ge.Spec != c.spec || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v; want ErrBadSpec naming the spec and %q", c.spec, err, c.want)
		}
	}
	// Options apply in the order given; every table sets its own field.
	g, err := Parse("internvl3:tile=224,max_num=auto,min_num=2,thumbnail=false,order=lmms-eval")
	if err != nil {
		t.Fatal(err)
	}
	if iv := g.(InternVL); iv.TileSize != 224 || !iv.Auto || iv.MinNum != 2 || iv.Thumbnail || iv.Order != OrderLmmsEval {
		t.Errorf("%+v", iv)
	}
	g, err = Parse("qwen2.5-vl:version=0.0.14,factor=32,min_pixels=100,max_pixels=2e5,total_pixels=1e7")
	if err != nil {
		t.Fatal(err)
	}
	if q := g.(Qwen); q.Version != QwenV0014 || q.Factor != 32 || q.MinPixels != 100 || q.MaxPixels != 2e5 || q.TotalPixels != 1e7 {
		t.Errorf("%+v", q)
	}
}

// TestPadRight: PaddleOCR's resize_norm_img sizes (width ⌈H·(w/h)⌉ capped at W, height H, canvas
// W×H), by hand and against the formula run by CPython on random sources (the float division and
// ceil in Python's order); the spec round-trips.
func TestPadRight(t *testing.T) {
	g := mustParse(t, "pad:192x48")
	for _, c := range []struct{ w, h, rw int }{{640, 480, 64}, {1920, 1080, 86}, {2000, 20, 192}, {3, 300, 1}, {192, 48, 192}, {100, 48, 100}} {
		l, err := g.Layout(c.w, c.h, 1)
		if err != nil || l.Resize != (Size{c.rw, 48}) || l.Pad == nil || *l.Pad != (Size{192, 48}) || l.Output() != (Size{192, 48}) {
			t.Errorf("%dx%d: %+v %v, want resize %dx48 on a 192x48 canvas", c.w, c.h, l, err, c.rw)
		}
		if w, h, n, err := l.ImageSize(); err != nil || w != 192 || h != 48 || n != 1 {
			t.Errorf("%dx%d: image size %dx%d×%d %v", c.w, c.h, w, h, n, err)
		}
	}
	if g.String() != "pad:192x48" || mustParse(t, g.String()) != g {
		t.Errorf("round trip: %q", g.String())
	}
	for _, bad := range []string{"pad:", "pad:192", "pad:0x48", "pad:192x48x1", "pad:192x48,tokens=3"} {
		if _, err := Parse(bad); !errors.Is(err, ErrBadSpec) {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var in strings.Builder
	type src struct{ w, h, cw, ch int }
	var cases []src
	for range 3000 {
		c := src{1 + rng.IntN(4000), 1 + rng.IntN(4000), 1 + rng.IntN(1000), 1 + rng.IntN(200)}
		cases = append(cases, c)
		fmt.Fprintf(&in, "%d %d %d %d\n", c.w, c.h, c.cw, c.ch)
	}
	lines := runPython(t, `import sys, math
for line in sys.stdin:
    w, h, W, H = map(int, line.split())
    ratio = w / float(h)
    print(W if math.ceil(H * ratio) > W else int(math.ceil(H * ratio)))
`, in.String())
	for i, c := range cases {
		l, err := PadRight{W: c.cw, H: c.ch}.Layout(c.w, c.h, 1)
		if err != nil || strconv.Itoa(l.Resize.W) != lines[i] {
			t.Fatalf("%+v: width %d (%v), Python %s", c, l.Resize.W, err, lines[i])
		}
	}
}
