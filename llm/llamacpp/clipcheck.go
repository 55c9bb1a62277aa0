package llamacpp

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/internal/gguf"
)

// Vision projectors are checked in Go against what the pinned clip.cpp (tools/mtmd/clip.cpp and the
// graph builders in tools/mtmd/models/) dereferences or asserts, because a missing tensor, a key of the
// wrong type, or a shape the graph cannot reshape aborts the process (segfault, GGML_ASSERT) instead of
// failing the load (DEPS.md). Only projector types whose requirements are written down here are let
// through; any other type is refused at load with its name.

// projectorChecks maps clip.projector_type to the check of that type's tensors.
var projectorChecks = map[string]func(*clipFile) error{
	"mlp":              checkMLP,
	"qwen2vl_merger":   checkQwen2VL,
	"qwen2.5vl_merger": checkQwen2VL,
	"qwen3vl_merger":   checkQwen3VL,
	"internvl":         checkInternVL,
}

// SupportedProjectors lists the projector types the in-process backend loads.
func SupportedProjectors() []string {
	out := make([]string, 0, len(projectorChecks))
	for k := range projectorChecks {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// clipFile is a projector's key/values and tensor shapes (ggml order) with its vision sizes.
type clipFile struct {
	kv     gguf.KV
	shapes map[string][]uint64
	proj   string
	// E embedding length, F feed-forward length, P patch size, I image size, N blocks, H heads.
	E, F, P, I, N, H uint64
}

// keyTypes are the clip keys clip.cpp reads with a typed getter (gguf_get_val_* asserts the type).
var keyTypes = map[string]string{
	"clip.projector_type": "string", "clip.vision.projector_type": "string", "clip.audio.projector_type": "string",
	"clip.has_vision_encoder": "bool", "clip.has_audio_encoder": "bool", "clip.use_gelu": "bool", "clip.use_silu": "bool",
	"clip.vision.embedding_length": "u32", "clip.vision.attention.head_count": "u32",
	"clip.vision.feed_forward_length": "u32", "clip.vision.block_count": "u32", "clip.vision.projection_dim": "u32",
	"clip.vision.image_size": "u32", "clip.vision.patch_size": "u32", "clip.vision.image_crop_resolution": "u32",
	"clip.minicpmv_query_num": "u32", "clip.vision.projector.scale_factor": "u32",
	"clip.vision.preproc_image_size": "u32", "clip.vision.spatial_merge_size": "u32", "clip.vision.n_wa_pattern": "u32",
	"clip.minicpmv_version": "i32", "clip.vision.attention.layer_norm_epsilon": "f32",
	"clip.vision.mm_patch_merge_type": "string", "general.name": "string", "general.description": "string",
	"clip.vision.image_mean": "[]f32", "clip.vision.image_std": "[]f32",
	"clip.vision.image_grid_pinpoints": "[]i32", "clip.vision.feature_layer": "[]i32",
}

// keyType is a value's GGUF type as keyTypes names it.
func keyType(v any) string { return gguf.TypeName(v) }

// checkClip validates a vision projector before clip.cpp loads it and returns its projector type.
func checkClip(g *gguf.File) (string, error) {
	c, err := clipOf(g)
	if err != nil {
		return "", err
	}
	check, ok := projectorChecks[c.proj]
	if !ok {
		return "", fmt.Errorf("projector type %q is not supported in process (supported: %s)", c.proj, strings.Join(SupportedProjectors(), ", "))
	}
	if err := c.need("v.patch_embd.weight", c.P, c.P, 3, c.E); err != nil {
		return "", err
	}
	for _, n := range []string{"v.pre_ln.weight", "v.pre_ln.bias", "v.post_ln.weight", "v.post_ln.bias"} {
		if err := c.opt(n, c.E); err != nil {
			return "", err
		}
	}
	return c.proj, check(c)
}

// clipOf reads and checks a projector's key/values (typed keys, required sizes) into a clipFile.
func clipOf(g *gguf.File) (*clipFile, error) {
	kv := g.KV
	for k, want := range keyTypes {
		v, ok := kv[k]
		if !ok {
			continue
		}
		if got := keyType(v); got != want && !(want == "[]i32" && got == "[]u32") { // same width: read alike
			return nil, fmt.Errorf("vision projector: key %s has type %s, clip.cpp reads %s", k, got, want)
		}
	}
	if !kv.Bool("clip.has_vision_encoder") {
		return nil, fmt.Errorf("vision projector has no vision encoder (clip.has_vision_encoder is not true)")
	}
	if kv.Bool("clip.has_audio_encoder") {
		return nil, fmt.Errorf("vision projector also has an audio encoder, which the in-process backend does not load")
	}
	for _, k := range []string{"image_mean", "image_std", "image_size", "patch_size", "embedding_length",
		"block_count", "attention.head_count", "feed_forward_length", "projection_dim", "attention.layer_norm_epsilon"} {
		if _, ok := kv["clip.vision."+k]; !ok {
			return nil, fmt.Errorf("vision projector lacks clip.vision.%s", k)
		}
	}
	if len(kv.Floats("clip.vision.image_mean")) < 3 || len(kv.Floats("clip.vision.image_std")) < 3 {
		return nil, fmt.Errorf("vision projector: image_mean/image_std need 3 values")
	}
	if len(kv.Ints("clip.vision.image_grid_pinpoints"))%2 != 0 {
		return nil, fmt.Errorf("vision projector: image_grid_pinpoints has an odd number of values")
	}
	c := &clipFile{kv: kv, shapes: map[string][]uint64{},
		E: kvUint(kv, "clip.vision.embedding_length"), F: kvUint(kv, "clip.vision.feed_forward_length"),
		P: kvUint(kv, "clip.vision.patch_size"), I: kvUint(kv, "clip.vision.image_size"),
		N: kvUint(kv, "clip.vision.block_count"), H: kvUint(kv, "clip.vision.attention.head_count")}
	if c.H == 0 || c.E == 0 || c.E%c.H != 0 {
		return nil, fmt.Errorf("vision projector: head count %d does not divide embedding length %d", c.H, c.E)
	}
	if c.P == 0 || c.I == 0 || c.N == 0 || c.N > 1024 {
		return nil, fmt.Errorf("vision projector: patch size %d, image size %d or block count %d out of range", c.P, c.I, c.N)
	}
	if eps, _ := kv["clip.vision.attention.layer_norm_epsilon"].(float32); !(eps >= 0 && eps < float32(math.Inf(1))) {
		return nil, fmt.Errorf("vision projector: clip.vision.attention.layer_norm_epsilon = %v (ggml's norms assert a finite epsilon >= 0)", eps)
	}
	for _, t := range g.Tensors {
		c.shapes[t.Name] = t.Shape
	}
	c.proj = projectorType(kv)
	return c, nil
}

// projectorType is clip.cpp's choice: clip.projector_type, else clip.vision.projector_type, else "mlp".
func projectorType(kv gguf.KV) string {
	for _, k := range []string{"clip.projector_type", "clip.vision.projector_type"} {
		if p := kv.String(k); p != "" {
			return p
		}
	}
	return "mlp"
}

// has reports whether the projector holds tensor name.
func (c *clipFile) has(name string) bool { _, ok := c.shapes[name]; return ok }

// need requires tensor name with the given ggml shape (trailing 1s ignored); no shape means any.
func (c *clipFile) need(name string, shape ...uint64) error {
	if !c.has(name) {
		return fmt.Errorf("vision projector (%s) lacks tensor %s", c.proj, name)
	}
	return c.opt(name, shape...)
}

// opt checks tensor name's shape when it is present.
func (c *clipFile) opt(name string, shape ...uint64) error {
	got, ok := c.shapes[name]
	if !ok || len(shape) == 0 {
		return nil
	}
	if !sameShape(got, shape) {
		return fmt.Errorf("vision projector (%s): tensor %s has shape %v, want %v", c.proj, name, got, shape)
	}
	return nil
}

// dim returns dimension i of tensor name (0 when absent).
func (c *clipFile) dim(name string, i int) uint64 {
	if s := c.shapes[name]; i < len(s) {
		return s[i]
	}
	return 0
}

func (c *clipFile) blk(b uint64, n string) string { return fmt.Sprintf("v.blk.%d.%s", b, n) }

// checkBlock checks block b's norms, attention (separate q/k/v when !fused, else attn_qkv; biases
// required when biases) and FFN (up/down in either order: clip.cpp swaps legacy files).
func (c *clipFile) checkBlock(b uint64, attn, fused, biases bool) error {
	E, F := c.E, c.F
	for _, n := range []string{"ln1.weight", "ln1.bias", "ln2.weight", "ln2.bias", "ls1.weight", "ls2.weight",
		"attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_out.bias", "attn_q_norm.weight", "attn_k_norm.weight"} {
		if err := c.opt(c.blk(b, n), E); err != nil {
			return err
		}
	}
	if err := c.need(c.blk(b, "attn_out.weight"), E, E); err != nil {
		return err
	}
	if attn {
		switch {
		case fused || c.has(c.blk(b, "attn_qkv.weight")):
			if err := c.need(c.blk(b, "attn_qkv.weight"), E, 3*E); err != nil {
				return err
			}
			if err := c.opt(c.blk(b, "attn_qkv.bias"), 3*E); err != nil {
				return err
			}
			if biases {
				if err := c.need(c.blk(b, "attn_qkv.bias"), 3*E); err != nil {
					return err
				}
			}
			if c.has(c.blk(b, "attn_q_norm.weight")) || c.has(c.blk(b, "attn_k_norm.weight")) {
				return fmt.Errorf("vision projector (%s): block %d has a fused attn_qkv with q/k norms, which clip.cpp asserts against", c.proj, b)
			}
		default:
			for _, n := range []string{"attn_q", "attn_k", "attn_v"} {
				if err := c.need(c.blk(b, n+".weight"), E, E); err != nil {
					return err
				}
				if biases {
					if err := c.need(c.blk(b, n+".bias"), E); err != nil {
						return err
					}
				}
			}
		}
	}
	up, down := c.blk(b, "ffn_up.weight"), c.blk(b, "ffn_down.weight")
	if err := c.need(up); err != nil {
		return err
	}
	if err := c.need(down); err != nil {
		return err
	}
	if c.opt(up, E, F) != nil || c.opt(down, F, E) != nil {
		if c.opt(up, F, E) != nil || c.opt(down, E, F) != nil { // the legacy swapped layout
			return fmt.Errorf("vision projector (%s): block %d FFN shapes %v/%v do not match embedding %d and feed-forward %d",
				c.proj, b, c.shapes[up], c.shapes[down], E, F)
		}
	}
	for _, n := range []string{"ffn_gate.weight"} {
		if err := c.opt(c.blk(b, n), c.shapes[up]...); err != nil {
			return err
		}
	}
	return nil
}

// checkProj checks a two-layer merger in→hidden→out given its tensor names.
func (c *clipFile) checkProj(w0, b0, w1, b1 string, in uint64) (out uint64, err error) {
	if err := c.need(w0); err != nil {
		return 0, err
	}
	hid := c.dim(w0, 1)
	if err := c.need(w0, in, hid); err != nil {
		return 0, err
	}
	if err := c.need(b0, hid); err != nil {
		return 0, err
	}
	if err := c.need(w1); err != nil {
		return 0, err
	}
	out = c.dim(w1, 1)
	if err := c.need(w1, hid, out); err != nil {
		return 0, err
	}
	if err := c.need(b1, out); err != nil {
		return 0, err
	}
	return out, nil
}

// checkMLP: LLaVA-1.5/1.6 style (models/llava.cpp): learned positions for every patch (+ class),
// q/k/v in every block the graph runs (up to the second-to-last, or the deepest feature layer),
// mm.0 and mm.2 (each with its bias; clip_n_mmproj_embd reads mm.2); mm.3 makes it the Yi-style MLP_NORM with mm.1/3/4.
func checkMLP(c *clipFile) error {
	if c.I%c.P != 0 {
		return fmt.Errorf("vision projector (mlp): image size %d is not a multiple of patch size %d", c.I, c.P)
	}
	nPos := (c.I / c.P) * (c.I / c.P)
	if c.has("v.class_embd") {
		nPos++
		if err := c.opt("v.class_embd", c.E); err != nil {
			return err
		}
	}
	if err := c.need("v.position_embd.weight"); err != nil {
		return err
	}
	if c.dim("v.position_embd.weight", 0) != c.E || c.dim("v.position_embd.weight", 1) < nPos {
		return fmt.Errorf("vision projector (mlp): v.position_embd.weight %v holds fewer than %d positions of %d", c.shapes["v.position_embd.weight"], nPos, c.E)
	}
	// The graph runs blocks 0..run-1: up to the second-to-last, or to the deepest feature layer.
	run, deepest := c.N-1, int64(-1)
	for _, l := range c.kv.Ints("clip.vision.feature_layer") {
		if l < 0 || uint64(l) > c.N {
			return fmt.Errorf("vision projector (mlp): feature layer %d outside 0..%d", l, c.N)
		}
		deepest = max(deepest, l)
	}
	if deepest >= 0 {
		run = uint64(deepest)
	}
	for b := uint64(0); b < c.N; b++ {
		if err := c.checkBlock(b, b < run, false, false); err != nil {
			return err
		}
	}
	if c.has("mm.3.weight") { // MLP_NORM (Yi-type)
		h := c.dim("mm.0.weight", 1)
		for _, n := range []string{"mm.0.bias", "mm.1.weight", "mm.1.bias"} {
			if err := c.need(n, h); err != nil {
				return err
			}
		}
		if err := c.need("mm.0.weight", c.E, h); err != nil {
			return err
		}
		o := c.dim("mm.3.weight", 1)
		if err := c.need("mm.3.weight", h, o); err != nil {
			return err
		}
		for _, n := range []string{"mm.3.bias", "mm.4.weight", "mm.4.bias"} {
			if err := c.need(n, o); err != nil {
				return err
			}
		}
		return nil
	}
	if err := c.need("mm.0.weight"); err != nil {
		return err
	}
	h := c.dim("mm.0.weight", 1)
	if err := c.need("mm.0.weight", c.E, h); err != nil {
		return err
	}
	if err := c.need("mm.0.bias", h); err != nil {
		return err
	}
	// clip_n_mmproj_embd reads mm.2's output width unconditionally for "mlp" (a segfault without it).
	if err := c.need("mm.2.weight"); err != nil {
		return err
	}
	o := c.dim("mm.2.weight", 1)
	if err := c.need("mm.2.weight", h, o); err != nil {
		return err
	}
	return c.need("mm.2.bias", o)
}

// checkMRoPE: the Qwen ViTs' M-RoPE head split, no class token, both Conv3D slices.
func checkMRoPE(c *clipFile) error {
	if (c.E/c.H)%4 != 0 {
		return fmt.Errorf("vision projector (%s): head size %d is not a multiple of 4 (M-RoPE sections)", c.proj, c.E/c.H)
	}
	if c.has("v.class_embd") {
		return fmt.Errorf("vision projector (%s): has v.class_embd, which the graph asserts against", c.proj)
	}
	return c.need("v.patch_embd.weight.1", c.P, c.P, 3, c.E)
}

// checkQwen2VL: Qwen2-VL and Qwen2.5-VL (models/qwen2vl.cpp): both Conv3D slices, no patch bias,
// separate q/k/v with biases in every block, merger mm.0/mm.2 from 4E; with window attention the
// output is reshaped by projection_dim.
func checkQwen2VL(c *clipFile) error {
	if err := checkMRoPE(c); err != nil {
		return err
	}
	if c.has("v.patch_embd.bias") {
		return fmt.Errorf("vision projector (%s): has v.patch_embd.bias, which the graph asserts against", c.proj)
	}
	if c.proj == "qwen2.5vl_merger" {
		if _, ok := c.kv["clip.vision.n_wa_pattern"]; !ok {
			return fmt.Errorf("vision projector (%s) lacks clip.vision.n_wa_pattern", c.proj)
		}
	}
	// Block b attends fully when (b+1) % n_wa_pattern == 0: with 1 no block reads the window mask,
	// which the graph then lacks and clip.cpp aborts setting it ("Failed to get tensor window_mask").
	if kvUint(c.kv, "clip.vision.n_wa_pattern") == 1 {
		return fmt.Errorf("vision projector (%s): clip.vision.n_wa_pattern 1 makes every block full attention and leaves the window mask out of the graph, which clip.cpp aborts on", c.proj)
	}
	for b := uint64(0); b < c.N; b++ {
		if c.has(c.blk(b, "attn_qkv.weight")) {
			return fmt.Errorf("vision projector (%s): block %d has a fused attn_qkv; the graph reads attn_q/k/v", c.proj, b)
		}
		if err := c.checkBlock(b, true, false, true); err != nil {
			return err
		}
	}
	out, err := c.checkProj("mm.0.weight", "mm.0.bias", "mm.2.weight", "mm.2.bias", 4*c.E)
	if err != nil {
		return err
	}
	if kvUint(c.kv, "clip.vision.n_wa_pattern") > 0 && kvUint(c.kv, "clip.vision.projection_dim") != out {
		return fmt.Errorf("vision projector (%s): projection_dim %d differs from the merger output %d (window attention reshapes by it)",
			c.proj, kvUint(c.kv, "clip.vision.projection_dim"), out)
	}
	return nil
}

// checkQwen3VL: Qwen3-VL (models/qwen3vl.cpp): both Conv3D slices, patch bias, a square learned
// position grid (interpolated), fused qkv with bias in every block, deepstack mergers whose output
// matches the main merger's.
func checkQwen3VL(c *clipFile) error {
	if err := checkMRoPE(c); err != nil {
		return err
	}
	// The main merger is hard-coded 2×2 but the deepstack mergers reshape by spatial_merge_size².
	if m, ok := c.kv["clip.vision.spatial_merge_size"]; ok && m != uint32(2) {
		return fmt.Errorf("vision projector (%s): spatial_merge_size %v (the graph merges 2×2)", c.proj, m)
	}
	if err := c.need("v.patch_embd.bias", c.E); err != nil {
		return err
	}
	if err := c.need("v.position_embd.weight"); err != nil {
		return err
	}
	n := c.dim("v.position_embd.weight", 1)
	if side := uint64(math.Sqrt(float64(n))); side*side != n || n == 0 || c.dim("v.position_embd.weight", 0) != c.E {
		return fmt.Errorf("vision projector (%s): v.position_embd.weight %v is not a square grid of %d-wide positions", c.proj, c.shapes["v.position_embd.weight"], c.E)
	}
	out, err := c.checkProj("mm.0.weight", "mm.0.bias", "mm.2.weight", "mm.2.bias", 4*c.E)
	if err != nil {
		return err
	}
	for b := uint64(0); b < c.N; b++ {
		if err := c.checkBlock(b, true, true, true); err != nil {
			return err
		}
		d := fmt.Sprintf("v.deepstack.%d.", b)
		if !c.has(d + "fc1.weight") {
			continue
		}
		if err := c.opt(d+"norm.weight", 4*c.E); err != nil {
			return err
		}
		if err := c.opt(d+"norm.bias", 4*c.E); err != nil {
			return err
		}
		hid := c.dim(d+"fc1.weight", 1)
		if err := c.need(d+"fc1.weight", 4*c.E, hid); err != nil {
			return err
		}
		if err := c.opt(d+"fc1.bias", hid); err != nil {
			return err
		}
		if err := c.need(d+"fc2.weight", hid, out); err != nil {
			return err
		}
		if err := c.opt(d+"fc2.bias", out); err != nil {
			return err
		}
	}
	return nil
}

// checkInternVL: InternVL (models/internvl.cpp): class token and learned positions for every patch
// (+1), pixel shuffle by projector.scale_factor (> 0, dividing the patch grid), projector
// mm.model.mlp.0 (layer norm), .1, .3.
func checkInternVL(c *clipFile) error {
	s := kvUint(c.kv, "clip.vision.projector.scale_factor")
	if c.I%c.P != 0 {
		return fmt.Errorf("vision projector (internvl): image size %d is not a multiple of patch size %d", c.I, c.P)
	}
	side := c.I / c.P
	if s == 0 || side%s != 0 {
		return fmt.Errorf("vision projector (internvl): clip.vision.projector.scale_factor %d must be > 0 and divide the %d-patch side", s, side)
	}
	if err := c.need("v.class_embd", c.E); err != nil {
		return err
	}
	if err := c.need("v.position_embd.weight", c.E, side*side+1); err != nil {
		return err
	}
	if err := c.opt("v.patch_embd.bias", c.E); err != nil {
		return err
	}
	for b := uint64(0); b < c.N; b++ {
		if err := c.checkBlock(b, true, false, false); err != nil {
			return err
		}
	}
	in := s * s * c.E
	if err := c.need("mm.model.mlp.0.weight", in); err != nil {
		return err
	}
	if err := c.need("mm.model.mlp.0.bias", in); err != nil {
		return err
	}
	_, err := c.checkProj("mm.model.mlp.1.weight", "mm.model.mlp.1.bias", "mm.model.mlp.3.weight", "mm.model.mlp.3.bias", in)
	return err
}

// kvUint is key k's unsigned value (0 when absent; its type was checked against keyTypes).
func kvUint(kv gguf.KV, k string) uint64 {
	v, _ := kv.Uint(k)
	return v
}
