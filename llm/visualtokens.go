package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/resize/geom"
)

// Did the model see the frames it was sent? Each family turns images into a number of visual tokens
// (embeddings) by a fixed rule, and every OpenAI-compatible reply says how many prompt tokens the
// model counted (usage.prompt_tokens). This file is the rule of each family framesweep feeds in
// process (docs/runtimes.md "Did the server see our frames?"); a runtime fills Response.VisualCheck
// with it, and the sweep compares it with what the model counted.

// Families: the runtime key family= (openai), and what an in-process projector names.
const (
	FamilyQwen2VL        = "qwen2-vl"
	FamilyQwen25VL       = "qwen2.5-vl"
	FamilyQwen3VL        = "qwen3-vl"
	FamilyInternVL       = "internvl"
	FamilyLLaVANeXTVideo = "llava-next-video"
	// FamilyLLaVA is LLaVA-1.5's fixed grid (one (size/patch)² block per image): the in-process
	// `mlp` projector without anyres pinpoints, and servers of LLaVA-1.5.
	FamilyLLaVA = "llava"
)

// Families lists every family, in the order above.
var Families = []string{FamilyQwen2VL, FamilyQwen25VL, FamilyQwen3VL, FamilyInternVL, FamilyLLaVANeXTVideo, FamilyLLaVA}

// How a record's seen count was found (VisualCheck.How; record.VisualHows holds the same list).
const (
	HowRuntime  = "runtime"              // in process: the tokens mtmd built
	HowTextOnly = "text-only difference" // prompt_tokens minus the same item's text-only prompt_tokens
	HowTokenize = "tokenize"             // prompt_tokens minus the server's count of the text-only prompt
	HowTwoCfgs  = "two visual configs"   // prompt_tokens minus the text part another visual config implies
	HowUnknown  = "unknown"              // not found (Why says why)
)

// VisualHows lists the How values.
var VisualHows = []string{HowRuntime, HowTextOnly, HowTokenize, HowTwoCfgs, HowUnknown}

// The band a seen/expected ratio of a server must stay in (after the family's fixed overhead);
// in process the two counts must be equal.
const (
	VisualLow  = 0.95
	VisualHigh = 1.05
)

// WhyUnknownFamily is why a request of no known family has no expected count: the check never
// guesses a family.
const WhyUnknownFamily = "unknown family (the runtime key family= names it: qwen2-vl, qwen2.5-vl, qwen3-vl, internvl, llava-next-video, llava)"

// VisualCheck is what a runtime knows of a request's visual tokens: the family, what its arithmetic
// expects (Expected, plus the template's fixed Overhead around them on a server's side), and, in
// process, what the model built (Seen, How HowRuntime). A server's Seen is nil: the sweep derives it
// from usage.prompt_tokens. Expected is nil when unknown, and Why says why.
type VisualCheck struct {
	Family   string `json:"family,omitempty"`
	Expected *int   `json:"expected"`
	Overhead int    `json:"overhead,omitempty"`
	Seen     *int   `json:"seen"`
	How      string `json:"how,omitempty"`
	Why      string `json:"why,omitempty"`
}

// TextCounter is a runtime that can count the prompt tokens of a request's text-only form (the same
// template and question, no frames) without answering it: a server's tokenize endpoint. It fails with
// ErrNoTokenize when the server has no endpoint it can use.
type TextCounter interface {
	TextPromptTokens(ctx context.Context, req *Request) (int, error)
}

// ErrNoTokenize: the server has no tokenize endpoint the client can use.
var ErrNoTokenize = errors.New("the server has no tokenize endpoint")

// FamilyOf infers the family from a model name (a server's model id, a file name): "" when the name
// names none, never a guess. Only names that say the family count: "llava" alone is LLaVA-1.5 only
// as llava-1.5/llava-v1.5 (LLaVA-1.6's anyres and OneVision count otherwise).
func FamilyOf(model string) string {
	s := strings.NewReplacer("_", "-", " ", "-").Replace(strings.ToLower(model))
	has := func(subs ...string) bool {
		for _, x := range subs {
			if strings.Contains(s, x) {
				return true
			}
		}
		return false
	}
	switch {
	case has("qwen3-vl", "qwen3vl"):
		return FamilyQwen3VL
	case has("qwen2.5-vl", "qwen2.5vl", "qwen25-vl", "qwen25vl", "qwen2-5-vl"):
		return FamilyQwen25VL
	case has("qwen2-vl", "qwen2vl"):
		return FamilyQwen2VL
	case has("internvl"):
		return FamilyInternVL
	case has("llava-next-video", "llavanextvideo"):
		return FamilyLLaVANeXTVideo
	case has("llava-1.5", "llava-v1.5", "llava1.5"):
		return FamilyLLaVA
	}
	return ""
}

// CheckFamily refuses a family= value that is none of Families.
func CheckFamily(f string) error {
	for _, x := range Families {
		if f == x {
			return nil
		}
	}
	return Errorf("parse spec", "", ErrBadSpec, "family=%q (want %s)", f, strings.Join(Families, ", "))
}

// Vision is how a family's processor turns an image into visual tokens.
type Vision struct {
	Family string
	Patch  int // the ViT's patch side: 14, Qwen3-VL 16
	// Merge is the side of the patch block one token stands for: Qwen's 2×2 merger, InternVL's pixel
	// shuffle (2), LLaVA-NeXT-Video's 2×2 pooling; 1 for LLaVA-1.5.
	Merge int
	Image int // the fixed input side: LLaVA's image, InternVL's tile, LLaVA-NeXT-Video's crop
	// MinPixels and MaxPixels bound a Qwen image or frame (smart_resize); 0: no bound.
	MinPixels, MaxPixels int
	// Mtmd selects llama.cpp mtmd's own arithmetic (resize in float32, rounding half away from zero;
	// InternVL's llava-uhd slicing) over transformers' (qwen-vl-utils' smart_resize; InternVL's
	// dynamic_preprocess): in process the count is mtmd's.
	Mtmd bool
	// MaxTiles is InternVL's tile limit for an image (dynamic_preprocess max_num; mtmd's
	// preproc_max_tiles), each image with more than one tile getting a thumbnail.
	MaxTiles int
	// Anyres marks a LLaVA-1.6 projector (grid pinpoints), whose tiling is not computed here.
	Anyres bool
}

// DefaultVision is a family's processor as a server runs it, with the released checkpoints'
// settings: Qwen2/2.5-VL patch 14 and 3136…12845056 pixels, Qwen3-VL patch 16 and the same bounds in
// 32-pixel tokens, InternVL 448² tiles of 256 tokens up to 12 per image, LLaVA-NeXT-Video 336²
// frames of 24² patches pooled 2×2 (144 tokens), LLaVA-1.5 336² images of 576 tokens.
func DefaultVision(family string) (Vision, bool) {
	switch family {
	case FamilyQwen2VL, FamilyQwen25VL:
		return Vision{Family: family, Patch: 14, Merge: 2, MinPixels: 4 * 28 * 28, MaxPixels: 16384 * 28 * 28}, true
	case FamilyQwen3VL:
		return Vision{Family: family, Patch: 16, Merge: 2, MinPixels: 4 * 32 * 32, MaxPixels: 16384 * 32 * 32}, true
	case FamilyInternVL:
		return Vision{Family: family, Patch: 14, Merge: 2, Image: 448, MaxTiles: 12}, true
	case FamilyLLaVANeXTVideo:
		return Vision{Family: family, Patch: 14, Merge: 2, Image: 336}, true
	case FamilyLLaVA:
		return Vision{Family: family, Patch: 14, Merge: 1, Image: 336}, true
	}
	return Vision{}, false
}

// VisualInput is what a request handed the model: the form it took (Response.InputForm), the frames
// and the images of each, their size as sent, and for a Qwen3-VL video the time of each temporal
// pair (its "<t seconds>" text).
type VisualInput struct {
	Form      string
	Frames    int
	Images    int // images per frame (tiles and thumbnail); 0 or 1: one
	W, H      int
	PairTimes []float64
}

// VisualCount is a family's count for one request: the visual tokens (embeddings), and the fixed
// text the template writes around them that a server's prompt_tokens also counts (markers such as
// <|vision_start|>…<|vision_end|>, Qwen3-VL's timestamps, InternVL's frame labels). The overhead is
// the tokenizer's count as the families' byte-level BPE tokenizers split it (a digit a token); the
// ratio band absorbs a token or two.
type VisualCount struct {
	Tokens   int
	Overhead int
}

// Count is v's arithmetic for in: an error (its message the reason) when the family has none for the
// form, or the input is not one it reads.
func (v Vision) Count(in VisualInput) (VisualCount, error) {
	if in.Frames < 1 || in.W < 1 || in.H < 1 || in.W > geom.MaxSide || in.H > geom.MaxSide {
		return VisualCount{}, fmt.Errorf("%d frames of %dx%d", in.Frames, in.W, in.H)
	}
	if v.Patch < 1 || v.Merge < 1 {
		return VisualCount{}, fmt.Errorf("%s: patch %d, merge %d", v.Family, v.Patch, v.Merge)
	}
	imgs := max(1, in.Images)
	video := in.Form != FormImages && in.Form != FormImageURL
	switch v.Family {
	case FamilyQwen2VL, FamilyQwen25VL, FamilyQwen3VL:
		return v.qwen(in, imgs, video)
	case FamilyInternVL:
		return v.internVL(in, imgs, video)
	case FamilyLLaVANeXTVideo:
		if !video || imgs > 1 {
			return VisualCount{}, errors.New("llava-next-video takes a video, not images")
		}
		side := ceilDiv(v.Image/v.Patch, v.Merge) // _get_num_frame_tokens: ceil(24 / 2)²
		return VisualCount{Tokens: in.Frames * side * side}, nil
	case FamilyLLaVA:
		if video {
			return VisualCount{}, errors.New("llava reads images, not a video")
		}
		if v.Anyres {
			return VisualCount{}, errors.New("a LLaVA-1.6 anyres projector's tiling is not counted here")
		}
		side := v.Image / v.Patch
		return VisualCount{Tokens: in.Frames * imgs * side * side}, nil
	}
	return VisualCount{}, errors.New(WhyUnknownFamily)
}

// qwen: each image (or temporal pair of frames, padded with the last frame) is resized to a multiple
// of patch·merge within the pixel bounds and takes (h/f)·(w/f) tokens. Images carry
// <|vision_start|>…<|vision_end|> each; a Qwen2/2.5-VL video is one such block, a Qwen3-VL video one
// per pair behind its "<t seconds>".
func (v Vision) qwen(in VisualInput, imgs int, video bool) (VisualCount, error) {
	f := v.Patch * v.Merge
	h, w, err := v.qwenSize(in.H, in.W, f)
	if err != nil {
		return VisualCount{}, err
	}
	per := (h / f) * (w / f)
	if !video {
		n := in.Frames * imgs
		return VisualCount{Tokens: n * per, Overhead: 2 * n}, nil
	}
	if imgs > 1 {
		return VisualCount{}, errors.New("a Qwen video takes one image per frame, not tiles")
	}
	pairs := (in.Frames + 1) / 2
	c := VisualCount{Tokens: pairs * per, Overhead: 2}
	if v.Family == FamilyQwen3VL {
		c.Overhead = 0
		for g := range pairs {
			t := 0.0
			if g < len(in.PairTimes) {
				t = in.PairTimes[g]
			}
			c.Overhead += 2 + timestampTokens(t)
		}
	}
	return c, nil
}

// qwenSize is the size a Qwen processor gives an h×w image: mtmd's resize in process, transformers'
// smart_resize (qwen-vl-utils 0.0.11's, the image processors') for a server.
func (v Vision) qwenSize(h, w, f int) (int, int, error) {
	if v.Mtmd {
		mh, mw := mtmdSize(h, w, f, v.MinPixels, v.MaxPixels)
		return mh, mw, nil
	}
	minP, maxP := float64(v.MinPixels), float64(v.MaxPixels)
	if maxP <= 0 {
		maxP = math.Inf(1)
	}
	return geom.SmartResize(geom.QwenV0011, h, w, f, minP, maxP)
}

// timestampTokens is how many tokens Qwen's tokenizer makes of "<t.t seconds>": "<", each digit and
// the point, " seconds", ">".
func timestampTokens(t float64) int {
	return 3 + len(strconv.FormatFloat(t, 'f', 1, 64))
}

// mtmdSize is llama.cpp mtmd's calc_size_preserved_ratio (tools/mtmd/mtmd-image.cpp, used by the
// dyn_size preprocessor of the Qwen projectors): smart_resize in float32, std::round rounding half
// away from zero, the bounds in pixels.
func mtmdSize(h, w, f, minP, maxP int) (int, int) {
	ff := float32(f)
	by := func(x float32, op func(float64) float64) int { return int(op(float64(x/ff))) * f }
	wb := max(f, by(float32(w), math.Round))
	hb := max(f, by(float32(h), math.Round))
	switch {
	case maxP > 0 && hb*wb > maxP:
		beta := float32(math.Sqrt(float64(float32(h) * float32(w) / float32(maxP))))
		hb = max(f, by(float32(h)/beta, math.Floor))
		wb = max(f, by(float32(w)/beta, math.Floor))
	case minP > 0 && hb*wb < minP:
		beta := float32(math.Sqrt(float64(float32(minP) / (float32(h) * float32(w)))))
		hb = by(float32(h)*beta, math.Ceil)
		wb = by(float32(w)*beta, math.Ceil)
	}
	return hb, wb
}

// internVL: (Image/Patch)²/Merge² tokens a tile (256 at 448 and patch 14), each block <img>…</img>.
// A video (one tile a frame, or a tiled geometry's tiles and thumbnail in the frame's one block)
// writes "Frame{i}: " before and a line break after each frame. An image is tiled: by
// dynamic_preprocess on a server, by mtmd's llava-uhd slicing in process (an image within one tile
// is one tile).
func (v Vision) internVL(in VisualInput, imgs int, video bool) (VisualCount, error) {
	if v.Image < v.Patch*v.Merge {
		return VisualCount{}, fmt.Errorf("internvl: tile %d, patch %d, merge %d", v.Image, v.Patch, v.Merge)
	}
	side := v.Image / v.Patch / v.Merge
	perTile := side * side
	if video {
		c := VisualCount{Tokens: in.Frames * imgs * perTile}
		for i := range in.Frames {
			c.Overhead += 2 + 1 + 2 + len(strconv.Itoa(i+1)) + 1 // <img></img>, "Frame", ":", " ", digits, "\n"
		}
		return c, nil
	}
	tiles, err := v.internVLTiles(in.W, in.H)
	if err != nil {
		return VisualCount{}, err
	}
	n := in.Frames * imgs
	return VisualCount{Tokens: n * tiles * perTile, Overhead: 2 * n}, nil
}

// internVLTiles is the images one W×H image becomes (tiles, and the thumbnail when more than one).
func (v Vision) internVLTiles(w, h int) (int, error) {
	maxTiles := max(1, v.MaxTiles)
	if v.Mtmd {
		if w <= v.Image && h <= v.Image {
			return 1, nil
		}
		bw, bh := llavaUHDBest(w, h, v.Image, maxTiles)
		return (bw/v.Image)*(bh/v.Image) + 1, nil
	}
	l, err := geom.InternVL{MinNum: 1, MaxNum: maxTiles, Order: geom.OrderReadme, Thumbnail: true, TileSize: v.Image}.Layout(w, h, 1)
	if err != nil {
		return 0, err
	}
	return l.Images(), nil
}

// llavaUHDBest is mtmd's select_best_resolution over InternVL's candidate grids
// (clip.cpp set_internvl_dhr_res_candidates: a×b tiles, 1 ≤ a·b ≤ maxTiles, in that order): the
// candidate that keeps the most of the image's resolution, then wastes the least, the first on a tie
// (float32 scales, truncated sizes, as mtmd-image.cpp computes them).
func llavaUHDBest(w, h, tile, maxTiles int) (int, int) {
	bestW, bestH := 0, 0
	bestEff, bestWaste := 0, math.MaxInt
	for a := 1; a <= maxTiles; a++ {
		for b := 1; b <= maxTiles/a; b++ {
			cw, ch := a*tile, b*tile
			scale := min(float32(cw)/float32(w), float32(ch)/float32(h))
			tw, th := int(float32(w)*scale), int(float32(h)*scale)
			eff := min(tw*th, w*h)
			waste := cw*ch - eff
			if eff > bestEff || (eff == bestEff && waste < bestWaste) {
				bestEff, bestWaste, bestW, bestH = eff, waste, cw, ch
			}
		}
	}
	return bestW, bestH
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Ratio is seen/expected, and whether it says something (an expected count above 0 and a seen one).
func (c *VisualCheck) Ratio() (float64, bool) {
	if c == nil || c.Expected == nil || c.Seen == nil || *c.Expected <= 0 {
		return 0, false
	}
	return float64(*c.Seen) / float64(*c.Expected), true
}

// VisualCauses names the likely causes of a ratio outside the band for the route the frames took
// (Response.InputForm): what the server kind is known to do.
func VisualCauses(form string, ratio float64) string {
	fewer := ratio < 1
	switch form {
	case FormImages, FormQwen2VLVideo, FormQwen25VLVideo, FormQwen3VLVideo, FormInternVLFrames:
		return "in process the two counts are one runtime's: framesweep's arithmetic and mtmd disagree (a bug to report)"
	case FormVLLMVideo:
		if fewer {
			return "the server kept fewer frames (vLLM ≥ 0.19 keeps the first num_frames of a video/jpeg item, default 32, when the per-request media_io_kwargs do not reach it: start it with --media-io-kwargs '{\"video\":{\"num_frames\":-1}}'), or its processor resized the frames smaller (max_pixels)"
		}
		return "the server's processor made more tokens than the frames sent: it resized them larger (min_pixels, do_resize) or re-sampled the video (do_sample_frames), or the family is not the model's (family=)"
	case FormSGLangVideo:
		if fewer {
			return "the server kept fewer frames (SGLang ≥ v0.5.11 samples Qwen-VL video frames twice, halving them: sglang#31200), or its processor resized them smaller"
		}
		return "the server's processor made more tokens than the frames sent (a resize, a re-sampling), or the family is not the model's (family=)"
	case FormImageURL:
		if fewer {
			return "the server dropped images (a per-prompt image limit, a context budget per image as ollama's) or resized them smaller (max_pixels, --mm-processor-kwargs)"
		}
		return "the server made more tokens of the images: it resized them larger (min_pixels) or tiled them (InternVL max_dynamic_patch), or the family is not the model's (family=)"
	}
	return "the server did not count the frames sent"
}
