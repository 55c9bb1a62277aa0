package testmodel

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/framesweep/framesweep/internal/gguf"
)

// Arch is the model family a tiny pair imitates: the text model's GGUF architecture and the
// projector type of its mmproj, with the tensors and keys llama.cpp and clip.cpp need for them.
type Arch string

// The families of the study's models. Answers of every tiny model are noise.
const (
	ArchLlama    Arch = "llama"    // llama text + "mlp" projector (LLaVA-1.5/1.6, LLaVA-NeXT-Video): Write's pair
	ArchQwen2VL  Arch = "qwen2vl"  // qwen2vl text (M-RoPE) + "qwen2vl_merger"
	ArchQwen25VL Arch = "qwen25vl" // qwen2vl text (M-RoPE) + "qwen2.5vl_merger" (RMS norm, SwiGLU, window attention)
	ArchQwen3VL  Arch = "qwen3vl"  // qwen3vl text (interleaved M-RoPE, deepstack input) + "qwen3vl_merger"
	ArchInternVL Arch = "internvl" // qwen2 text (1-D RoPE, as InternVL3) + "internvl" (pixel shuffle)
)

// Archs lists every architecture WriteArch writes.
var Archs = []Arch{ArchLlama, ArchQwen2VL, ArchQwen25VL, ArchQwen3VL, ArchInternVL}

// ParseArch returns the Arch named s.
func ParseArch(s string) (Arch, error) {
	for _, a := range Archs {
		if string(a) == s {
			return a, nil
		}
	}
	names := make([]string, len(Archs))
	for i, a := range Archs {
		names[i] = string(a)
	}
	return "", fmt.Errorf("testmodel: unknown architecture %q (known: %s)", s, strings.Join(names, ", "))
}

// Files returns the file names WriteArch uses for a: Write's names for ArchLlama, arch-named ones
// otherwise, so that every family fits in one directory.
func (a Arch) Files() (model, mmproj string) {
	if a == ArchLlama {
		return ModelFile, MmprojFile
	}
	return "tiny-" + string(a) + ".gguf", "tiny-" + string(a) + "-mmproj.gguf"
}

// WriteArch writes the tiny text model and projector of arch into dir (created if needed) from seed.
// WriteArch(dir, ArchLlama, seed) writes exactly what Write(dir, seed) writes.
func WriteArch(dir string, arch Arch, seed uint64) (Paths, error) {
	if arch == ArchLlama {
		return Write(dir, seed)
	}
	spec, ok := archSpecs[arch]
	if !ok {
		_, err := ParseArch(string(arch))
		return Paths{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Paths{}, fmt.Errorf("testmodel: %w", err)
	}
	mf, pf := arch.Files()
	p := Paths{Model: filepath.Join(dir, mf), Mmproj: filepath.Join(dir, pf)}
	// A different stream per architecture (keyed by its name), so no two families share weights.
	h := fnv.New64a()
	h.Write([]byte(arch))
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15^h.Sum64()))
	if err := writeGGUF(p.Model, spec.textKV(arch), spec.textTensors(rng)); err != nil {
		return Paths{}, err
	}
	if err := writeGGUF(p.Mmproj, spec.vision.kv(arch), spec.vision.tensors(rng)); err != nil {
		return Paths{}, err
	}
	return p, nil
}

// archSpec describes one family's tiny text model and projector.
type archSpec struct {
	textArch  string  // GGUF general.architecture of the text model
	qkvBias   bool    // attention q/k/v biases (Qwen2 text models)
	qkNorm    bool    // per-head q/k RMS norms (Qwen3 text models)
	sections  []int32 // M-RoPE rope.dimension_sections (sum = rope dims / 2); nil for 1-D RoPE
	deepstack uint32  // Qwen3-VL: projector layers whose features are stacked onto the input embedding
	special   []string
	template  string // tokenizer.chat_template (Jinja, as the real model ships it; llama.cpp detects its family)
	vision    visionSpec
}

// chatmlTemplate is a chatml Jinja template of the Qwen/InternVL kind (the real ones add a default
// system turn and media placeholders; llama.cpp's built-in formatter recognises the family by
// "<|im_start|>").
const chatmlTemplate = "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}" +
	"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n" +
	"{{ message['content'] }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"

var archSpecs = map[Arch]archSpec{
	ArchQwen2VL: {textArch: "qwen2vl", qkvBias: true, sections: []int32{2, 3, 3, 0},
		special: []string{"<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>"}, template: chatmlTemplate,
		vision: visionSpec{projector: "qwen2vl_merger", patch: 14, image: 56, twoConv: true, qkvBias: true, postLN: true}},
	ArchQwen25VL: {textArch: "qwen2vl", qkvBias: true, sections: []int32{2, 3, 3, 0},
		special: []string{"<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>"}, template: chatmlTemplate,
		vision: visionSpec{projector: "qwen2.5vl_merger", patch: 14, image: 56, twoConv: true, qkvBias: true, postLN: true,
			rms: true, silu: true, windowPattern: 2}},
	ArchQwen3VL: {textArch: "qwen3vl", qkNorm: true, sections: []int32{2, 3, 3, 0}, deepstack: 1,
		special: []string{"<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>"}, template: chatmlTemplate,
		vision: visionSpec{projector: "qwen3vl_merger", patch: 16, image: 64, twoConv: true, fusedQKV: true, postLN: true,
			patchBias: true, posGrid: 4, deepstack: 1}},
	ArchInternVL: {textArch: "qwen2", qkvBias: true,
		special: []string{"<|im_start|>", "<|im_end|>", "<img>", "</img>"}, template: chatmlTemplate,
		vision: visionSpec{projector: "internvl", patch: 14, image: 56, qkvBias: true, patchBias: true, classEmbd: true,
			layerScale: true, shuffle: 2}},
}

// vocab is Vocab() followed by the family's control tokens (ids after the shared ones, so the option
// letters keep their ids across families).
func (s archSpec) vocab() (tokens []string, scores []float32, types []int32) {
	tokens, scores, types = Vocab()
	for _, t := range s.special {
		tokens = append(tokens, t)
		scores = append(scores, 0)
		types = append(types, tokControl)
	}
	return tokens, scores, types
}

func (s archSpec) textKV(arch Arch) gguf.KV {
	tokens, scores, types := s.vocab()
	a := s.textArch
	kv := gguf.KV{
		"general.architecture":                  a,
		"general.name":                          fmt.Sprintf("framesweep tiny random %s (answers are noise)", arch),
		"general.file_type":                     uint32(0),
		a + ".context_length":                   uint32(contextLen),
		a + ".embedding_length":                 uint32(embd),
		a + ".feed_forward_length":              uint32(ffn),
		a + ".block_count":                      uint32(blocks),
		a + ".attention.head_count":             uint32(heads),
		a + ".attention.head_count_kv":          uint32(heads),
		a + ".rope.dimension_count":             uint32(embd / heads),
		a + ".attention.layer_norm_rms_epsilon": float32(1e-6),
		a + ".vocab_size":                       uint32(len(tokens)),
		"tokenizer.ggml.model":                  "llama",
		"tokenizer.ggml.tokens":                 tokens,
		"tokenizer.ggml.scores":                 scores,
		"tokenizer.ggml.token_type":             types,
		"tokenizer.ggml.unknown_token_id":       uint32(0),
		"tokenizer.ggml.bos_token_id":           uint32(1),
		"tokenizer.ggml.eos_token_id":           uint32(2),
		"tokenizer.ggml.add_bos_token":          true,
		"tokenizer.ggml.add_eos_token":          false,
		"tokenizer.chat_template":               s.template,
	}
	// The chat families end a turn with <|im_end|>, their EOS (as the real instruct models); llama.cpp
	// also treats it as end-of-generation by its text.
	for i, t := range tokens {
		if t == "<|im_end|>" {
			kv["tokenizer.ggml.eos_token_id"] = uint32(i)
		}
	}
	if s.sections != nil {
		kv[a+".rope.dimension_sections"] = s.sections
	}
	if s.deepstack > 0 {
		kv[a+".n_deepstack_layers"] = s.deepstack
	}
	return kv
}

// textTensors follows textTensors' recipe (a constant first embedding dimension and per-token output
// biases, so the model emits printable text and often a letter) with the family's extra tensors.
func (s archSpec) textTensors(rng *rand.Rand) []gguf.WTensor {
	tokens, _, types := s.vocab()
	V := len(tokens)
	emb := randn(rng, embd*V, 1)
	out := randn(rng, embd*V, 0.3)
	for v := 0; v < V; v++ {
		emb[v*embd] = 4
		t := tokens[v]
		var bias float32
		switch {
		case types[v] != tokNormal, len(t) == 1 && t[0] >= 0x80:
			bias = -3
		case t == "▁":
			bias = 0
		case (len(t) == 1 && t[0] >= 'A' && t[0] <= 'F') || strings.HasPrefix(t, "▁"):
			bias = 4
		case len(t) == 1 && (t[0] >= 0x21 && t[0] < 0x7f):
			bias = 3
		default:
			bias = -3
		}
		out[v*embd] = bias
	}
	ts := []gguf.WTensor{
		tensor("token_embd.weight", emb, embd, uint64(V)),
		tensor("output_norm.weight", fill(embd, 1), embd),
		tensor("output.weight", out, embd, uint64(V)),
	}
	head := uint64(embd / heads)
	for b := 0; b < blocks; b++ {
		p := fmt.Sprintf("blk.%d.", b)
		ts = append(ts,
			tensor(p+"attn_norm.weight", fill(embd, 1), embd),
			tensor(p+"attn_q.weight", randn(rng, embd*embd, 0.1), embd, embd),
			tensor(p+"attn_k.weight", randn(rng, embd*embd, 0.1), embd, embd),
			tensor(p+"attn_v.weight", randn(rng, embd*embd, 0.1), embd, embd),
			tensor(p+"attn_output.weight", randn(rng, embd*embd, 0.1), embd, embd),
			tensor(p+"ffn_norm.weight", fill(embd, 1), embd),
			tensor(p+"ffn_gate.weight", randn(rng, embd*ffn, 0.1), embd, ffn),
			tensor(p+"ffn_up.weight", randn(rng, embd*ffn, 0.1), embd, ffn),
			tensor(p+"ffn_down.weight", randn(rng, ffn*embd, 0.1), ffn, embd),
		)
		if s.qkvBias {
			ts = append(ts,
				tensor(p+"attn_q.bias", randn(rng, embd, 0.02), embd),
				tensor(p+"attn_k.bias", randn(rng, embd, 0.02), embd),
				tensor(p+"attn_v.bias", randn(rng, embd, 0.02), embd))
		}
		if s.qkNorm {
			ts = append(ts,
				tensor(p+"attn_q_norm.weight", fill(int(head), 1), head),
				tensor(p+"attn_k_norm.weight", fill(int(head), 1), head))
		}
	}
	return ts
}

// visionSpec is one projector family. Sizes are tiny; shapes follow what the family's clip graph
// (tools/mtmd/models/*.cpp of the pinned llama.cpp) reads, including tensors the loader marks optional
// but the graph dereferences unconditionally.
type visionSpec struct {
	projector     string
	patch, image  int
	twoConv       bool // v.patch_embd.weight.1: the second temporal slice of Qwen's Conv3D patch embedding
	qkvBias       bool // separate q/k/v with biases
	fusedQKV      bool // v.blk.N.attn_qkv (Qwen3-VL)
	postLN        bool // v.post_ln (Qwen's merger ln_q)
	rms           bool // RMS norms, weights only (Qwen2.5-VL)
	silu          bool // SwiGLU FFN with ffn_gate (Qwen2.5-VL)
	windowPattern int  // clip.vision.n_wa_pattern (Qwen2.5-VL window attention; every n-th block is full)
	patchBias     bool
	posGrid       int // learned position embedding of posGrid×posGrid patches (Qwen3-VL, interpolated)
	deepstack     int // Qwen3-VL: blocks 0..deepstack-1 carry deepstack mergers
	classEmbd     bool
	layerScale    bool // v.blk.N.ls1/ls2 (InternViT)
	shuffle       int  // InternVL pixel-shuffle factor (clip.vision.projector.scale_factor)
}

func (v visionSpec) kv(arch Arch) gguf.KV {
	kv := gguf.KV{
		"general.architecture":                     "clip",
		"general.name":                             fmt.Sprintf("framesweep tiny random %s mmproj (answers are noise)", arch),
		"general.file_type":                        uint32(0),
		"clip.projector_type":                      v.projector,
		"clip.has_vision_encoder":                  true,
		"clip.has_text_encoder":                    false,
		"clip.vision.image_size":                   uint32(v.image),
		"clip.vision.patch_size":                   uint32(v.patch),
		"clip.vision.embedding_length":             uint32(visEmbd),
		"clip.vision.feed_forward_length":          uint32(visFFN),
		"clip.vision.block_count":                  uint32(visBlocks),
		"clip.vision.attention.head_count":         uint32(visHeads),
		"clip.vision.attention.layer_norm_epsilon": float32(1e-6),
		"clip.vision.projection_dim":               uint32(embd),
		"clip.vision.image_mean":                   []float32{0.48145466, 0.4578275, 0.40821073},
		"clip.vision.image_std":                    []float32{0.26862954, 0.26130258, 0.27577711},
	}
	if v.silu {
		kv["clip.use_silu"] = true
	} else {
		kv["clip.use_gelu"] = true
	}
	if v.windowPattern > 0 {
		kv["clip.vision.n_wa_pattern"] = uint32(v.windowPattern)
	}
	if v.shuffle > 0 {
		kv["clip.vision.projector.scale_factor"] = uint32(v.shuffle)
	}
	return kv
}

func (v visionSpec) tensors(rng *rand.Rand) []gguf.WTensor {
	E, F, P := uint64(visEmbd), uint64(visFFN), uint64(v.patch)
	ne := func(shape ...uint64) int {
		n := 1
		for _, d := range shape {
			n *= int(d)
		}
		return n
	}
	w := func(name string, scale float64, shape ...uint64) gguf.WTensor {
		return tensor(name, randn(rng, ne(shape...), scale), shape...)
	}
	one := func(name string, n uint64) gguf.WTensor { return tensor(name, fill(int(n), 1), n) }
	zero := func(name string, n uint64) gguf.WTensor { return tensor(name, fill(int(n), 0), n) }
	norm := func(name string, n uint64) []gguf.WTensor {
		if v.rms {
			return []gguf.WTensor{one(name+".weight", n)}
		}
		return []gguf.WTensor{one(name+".weight", n), zero(name+".bias", n)}
	}

	ts := []gguf.WTensor{w("v.patch_embd.weight", 0.05, P, P, 3, E)}
	if v.twoConv {
		ts = append(ts, w("v.patch_embd.weight.1", 0.05, P, P, 3, E))
	}
	if v.patchBias {
		ts = append(ts, zero("v.patch_embd.bias", E))
	}
	side := uint64(v.image / v.patch)
	switch {
	case v.posGrid > 0:
		ts = append(ts, w("v.position_embd.weight", 0.1, E, uint64(v.posGrid*v.posGrid)))
	case v.classEmbd:
		ts = append(ts, w("v.class_embd", 0.1, E), w("v.position_embd.weight", 0.1, E, side*side+1))
	}
	for b := 0; b < visBlocks; b++ {
		p := fmt.Sprintf("v.blk.%d.", b)
		ts = append(ts, norm(p+"ln1", E)...)
		ts = append(ts, norm(p+"ln2", E)...)
		if v.fusedQKV {
			ts = append(ts, w(p+"attn_qkv.weight", 0.1, E, 3*E), zero(p+"attn_qkv.bias", 3*E))
		} else {
			ts = append(ts, w(p+"attn_q.weight", 0.1, E, E), w(p+"attn_k.weight", 0.1, E, E), w(p+"attn_v.weight", 0.1, E, E))
			if v.qkvBias {
				ts = append(ts, zero(p+"attn_q.bias", E), zero(p+"attn_k.bias", E), zero(p+"attn_v.bias", E))
			}
		}
		ts = append(ts, w(p+"attn_out.weight", 0.1, E, E), zero(p+"attn_out.bias", E),
			w(p+"ffn_up.weight", 0.1, E, F), zero(p+"ffn_up.bias", F),
			w(p+"ffn_down.weight", 0.1, F, E), zero(p+"ffn_down.bias", E))
		if v.silu {
			ts = append(ts, w(p+"ffn_gate.weight", 0.1, E, F), zero(p+"ffn_gate.bias", F))
		}
		if v.layerScale {
			ts = append(ts, one(p+"ls1.weight", E), one(p+"ls2.weight", E))
		}
		if b < v.deepstack {
			d := fmt.Sprintf("v.deepstack.%d.", b)
			ts = append(ts, one(d+"norm.weight", 4*E), zero(d+"norm.bias", 4*E),
				w(d+"fc1.weight", 0.1, 4*E, 4*E), zero(d+"fc1.bias", 4*E),
				w(d+"fc2.weight", 0.1, 4*E, embd), zero(d+"fc2.bias", embd))
		}
	}
	if v.postLN {
		ts = append(ts, norm("v.post_ln", E)...)
	}
	// The merger / projector: 2×2 merged patches (4E) → the text model's embedding.
	switch v.projector {
	case "internvl":
		in := uint64(v.shuffle*v.shuffle) * E
		ts = append(ts, one("mm.model.mlp.0.weight", in), zero("mm.model.mlp.0.bias", in),
			w("mm.model.mlp.1.weight", 0.1, in, embd), zero("mm.model.mlp.1.bias", embd),
			w("mm.model.mlp.3.weight", 0.1, embd, embd), zero("mm.model.mlp.3.bias", embd))
	default: // Qwen mergers
		ts = append(ts, w("mm.0.weight", 0.1, 4*E, 4*E), zero("mm.0.bias", 4*E),
			w("mm.2.weight", 0.2, 4*E, embd), zero("mm.2.bias", embd))
	}
	return ts
}
