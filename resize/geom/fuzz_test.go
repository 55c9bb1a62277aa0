package geom

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics; every accepted spec round-trips through String to an equal Geometry,
// and its Layout on a few sources either fails with a typed error or gives a sane layout.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"native", "448x448", "384x384:tokens=196", "short:336", "short:336+crop",
		"short:256+crop:224,tokens=49", "maxpix:602112", "iso:9.7e6", "iso:9700000,factor=32,tol=0.05",
		"qwen2.5-vl", "qwen2.5-vl:max_pixels=602112", "qwen2.5-vl:version=0.0.10,min_pixels=3136.5",
		"qwen3-vl", "qwen3-vl:total_pixels=19267584,max_pixels=401408,min_pixels=3584", "qwen3-vl-hf",
		"qwen3-vl-hf:cap=true,min_pixels=131072,max_pixels=786432", "internvl3:max_num=1",
		"internvl3:max_num=12,order=lmms-eval", "internvl3:max_num=auto,min_num=2,thumbnail=false,tile=224",
		"llava-onevision", "llava-video", "lmms-eval/internvl3", "qwen3-vl/videomme", "x", ":", "short:+crop"} {
		f.Add(s)
	}
	srcs := []Size{{1920, 1080}, {1080, 1920}, {1, 1}, {3, 700}, {MaxSide, 1}}
	f.Fuzz(func(t *testing.T, spec string) {
		g, err := Parse(spec)
		if err != nil {
			var ge *Error
			if !errors.As(err, &ge) || !errors.Is(err, ErrBadSpec) {
				t.Fatalf("Parse(%q): untyped error %v", spec, err)
			}
			return
		}
		g2, err := Parse(g.String())
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", spec, g.String(), err)
		}
		if !reflect.DeepEqual(g, g2) {
			t.Fatalf("round trip of %q: %#v != %#v", spec, g, g2)
		}
		for _, s := range srcs {
			for _, n := range []int{1, 2, 31, 64, 768} {
				l, err := g.Layout(s.W, s.H, n)
				if err != nil {
					var ge *Error
					if !errors.As(err, &ge) {
						t.Fatalf("%s on %v: untyped error %v", g, s, err)
					}
					continue
				}
				checkLayout(t, g, l)
			}
		}
	})
}

// checkLayout asserts the invariants every Layout must satisfy.
func checkLayout(t *testing.T, g Geometry, l Layout) {
	t.Helper()
	r := l.Resize
	if r.W < 1 || r.H < 1 || int64(r.W)*int64(r.H) > MaxOutputPixels {
		t.Fatalf("%s: resize %v", g, r)
	}
	inside := func(c Rect) bool {
		return c.X >= 0 && c.Y >= 0 && c.W > 0 && c.H > 0 && c.X+c.W <= r.W && c.Y+c.H <= r.H
	}
	if l.Crop != nil && !inside(*l.Crop) {
		t.Fatalf("%s: crop %+v outside %v", g, *l.Crop, r)
	}
	area := 0
	for _, tl := range l.Tiles {
		if !inside(tl) {
			t.Fatalf("%s: tile %+v outside %v", g, tl, r)
		}
		area += tl.W * tl.H
	}
	if len(l.Tiles) > 0 && area != r.W*r.H {
		t.Fatalf("%s: tiles cover %d of %d pixels", g, area, r.W*r.H)
	}
	if l.Thumb != nil && (l.Thumb.W < 1 || l.Thumb.H < 1) {
		t.Fatalf("%s: thumb %v", g, *l.Thumb)
	}
	if l.Tokens < 0 || l.TokenFrames < 1 {
		t.Fatalf("%s: tokens %d per %d frames", g, l.Tokens, l.TokenFrames)
	}
}
