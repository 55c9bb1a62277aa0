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
	bad := func(format string, args ...any) (Geometry, error) {
		return nil, errf("parse", spec, ErrBadSpec, format, args...)
	}
	switch head {
	case "native":
		if hasRest {
			return bad("native takes no options")
		}
		return Native{}, nil
	case "short":
		return parseShort(spec, rest)
	case "maxpix":
		p, err := parseInt(rest, 1, MaxOutputPixels)
		if err != nil {
			return bad("maxpix: %v", err)
		}
		return MaxPixels{Pixels: p}, nil
	case "iso":
		return parseIso(spec, rest)
	case "qwen2.5-vl", "qwen3-vl":
		return parseQwen(spec, head, rest, hasRest)
	case "qwen3-vl-hf":
		return parseQwenHF(spec, rest, hasRest)
	case "internvl3":
		return parseInternVL(spec, rest, hasRest)
	}
	if w, h, ok := strings.Cut(head, "x"); ok {
		wi, err1 := parseInt(w, 1, MaxSide)
		hi, err2 := parseInt(h, 1, MaxSide)
		if err1 != nil || err2 != nil {
			return bad("want WxH with sides 1..%d", MaxSide)
		}
		g := Fixed{W: wi, H: hi}
		if hasRest {
			var err error
			if g.Tokens, err = parseTokensOpt(rest); err != nil {
				return bad("%v", err)
			}
		}
		return g, nil
	}
	return bad("unknown geometry %q", head)
}

func parseShort(spec, rest string) (Geometry, error) {
	bad := func(format string, args ...any) (Geometry, error) {
		return nil, errf("parse", spec, ErrBadSpec, format, args...)
	}
	body, opts, hasOpts := strings.Cut(rest, ",")
	size, crop, hasCrop := strings.Cut(body, "+")
	s, err := parseInt(size, 1, MaxSide)
	if err != nil {
		return bad("short: %v", err)
	}
	g := ShortEdge{Size: s}
	if hasCrop {
		c, cv, hasC := strings.Cut(crop, ":")
		if c != "crop" {
			return bad("want short:S+crop[:C]")
		}
		g.Crop = s
		if hasC {
			if g.Crop, err = parseInt(cv, 1, s); err != nil {
				return bad("crop (must be 1..%d, at most the short side): %v", s, err)
			}
		}
	}
	if hasOpts {
		if g.Tokens, err = parseTokensOpt(opts); err != nil {
			return bad("%v", err)
		}
	}
	return g, nil
}

func parseIso(spec, rest string) (Geometry, error) {
	bad := func(format string, args ...any) (Geometry, error) {
		return nil, errf("parse", spec, ErrBadSpec, format, args...)
	}
	budget, opts, hasOpts := strings.Cut(rest, ",")
	b, err := parseFloat(budget, 1, 1e15)
	if err != nil {
		return bad("iso budget: %v", err)
	}
	g := Iso{Budget: b, Factor: 28, Tolerance: DefaultIsoTolerance}
	if hasOpts {
		kv, err := parseOpts(opts)
		if err != nil {
			return bad("%v", err)
		}
		for k, v := range kv {
			switch k {
			case "factor":
				g.Factor, err = parseInt(v, 1, 4096)
			case "tol":
				g.Tolerance, err = parseFloat(v, 1e-9, 0.999)
			default:
				return bad("unknown option %q", k)
			}
			if err != nil {
				return bad("%s: %v", k, err)
			}
		}
	}
	return g, nil
}

func parseQwen(spec, head, rest string, hasRest bool) (Geometry, error) {
	bad := func(format string, args ...any) (Geometry, error) {
		return nil, errf("parse", spec, ErrBadSpec, format, args...)
	}
	g, _ := qwenBase(head)
	if !hasRest {
		return g, nil
	}
	kv, err := parseOpts(rest)
	if err != nil {
		return bad("%v", err)
	}
	for k, v := range kv {
		switch k {
		case "version":
			switch v {
			case QwenV0010, QwenV0011, QwenV0014:
				g.Version = v
			default:
				return bad("version %q (want 0.0.10, 0.0.11 or 0.0.14)", v)
			}
		case "factor":
			g.Factor, err = parseInt(v, 1, 4096)
		case "min_pixels":
			g.MinPixels, err = parseFloat(v, 1, 1e13)
		case "max_pixels":
			g.MaxPixels, err = parseFloat(v, 1, 1e13)
		case "total_pixels":
			g.TotalPixels, err = parseFloat(v, 1, 1e15)
		default:
			return bad("unknown option %q", k)
		}
		if err != nil {
			return bad("%s: %v", k, err)
		}
	}
	return g, nil
}

func parseQwenHF(spec, rest string, hasRest bool) (Geometry, error) {
	bad := func(format string, args ...any) (Geometry, error) {
		return nil, errf("parse", spec, ErrBadSpec, format, args...)
	}
	g := QwenHF{Factor: 32, MinPixels: qwenHFMinPixels, MaxPixels: qwenHFMaxPixels}
	if !hasRest {
		return g, nil
	}
	kv, err := parseOpts(rest)
	if err != nil {
		return bad("%v", err)
	}
	for k, v := range kv {
		switch k {
		case "factor":
			g.Factor, err = parseInt(v, 1, 4096)
		case "min_pixels":
			g.MinPixels, err = parseInt(v, 1, 1<<40)
		case "max_pixels":
			g.MaxPixels, err = parseInt(v, 1, 1<<40)
		case "cap":
			g.Cap, err = strconv.ParseBool(v)
		default:
			return bad("unknown option %q", k)
		}
		if err != nil {
			return bad("%s: %v", k, err)
		}
	}
	return g, nil
}

func parseInternVL(spec, rest string, hasRest bool) (Geometry, error) {
	bad := func(format string, args ...any) (Geometry, error) {
		return nil, errf("parse", spec, ErrBadSpec, format, args...)
	}
	g := defaultInternVL()
	if !hasRest {
		return g, nil
	}
	kv, err := parseOpts(rest)
	if err != nil {
		return bad("%v", err)
	}
	for k, v := range kv {
		switch k {
		case "max_num":
			if v == "auto" {
				g.Auto, g.MaxNum = true, 1
			} else {
				g.MaxNum, err = parseInt(v, 1, 64)
			}
		case "min_num":
			g.MinNum, err = parseInt(v, 1, 64)
		case "order":
			if v != OrderReadme && v != OrderLmmsEval {
				return bad("order %q (want readme or lmms-eval)", v)
			}
			g.Order = v
		case "thumbnail":
			g.Thumbnail, err = strconv.ParseBool(v)
		case "tile":
			g.TileSize, err = parseInt(v, 1, 4096)
		default:
			return bad("unknown option %q", k)
		}
		if err != nil {
			return bad("%s: %v", k, err)
		}
	}
	return g, nil
}

// parseOpts reads k=v[,k=v...]; keys must be unique.
func parseOpts(s string) (map[string]string, error) {
	kv := map[string]string{}
	for _, f := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" || v == "" {
			return nil, errorString("want key=value, got " + strconv.Quote(f))
		}
		if _, dup := kv[k]; dup {
			return nil, errorString("duplicate option " + strconv.Quote(k))
		}
		kv[k] = v
	}
	return kv, nil
}

// parseTokensOpt reads the only option of the fixed and shortest-edge geometries, "tokens=N".
func parseTokensOpt(opts string) (int, error) {
	kv, err := parseOpts(opts)
	if err != nil {
		return 0, err
	}
	tokens := 0
	for k, v := range kv {
		if k != "tokens" {
			return 0, errorString("unknown option " + strconv.Quote(k))
		}
		if tokens, err = parseInt(v, 1, 1<<24); err != nil {
			return 0, errorString("tokens: " + err.Error())
		}
	}
	return tokens, nil
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
