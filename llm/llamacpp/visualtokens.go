package llamacpp

import (
	"github.com/framesweep/framesweep/internal/gguf"
	"github.com/framesweep/framesweep/llm"
)

// In process the visual-token check is the runtime's own: its family's arithmetic (llm.Vision with
// mtmd's resize and tiling, from the projector's GGUF and the spec's token bounds) against the
// embeddings mtmd built. The two must be equal (TestVisualTokensEveryFamily).

// projectorFamilies maps a projector type to the family whose arithmetic counts its tokens.
var projectorFamilies = map[string]string{
	"qwen2vl_merger":   llm.FamilyQwen2VL,
	"qwen2.5vl_merger": llm.FamilyQwen25VL,
	"qwen3vl_merger":   llm.FamilyQwen3VL,
	"internvl":         llm.FamilyInternVL,
	"mlp":              llm.FamilyLLaVA,
}

// mtmd's default token bounds of the Qwen projectors (clip.cpp: set_limit_image_tokens(8, 4096)).
const (
	mtmdQwenMinTokens = 8
	mtmdQwenMaxTokens = 4096
)

// visionOf is the projector's arithmetic as mtmd applies it, or why there is none ("" when there is).
func visionOf(proj string, kv gguf.KV, o Options) (llm.Vision, string) {
	fam, ok := projectorFamilies[proj]
	if !ok {
		return llm.Vision{}, "projector type " + proj + " has no visual-token arithmetic"
	}
	v := llm.Vision{Family: fam, Mtmd: true, Merge: 1, Patch: int(kvUint(kv, "clip.vision.patch_size")),
		Image: int(kvUint(kv, "clip.vision.image_size"))}
	switch fam {
	case llm.FamilyQwen2VL, llm.FamilyQwen25VL, llm.FamilyQwen3VL:
		v.Merge = 2
		if m, ok := kv.Uint("clip.vision.spatial_merge_size"); ok {
			v.Merge = int(m)
		}
		area := v.Patch * v.Patch * v.Merge * v.Merge
		lo, hi := mtmdQwenMinTokens, mtmdQwenMaxTokens
		if o.ImageMinTokens > 0 {
			lo = o.ImageMinTokens
		}
		if o.ImageMaxTokens > 0 {
			hi = o.ImageMaxTokens
		}
		v.MinPixels, v.MaxPixels = lo*area, hi*area
	case llm.FamilyInternVL:
		if m, ok := kv.Uint("clip.vision.projector.scale_factor"); ok {
			v.Merge = int(m)
		}
		v.MaxTiles = 12
		if m, ok := kv.Uint("clip.vision.preproc_max_tiles"); ok {
			v.MaxTiles = int(m)
		}
		if m, ok := kv.Uint("clip.vision.preproc_min_tiles"); ok && m != 1 {
			return v, "an InternVL projector with preproc_min_tiles ≠ 1 tiles otherwise than counted here"
		}
	case llm.FamilyLLaVA:
		_, v.Anyres = kv["clip.vision.image_grid_pinpoints"]
	}
	return v, ""
}

// visualCheck is the request's check: the embeddings mtmd built (resp.VisualTokens) and the family's
// count of the frames as this runtime fed them (images mode: each image on its own; video: the
// family's video reading of the frames). nil without frames.
func (r *Runtime) visualCheck(req *llm.Request, resp *llm.Response) *llm.VisualCheck {
	if len(req.Frames) == 0 {
		return nil
	}
	seen := resp.VisualTokens
	c := &llm.VisualCheck{Family: r.vision.Family, Seen: &seen, How: llm.HowRuntime}
	if r.visionWhy != "" {
		c.Why = r.visionWhy
		return c
	}
	per := req.Images()
	var n int
	if resp.InputMode == llm.InputVideo {
		in := llm.VisualInput{Form: resp.InputForm, Frames: len(req.Frames) / per, Images: per, W: req.Frames[0].W, H: req.Frames[0].H,
			PairTimes: resp.VideoTimestampsS}
		k, err := r.vision.Count(in)
		if err != nil {
			c.Why = err.Error()
			return c
		}
		n = k.Tokens
	} else {
		for _, f := range req.Frames { // images mode: frames may differ in size
			k, err := r.vision.Count(llm.VisualInput{Form: llm.FormImages, Frames: 1, W: f.W, H: f.H})
			if err != nil {
				c.Why = err.Error()
				return c
			}
			n += k.Tokens
		}
	}
	c.Expected = &n
	return c
}
