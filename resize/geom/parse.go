package geom

import (
	"math"
	"strconv"
	"strings"
)

// Parse reads a geometry spec (the grid-file syntax; docs/geometry.md):
//
//	native                      the source size
//	WxH[:tokens=N]              fixed size, aspect not kept          e.g. 448x448
//	short:S[+crop[:C]]          shortest edge S (CLIP truncation), optional centre crop C (default S)
//	maxpix:P                    at most P pixels, aspect kept, never upscaled
//	pad:WxH                     height H, aspect kept (width at most W), zero-padded on the right to W (PaddleOCR)
//	iso:P[,factor=F][,tol=T]    iso-compute: per-frame size so that frames·W·H ≈ P (SolveIso)
//	qwen2.5-vl[:k=v,...]        qwen-vl-utils fetch_video (0.0.11, factor 28)
//	qwen3-vl[:k=v,...]          qwen-vl-utils fetch_video (0.0.14, factor 32)
//	                            keys: version=0.0.10|0.0.11|0.0.14 factor=N min_pixels= max_pixels= total_pixels=
//	qwen3-vl-hf[:k=v,...]       transformers Qwen3VLVideoProcessor T×H×W smart_resize
//	                            keys: factor= min_pixels= max_pixels= cap=true|false
//	internvl3[:k=v,...]         InternVL dynamic_preprocess 448 tiles
//	                            keys: max_num=N|auto min_num=N order=readme|lmms-eval thumbnail=true|false tile=N
//	NAME                        a preset (Presets lists them), e.g. llava-onevision
func Parse(spec string) (Geometry, error) {
	s := strings.TrimSpace(spec)
	if p, ok := presetTable[s]; ok {
		return p.geom, nil
	}
	head, rest, hasRest := strings.Cut(s, ":")
	if parse, ok := heads[head]; ok {
		g, err := parse(rest, hasRest)
		if err != nil {
			return nil, errf("parse", spec, ErrBadSpec, "%v", err)
		}
		return g, nil
	}
	if w, h, ok := strings.Cut(head, "x"); ok {
		g, err := parseFixed(w, h, rest, hasRest)
		if err != nil {
			return nil, errf("parse", spec, ErrBadSpec, "%v", err)
		}
		return g, nil
	}
	return nil, errf("parse", spec, ErrBadSpec, "unknown geometry %q", head)
}

// heads parses each named spec head's text after the ':' (rest; hasRest says whether there was one).
// Errors are the detail of Parse's ErrBadSpec.
var heads = map[string]func(rest string, hasRest bool) (Geometry, error){
	"native": func(_ string, hasRest bool) (Geometry, error) {
		if hasRest {
			return nil, errorString("native takes no options")
		}
		return Native{}, nil
	},
	"short": func(rest string, _ bool) (Geometry, error) { return parseShort(rest) },
	"maxpix": func(rest string, _ bool) (Geometry, error) {
		p, err := parseInt(rest, 1, MaxOutputPixels)
		if err != nil {
			return nil, errorString("maxpix: " + err.Error())
		}
		return MaxPixels{Pixels: p}, nil
	},
	"pad": func(rest string, _ bool) (Geometry, error) {
		w, h, ok := strings.Cut(rest, "x")
		wi, err1 := parseInt(w, 1, MaxSide)
		hi, err2 := parseInt(h, 1, MaxSide)
		if !ok || err1 != nil || err2 != nil {
			return nil, errorString("want pad:WxH with sides 1.." + itoa(MaxSide))
		}
		return PadRight{W: wi, H: hi}, nil
	},
	"iso": func(rest string, _ bool) (Geometry, error) {
		budget, opts, hasOpts := strings.Cut(rest, ",")
		b, err := parseFloat(budget, 1, 1e15)
		if err != nil {
			return nil, errorString("iso budget: " + err.Error())
		}
		g := Iso{Budget: b, Factor: 28, Tolerance: DefaultIsoTolerance}
		return g, setOpts(&g, opts, hasOpts, isoOpts)
	},
	"qwen2.5-vl": qwenHead("qwen2.5-vl"),
	"qwen3-vl":   qwenHead("qwen3-vl"),
	"qwen3-vl-hf": func(rest string, hasRest bool) (Geometry, error) {
		g := QwenHF{Factor: 32, MinPixels: qwenHFMinPixels, MaxPixels: qwenHFMaxPixels}
		return g, setOpts(&g, rest, hasRest, qwenHFOpts)
	},
	"internvl3": func(rest string, hasRest bool) (Geometry, error) {
		g := defaultInternVL()
		return g, setOpts(&g, rest, hasRest, internVLOpts)
	},
}

func qwenHead(head string) func(string, bool) (Geometry, error) {
	return func(rest string, hasRest bool) (Geometry, error) {
		g, _ := qwenBase(head)
		return g, setOpts(&g, rest, hasRest, qwenOpts)
	}
}

// The options of each geometry: key → how its value sets the field. One table per geometry replaces a
// hand-written parsing loop each.
var (
	isoOpts = options[Iso]{
		"factor": intOpt(1, 4096, func(g *Iso) *int { return &g.Factor }),
		"tol":    floatOpt(1e-9, 0.999, func(g *Iso) *float64 { return &g.Tolerance }),
	}
	qwenOpts = options[Qwen]{
		"version": func(g *Qwen, _, v string) error {
			switch v {
			case QwenV0010, QwenV0011, QwenV0014:
				g.Version = v
				return nil
			}
			return errorString("version " + strconv.Quote(v) + " (want 0.0.10, 0.0.11 or 0.0.14)")
		},
		"factor":       intOpt(1, 4096, func(g *Qwen) *int { return &g.Factor }),
		"min_pixels":   floatOpt(1, 1e13, func(g *Qwen) *float64 { return &g.MinPixels }),
		"max_pixels":   floatOpt(1, 1e13, func(g *Qwen) *float64 { return &g.MaxPixels }),
		"total_pixels": floatOpt(1, 1e15, func(g *Qwen) *float64 { return &g.TotalPixels }),
	}
	qwenHFOpts = options[QwenHF]{
		"factor":     intOpt(1, 4096, func(g *QwenHF) *int { return &g.Factor }),
		"min_pixels": intOpt(1, 1<<40, func(g *QwenHF) *int { return &g.MinPixels }),
		"max_pixels": intOpt(1, 1<<40, func(g *QwenHF) *int { return &g.MaxPixels }),
		"cap":        boolOpt(func(g *QwenHF) *bool { return &g.Cap }),
	}
	internVLOpts = options[InternVL]{
		"max_num": func(g *InternVL, k, v string) (err error) {
			if v == "auto" {
				g.Auto, g.MaxNum = true, 1
				return nil
			}
			if g.MaxNum, err = parseInt(v, 1, 64); err != nil {
				return errorString(k + ": " + err.Error())
			}
			return nil
		},
		"min_num": intOpt(1, 64, func(g *InternVL) *int { return &g.MinNum }),
		"order": func(g *InternVL, _, v string) error {
			if v != OrderReadme && v != OrderLmmsEval {
				return errorString("order " + strconv.Quote(v) + " (want readme or lmms-eval)")
			}
			g.Order = v
			return nil
		},
		"thumbnail": boolOpt(func(g *InternVL) *bool { return &g.Thumbnail }),
		"tile":      intOpt(1, 4096, func(g *InternVL) *int { return &g.TileSize }),
	}
	fixedOpts = options[Fixed]{"tokens": intOpt(1, 1<<24, func(g *Fixed) *int { return &g.Tokens })}
	shortOpts = options[ShortEdge]{"tokens": intOpt(1, 1<<24, func(g *ShortEdge) *int { return &g.Tokens })}
)

// options maps a geometry's option keys to their setters; a setter's error is the whole detail
// ("factor: not an integer: …").
type options[G any] map[string]func(g *G, key, value string) error

// setOpts applies k=v[,k=v...] (when present) to g through table, in the order given.
func setOpts[G any](g *G, opts string, present bool, table options[G]) error {
	if !present {
		return nil
	}
	kv, err := parseOpts(opts)
	if err != nil {
		return err
	}
	for _, p := range kv {
		set, ok := table[p[0]]
		if !ok {
			return errorString("unknown option " + strconv.Quote(p[0]))
		}
		if err := set(g, p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

func intOpt[G any](lo, hi int, field func(*G) *int) func(*G, string, string) error {
	return func(g *G, k, v string) error {
		n, err := parseInt(v, lo, hi)
		if err != nil {
			return errorString(k + ": " + err.Error())
		}
		*field(g) = n
		return nil
	}
}

func floatOpt[G any](lo, hi float64, field func(*G) *float64) func(*G, string, string) error {
	return func(g *G, k, v string) error {
		f, err := parseFloat(v, lo, hi)
		if err != nil {
			return errorString(k + ": " + err.Error())
		}
		*field(g) = f
		return nil
	}
}

func boolOpt[G any](field func(*G) *bool) func(*G, string, string) error {
	return func(g *G, k, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errorString(k + ": " + err.Error())
		}
		*field(g) = b
		return nil
	}
}

// parseFixed reads WxH[:tokens=N] (w and h are the two sides of the head).
func parseFixed(w, h, rest string, hasRest bool) (Geometry, error) {
	wi, err1 := parseInt(w, 1, MaxSide)
	hi, err2 := parseInt(h, 1, MaxSide)
	if err1 != nil || err2 != nil {
		return nil, errorString("want WxH with sides 1.." + itoa(MaxSide))
	}
	g := Fixed{W: wi, H: hi}
	return g, setOpts(&g, rest, hasRest, fixedOpts)
}

// parseShort reads S[+crop[:C]][,tokens=N] after "short:".
func parseShort(rest string) (Geometry, error) {
	body, opts, hasOpts := strings.Cut(rest, ",")
	size, crop, hasCrop := strings.Cut(body, "+")
	s, err := parseInt(size, 1, MaxSide)
	if err != nil {
		return nil, errorString("short: " + err.Error())
	}
	g := ShortEdge{Size: s}
	if hasCrop {
		c, cv, hasC := strings.Cut(crop, ":")
		if c != "crop" {
			return nil, errorString("want short:S+crop[:C]")
		}
		g.Crop = s
		if hasC {
			if g.Crop, err = parseInt(cv, 1, s); err != nil {
				return nil, errorString("crop (must be 1.." + itoa(s) + ", at most the short side): " + err.Error())
			}
		}
	}
	return g, setOpts(&g, opts, hasOpts, shortOpts)
}

// parseOpts reads k=v[,k=v...] in order; keys must be unique.
func parseOpts(s string) ([][2]string, error) {
	var kv [][2]string
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" || v == "" {
			return nil, errorString("want key=value, got " + strconv.Quote(f))
		}
		if seen[k] {
			return nil, errorString("duplicate option " + strconv.Quote(k))
		}
		seen[k] = true
		kv = append(kv, [2]string{k, v})
	}
	return kv, nil
}

// ParseWxH reads "AxB" (e.g. "448x448") with both sides integers in 1..MaxSide. It is the one
// size parser of the CLI, grids and runtime specs (which side is the width is the caller's: most say
// WxH, an ONNX size=HxW).
func ParseWxH(s string) (a, b int, err error) {
	x, y, ok := strings.Cut(s, "x")
	if ok {
		if a, err = parseInt(x, 1, MaxSide); err == nil {
			b, err = parseInt(y, 1, MaxSide)
		}
	}
	if !ok || err != nil {
		return 0, 0, errf("parse", s, ErrBadSpec, "want WxH with integer sides 1..%d", MaxSide)
	}
	return a, b, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

func parseInt(s string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || strings.HasPrefix(s, "+") {
		return 0, errorString("not an integer: " + strconv.Quote(s))
	}
	if v < lo || v > hi {
		return 0, errorString(strconv.Quote(s) + " out of range " + itoa(lo) + ".." + itoa(hi))
	}
	return v, nil
}

func parseFloat(s string, lo, hi float64) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || strings.HasPrefix(s, "+") {
		return 0, errorString("not a number: " + strconv.Quote(s))
	}
	if v < lo || v > hi {
		return 0, errorString(strconv.Quote(s) + " out of range " + ftoa(lo) + ".." + ftoa(hi))
	}
	return v, nil
}
