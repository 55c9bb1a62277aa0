// Package testmodel writes a tiny random-weight llama GGUF and a matching tiny random-weight vision
// projector (mmproj, clip architecture, "mlp" projector) with our pure-Go GGUF writer (internal/gguf), and
// the same for each model family of the study (WriteArch: Qwen2-VL, Qwen2.5-VL, Qwen3-VL, InternVL):
// a text model of the family's GGUF architecture and a projector of its type, with the tensors and
// keys llama.cpp and clip.cpp need for them. They are real files that llama.cpp loads and runs on
// images in milliseconds, for tests and the demo. Their answers are noise.
//
// The files are deterministic: the same seed gives byte-identical files.
package testmodel

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/internal/atomicfile"
	"github.com/framesweep/framesweep/internal/gguf"
)

// File names written by Write.
const (
	ModelFile  = "tiny-llama.gguf"
	MmprojFile = "tiny-mmproj.gguf"
)

// Shape of the text model. The context length is ≥ 2048 because ollama's server budgets 768 tokens per
// image and silently drops text parts when the context is smaller.
const (
	embd       = 64
	ffn        = 128
	blocks     = 2
	heads      = 4
	contextLen = 4096

	visEmbd    = 32
	visFFN     = 64 // ≠ visEmbd: a legacy rule in clip.cpp swaps ffn_up/ffn_down when they are equal
	visBlocks  = 2
	visHeads   = 4 // must divide visEmbd, or clip.cpp aborts
	imageSize  = 28
	patchSize  = 14
	mmprojHide = 64
)

// DefaultSeed is what `framesweep testmodel` uses.
const DefaultSeed = 20240601

// Paths are the two files written.
type Paths struct {
	Model  string `json:"model"`
	Mmproj string `json:"mmproj"`
}

// Token kinds of llama.cpp's vocabulary (llama_token_type).
const (
	tokNormal  = 1
	tokUnknown = 2
	tokControl = 3
)

// Vocab returns the SPM vocabulary: control tokens, "▁", one token per byte value as a plain string
// (no "<0xNN>" byte tokens, so every token the model can emit is complete UTF-8 text, which ollama's
// server needs; the bytes ≥ 0x80 exist only so llama.cpp's tokenizer never falls back to a missing
// byte token, which throws and aborts) and the option letters "A".."F" / "▁A".."▁F".
func Vocab() (tokens []string, scores []float32, types []int32) {
	add := func(s string, score float32, typ int32) {
		tokens = append(tokens, s)
		scores = append(scores, score)
		types = append(types, typ)
	}
	add("<unk>", 0, tokUnknown)
	add("<s>", 0, tokControl)
	add("</s>", 0, tokControl)
	add("▁", -1, tokNormal)
	for b := 1; b < 256; b++ {
		if b == ' ' { // SPM turns spaces into "▁" before tokenizing
			continue
		}
		add(string([]byte{byte(b)}), -10, tokNormal)
	}
	for c := 'A'; c <= 'F'; c++ {
		add("▁"+string(c), 0, tokNormal)
	}
	return tokens, scores, types
}

// Write writes ModelFile and MmprojFile into dir (created if needed) from seed.
func Write(dir string, seed uint64) (Paths, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Paths{}, fmt.Errorf("testmodel: %w", err)
	}
	p := Paths{Model: filepath.Join(dir, ModelFile), Mmproj: filepath.Join(dir, MmprojFile)}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	if err := writeGGUF(p.Model, textKV(), textTensors(rng)); err != nil {
		return Paths{}, err
	}
	if err := writeGGUF(p.Mmproj, visionKV(), visionTensors(rng)); err != nil {
		return Paths{}, err
	}
	return p, nil
}

// writeGGUF writes the model whole or not at all (atomicfile): a half-written GGUF would later fail
// as a corrupt model, far from the cause, and a model a running process reads is replaced, never
// rewritten under it. The tiny models are a few MB, so they are built in memory first.
func writeGGUF(path string, kv gguf.KV, ts []gguf.WTensor) error {
	var b bytes.Buffer
	if err := gguf.Write(&b, kv, sortTensors(ts)); err != nil {
		return fmt.Errorf("testmodel: write %s: %w", path, err)
	}
	if err := atomicfile.WritePerm(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("testmodel: write %s: %w", path, err)
	}
	return nil
}

func textKV() gguf.KV {
	tokens, scores, types := Vocab()
	return gguf.KV{
		"general.architecture":                   "llama",
		"general.name":                           "framesweep tiny random llama (answers are noise)",
		"general.file_type":                      uint32(0),
		"llama.context_length":                   uint32(contextLen),
		"llama.embedding_length":                 uint32(embd),
		"llama.feed_forward_length":              uint32(ffn),
		"llama.block_count":                      uint32(blocks),
		"llama.attention.head_count":             uint32(heads),
		"llama.attention.head_count_kv":          uint32(heads),
		"llama.rope.dimension_count":             uint32(embd / heads),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.vocab_size":                       uint32(len(tokens)),
		"tokenizer.ggml.model":                   "llama",
		"tokenizer.ggml.tokens":                  tokens,
		"tokenizer.ggml.scores":                  scores,
		"tokenizer.ggml.token_type":              types,
		"tokenizer.ggml.unknown_token_id":        uint32(0),
		"tokenizer.ggml.bos_token_id":            uint32(1),
		"tokenizer.ggml.eos_token_id":            uint32(2),
		"tokenizer.ggml.add_bos_token":           true,
		"tokenizer.ggml.add_eos_token":           false,
	}
}

func visionKV() gguf.KV {
	return gguf.KV{
		"general.architecture":                     "clip",
		"general.name":                             "framesweep tiny random mmproj (answers are noise)",
		"general.file_type":                        uint32(0),
		"clip.projector_type":                      "mlp",
		"clip.has_vision_encoder":                  true,
		"clip.has_text_encoder":                    false,
		"clip.use_gelu":                            true,
		"clip.vision.image_size":                   uint32(imageSize),
		"clip.vision.patch_size":                   uint32(patchSize),
		"clip.vision.embedding_length":             uint32(visEmbd),
		"clip.vision.feed_forward_length":          uint32(visFFN),
		"clip.vision.block_count":                  uint32(visBlocks),
		"clip.vision.attention.head_count":         uint32(visHeads),
		"clip.vision.attention.layer_norm_epsilon": float32(1e-6),
		"clip.vision.projection_dim":               uint32(embd), // required although "mlp" does not use it
		"clip.vision.image_mean":                   []float32{0.5, 0.5, 0.5},
		"clip.vision.image_std":                    []float32{0.5, 0.5, 0.5},
	}
}

// sortTensors orders tensors by layer ("blk.N." prefix; others last), then by name: the order of the
// files the tests and the demo pin (the order ollama's writer used to give them).
func sortTensors(ts []gguf.WTensor) []gguf.WTensor {
	block := func(name string) int {
		rest, ok := strings.CutPrefix(name, "blk.")
		num, _, dot := strings.Cut(rest, ".")
		n, err := strconv.Atoi(num)
		if !ok || !dot || err != nil {
			return math.MaxInt
		}
		return n
	}
	out := slices.Clone(ts)
	slices.SortStableFunc(out, func(a, b gguf.WTensor) int {
		return cmp.Or(cmp.Compare(block(a.Name), block(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// tensor makes an F32 tensor; shape is in ggml order (fastest dimension first).
func tensor(name string, data []float32, shape ...uint64) gguf.WTensor {
	return gguf.F32Tensor(name, data, shape...)
}

func randn(rng *rand.Rand, n int, scale float64) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(rng.NormFloat64() * scale)
	}
	return d
}

func fill(n int, v float32) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = v
	}
	return d
}

func textTensors(rng *rand.Rand) []gguf.WTensor {
	tokens, _, _ := Vocab()
	V := len(tokens)
	// Dimension 0 of every token embedding is a large constant, so after the final RMS norm the hidden
	// state's dimension 0 is reliably positive; output rows then carry +bias for printable ASCII tokens and
	// the option letters (more for the letters) and -bias for bytes ≥ 0x80 and control tokens. The answers
	// stay random, but the model practically never emits incomplete UTF-8, and often emits a letter.
	emb := randn(rng, embd*V, 1)
	out := randn(rng, embd*V, 0.3)
	for v := 0; v < V; v++ {
		emb[v*embd] = 4
		t := tokens[v]
		var bias float32
		switch {
		case len(t) == 1 && t[0] >= 0x80, v < 3:
			bias = -3
		case t == "▁":
			bias = 0
		case (len(t) == 1 && t[0] >= 'A' && t[0] <= 'F') || len(t) > 3:
			bias = 4
		case len(t) == 1 && (t[0] >= 0x21 && t[0] < 0x7f):
			bias = 3
		default: // other ASCII control bytes
			bias = -3
		}
		out[v*embd] = bias
	}
	ts := []gguf.WTensor{
		tensor("token_embd.weight", emb, embd, uint64(V)),
		tensor("output_norm.weight", fill(embd, 1), embd),
		tensor("output.weight", out, embd, uint64(V)),
	}
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
	}
	return ts
}

func visionTensors(rng *rand.Rand) []gguf.WTensor {
	patches := (imageSize / patchSize) * (imageSize / patchSize)
	ts := []gguf.WTensor{
		tensor("v.patch_embd.weight", randn(rng, patchSize*patchSize*3*visEmbd, 0.05), patchSize, patchSize, 3, visEmbd),
		tensor("v.position_embd.weight", randn(rng, visEmbd*patches, 0.1), visEmbd, uint64(patches)),
		tensor("mm.0.weight", randn(rng, visEmbd*mmprojHide, 0.2), visEmbd, mmprojHide),
		tensor("mm.0.bias", fill(mmprojHide, 0), mmprojHide),
		tensor("mm.2.weight", randn(rng, mmprojHide*embd, 0.2), mmprojHide, embd),
		tensor("mm.2.bias", fill(embd, 0), embd),
	}
	for b := 0; b < visBlocks; b++ {
		p := fmt.Sprintf("v.blk.%d.", b)
		ts = append(ts,
			tensor(p+"ln1.weight", fill(visEmbd, 1), visEmbd),
			tensor(p+"ln1.bias", fill(visEmbd, 0), visEmbd),
			tensor(p+"ln2.weight", fill(visEmbd, 1), visEmbd),
			tensor(p+"ln2.bias", fill(visEmbd, 0), visEmbd),
			tensor(p+"attn_q.weight", randn(rng, visEmbd*visEmbd, 0.1), visEmbd, visEmbd),
			tensor(p+"attn_k.weight", randn(rng, visEmbd*visEmbd, 0.1), visEmbd, visEmbd),
			tensor(p+"attn_v.weight", randn(rng, visEmbd*visEmbd, 0.1), visEmbd, visEmbd),
			tensor(p+"attn_out.weight", randn(rng, visEmbd*visEmbd, 0.1), visEmbd, visEmbd),
			tensor(p+"ffn_up.weight", randn(rng, visEmbd*visFFN, 0.1), visEmbd, visFFN),
			tensor(p+"ffn_down.weight", randn(rng, visFFN*visEmbd, 0.1), visFFN, visEmbd),
		)
	}
	return ts
}
