package geom

import (
	"errors"
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
