package llamacpp

import (
	"fmt"
	"math"
	"slices"

	"github.com/framesweep/framesweep/internal/gguf"
)

// Text models are checked in Go against what the pinned llama.cpp asserts (GGML_ASSERT aborts the
// process; a thrown error only fails the load). Every architecture gets the checks of
// llama_model::load_hparams (block count, expert counts, head arrays, RoPE scaling type, norm
// epsilons) and of the vocabulary; the architectures of the study's models (textArchs) also get their
// graphs' own: the head split (n_embd_head == n_rot, asserted by models/{llama,qwen2,qwen2vl,
// qwen3vl}.cpp), M-RoPE sections (ggml_rope_multi asserts their sum fits the head and that one of the
// first three is set), the deepstack width, and each tensor's shape against the hyperparameters.
// Each rule below was found by patching `framesweep testmodel`'s files (TestModelFilesCannotCrash).

// maxLayers is LLAMA_MAX_LAYERS (llama-hparams.h): load_hparams asserts 0 < block_count <= it.
const maxLayers = 512

// maxExperts is LLAMA_MAX_EXPERTS.
const maxExperts = 512

// textArch is what one architecture's graph reads beyond load_hparams (the optional biases and q/k
// norms of qwen2, qwen2vl and qwen3vl are shape-checked whenever present).
type textArch struct {
	mrope     bool // M-RoPE positions: rope.dimension_sections required (qwen2vl, qwen3vl)
	deepstack bool // n_deepstack_layers widen the input embedding (qwen3vl)
}

// textArchs are the text architectures of the study's models: LLaVA (llama), InternVL3 (qwen2),
// Qwen2-VL and Qwen2.5-VL (qwen2vl), Qwen3-VL (qwen3vl).
var textArchs = map[string]textArch{
	"llama":   {},
	"qwen2":   {},
	"qwen2vl": {mrope: true},
	"qwen3vl": {mrope: true, deepstack: true},
}

// textFile is a text model's hyperparameters as llama.cpp derives them.
type textFile struct {
	kv     gguf.KV
	arch   string
	shapes map[string][]uint64
	// E embedding length, L blocks, V vocabulary, hk/hv head sizes, rot RoPE dimensions.
	E, L, V, hk, hv, rot uint64
	heads, headsKV, ffn  []uint64 // per layer
}

func (t *textFile) key(k string) string { return t.arch + "." + k }

// checkText validates a text model before llama.cpp loads it.
func checkText(g *gguf.File) error {
	t := &textFile{kv: g.KV, arch: g.KV.Architecture(), shapes: map[string][]uint64{}}
	for _, x := range g.Tensors {
		t.shapes[x.Name] = x.Shape
	}
	if err := t.hparams(); err != nil {
		return err
	}
	if err := t.vocab(); err != nil {
		return err
	}
	a, ok := textArchs[t.arch]
	if !ok {
		return nil // load_hparams' checks only; the load probe is the wall for the rest
	}
	if err := t.heads2(a); err != nil {
		return err
	}
	return t.tensors()
}

// hparams: load_hparams' assertions, for every architecture.
func (t *textFile) hparams() error {
	L, ok := t.kv.Uint(t.key("block_count"))
	if !ok {
		return fmt.Errorf("text model (%s) lacks %s", t.arch, t.key("block_count"))
	}
	if L == 0 || L > maxLayers {
		return fmt.Errorf("text model: %s = %d, llama.cpp asserts 1..%d", t.key("block_count"), L, maxLayers)
	}
	t.L = L
	if n, ok := t.kv.Uint(t.key("nextn_predict_layers")); ok && n > L {
		return fmt.Errorf("text model: %s = %d exceeds the %d blocks", t.key("nextn_predict_layers"), n, L)
	}
	nExp, _ := t.kv.Uint(t.key("expert_count"))
	used, err := t.perLayer("expert_used_count", 0)
	if err != nil {
		return err
	}
	if nExp > maxExperts {
		return fmt.Errorf("text model: %s = %d exceeds %d", t.key("expert_count"), nExp, maxExperts)
	}
	for _, u := range used {
		if u > nExp || (nExp > 0 && u == 0) {
			return fmt.Errorf("text model: %s = %d with %d experts", t.key("expert_used_count"), u, nExp)
		}
	}
	if g, _ := t.kv.Uint(t.key("expert_group_count")); (nExp == 0 && g != 0) || (nExp > 0 && g >= nExp) {
		return fmt.Errorf("text model: %s = %d with %d experts", t.key("expert_group_count"), g, nExp)
	}
	if s, ok := t.kv[t.key("rope.scaling.type")]; ok {
		switch s {
		case "none", "linear", "yarn", "longrope":
		default:
			return fmt.Errorf("text model: %s = %v (llama.cpp knows none, linear, yarn, longrope)", t.key("rope.scaling.type"), s)
		}
	}
	for _, k := range []string{"attention.layer_norm_rms_epsilon", "attention.layer_norm_epsilon"} {
		if v, ok := t.kv[t.key(k)].(float32); ok && !(v >= 0 && v < float32(math.Inf(1))) {
			return fmt.Errorf("text model: %s = %v (ggml's norms assert a finite epsilon >= 0)", t.key(k), v)
		}
	}
	E, ok := t.kv.Uint(t.key("embedding_length"))
	if !ok || E == 0 {
		return fmt.Errorf("text model: %s missing or 0", t.key("embedding_length"))
	}
	t.E = E
	if t.heads, err = t.perLayer("attention.head_count", 0); err != nil {
		return err
	}
	if t.headsKV, err = t.perLayer("attention.head_count_kv", 0); err != nil {
		return err
	}
	if _, ok := t.kv[t.key("attention.head_count_kv")]; !ok {
		t.headsKV = t.heads // llama.cpp's default
	}
	t.ffn, err = t.perLayer("feed_forward_length", 0)
	return err
}

// perLayer reads a key that llama.cpp takes as one value or one per block (get_key_or_arr): an array
// must have one entry per block. Absent: def for every block.
func (t *textFile) perLayer(k string, def uint64) ([]uint64, error) {
	out := make([]uint64, t.L)
	v, present := t.kv[t.key(k)]
	if !present {
		for i := range out {
			out[i] = def
		}
		return out, nil
	}
	if n, ok := t.kv.Uint(t.key(k)); ok {
		for i := range out {
			out[i] = n
		}
		return out, nil
	}
	arr := t.kv.Ints(t.key(k))
	if arr == nil || uint64(len(arr)) != t.L {
		return nil, fmt.Errorf("text model: %s is a %s, want a count or %d of them (one per block)", t.key(k), gguf.TypeName(v), t.L)
	}
	for i, x := range arr {
		if x < 0 {
			return nil, fmt.Errorf("text model: %s[%d] = %d", t.key(k), i, x)
		}
		out[i] = uint64(x)
	}
	return out, nil
}

// vocab: the token arrays llama_vocab::load indexes by token id have one entry per token.
func (t *textFile) vocab() error {
	toks, ok := t.kv["tokenizer.ggml.tokens"].([]string)
	if !ok || len(toks) == 0 {
		return fmt.Errorf("text model: tokenizer.ggml.tokens missing or empty")
	}
	if len(toks) > math.MaxInt32 {
		return fmt.Errorf("text model: %d tokens", len(toks))
	}
	t.V = uint64(len(toks))
	for _, k := range []string{"tokenizer.ggml.scores", "tokenizer.ggml.token_type"} {
		v, ok := t.kv[k]
		if !ok {
			continue
		}
		n := -1
		switch x := v.(type) {
		case []float32:
			n = len(x)
		case []int32:
			n = len(x)
		case []uint32:
			n = len(x)
		}
		if uint64(n) != t.V {
			return fmt.Errorf("text model: %s has %d entries for %d tokens", k, n, t.V)
		}
	}
	return nil
}

// heads2: the head split the graphs of textArchs assert (n_embd_head_k == n_embd_head_v == n_rot),
// M-RoPE sections and the deepstack width.
func (t *textFile) heads2(a textArch) error {
	H := t.heads[0] // llama.cpp derives the head size from block 0's count
	for i := range t.heads {
		if t.heads[i] == 0 || t.headsKV[i] == 0 || t.heads[i]%t.headsKV[i] != 0 {
			return fmt.Errorf("text model: block %d has %d heads and %d KV heads (both > 0, KV heads dividing heads)", i, t.heads[i], t.headsKV[i])
		}
		if t.ffn[i] == 0 {
			return fmt.Errorf("text model: block %d has %s 0", i, t.key("feed_forward_length"))
		}
	}
	if t.E%H != 0 {
		if _, ok := t.kv[t.key("attention.key_length")]; !ok {
			return fmt.Errorf("text model: %d heads do not divide %s %d", H, t.key("embedding_length"), t.E)
		}
	}
	t.hk, t.hv = t.E/H, t.E/H
	if v, ok := t.kv.Uint(t.key("attention.key_length")); ok {
		t.hk = v
	}
	if v, ok := t.kv.Uint(t.key("attention.value_length")); ok {
		t.hv = v
	}
	t.rot = t.hk
	if v, ok := t.kv.Uint(t.key("rope.dimension_count")); ok {
		t.rot = v
	}
	if t.hk == 0 || t.hk != t.hv || t.rot != t.hk {
		return fmt.Errorf("text model (%s): head size %d (keys) / %d (values) and %s %d must be equal (its graph asserts n_embd_head == n_rot)",
			t.arch, t.hk, t.hv, t.key("rope.dimension_count"), t.rot)
	}
	if a.mrope {
		sec := t.kv.Ints(t.key("rope.dimension_sections"))
		if len(sec) == 0 || len(sec) > 4 {
			return fmt.Errorf("text model (%s): %s needs 1 to 4 M-RoPE sections, has %d", t.arch, t.key("rope.dimension_sections"), len(sec))
		}
		var sum int64
		for _, s := range sec {
			if s < 0 {
				return fmt.Errorf("text model: %s %v has a negative section", t.key("rope.dimension_sections"), sec)
			}
			sum += s
		}
		if sum == 0 || (len(sec) == 4 && sum == sec[3]) {
			return fmt.Errorf("text model: %s %v: ggml's M-RoPE asserts one of the first three sections > 0", t.key("rope.dimension_sections"), sec)
		}
		if uint64(sum) > t.rot {
			return fmt.Errorf("text model: %s %v sum to %d, more than the %d RoPE dimensions (ggml asserts sect_dims <= ne0)", t.key("rope.dimension_sections"), sec, sum, t.rot)
		}
	}
	if a.deepstack {
		// The input embedding is n_embd × (1 + n_deepstack_layers) wide, in 32 bits.
		if n, _ := t.kv.Uint(t.key("n_deepstack_layers")); t.E*(n+1) > math.MaxInt32 || n > maxLayers {
			return fmt.Errorf("text model: %s = %d makes the input embedding wider than llama.cpp counts (width %d)", t.key("n_deepstack_layers"), n, t.E)
		}
	}
	return nil
}

// tensors: every tensor the graph reads has the shape the hyperparameters give it (ggml order).
func (t *textFile) tensors() error {
	E, V := t.E, t.V
	if err := t.need("token_embd.weight", E, V); err != nil {
		return err
	}
	if err := t.need("output_norm.weight", E); err != nil {
		return err
	}
	if err := t.opt("output.weight", E, V); err != nil { // absent: tied to token_embd
		return err
	}
	for b := uint64(0); b < t.L; b++ {
		q, kv := t.hk*t.heads[b], t.hk*t.headsKV[b]
		blk := func(n string) string { return fmt.Sprintf("blk.%d.%s", b, n) }
		for _, c := range []struct {
			name     string
			required bool
			shape    []uint64
		}{
			{"attn_norm.weight", true, []uint64{E}},
			{"attn_q.weight", true, []uint64{E, q}},
			{"attn_k.weight", true, []uint64{E, kv}},
			{"attn_v.weight", true, []uint64{E, kv}},
			{"attn_output.weight", true, []uint64{q, E}},
			{"attn_q.bias", false, []uint64{q}},
			{"attn_k.bias", false, []uint64{kv}},
			{"attn_v.bias", false, []uint64{kv}},
			{"attn_q_norm.weight", false, []uint64{t.hk}},
			{"attn_k_norm.weight", false, []uint64{t.hk}},
			{"ffn_norm.weight", true, []uint64{E}},
			{"ffn_gate.weight", true, []uint64{E, t.ffn[b]}},
			{"ffn_up.weight", true, []uint64{E, t.ffn[b]}},
			{"ffn_down.weight", true, []uint64{t.ffn[b], E}},
		} {
			check := t.opt
			if c.required {
				check = t.need
			}
			if err := check(blk(c.name), c.shape...); err != nil {
				return err
			}
		}
	}
	return nil
}

// need requires tensor name with the given shape (trailing 1s ignored).
func (t *textFile) need(name string, shape ...uint64) error {
	if _, ok := t.shapes[name]; !ok {
		return fmt.Errorf("text model (%s) lacks tensor %s", t.arch, name)
	}
	return t.opt(name, shape...)
}

// opt checks tensor name's shape when it is present.
func (t *textFile) opt(name string, shape ...uint64) error {
	got, ok := t.shapes[name]
	if !ok || sameShape(got, shape) {
		return nil
	}
	return fmt.Errorf("text model (%s): tensor %s has shape %v, its hyperparameters give %v", t.arch, name, got, shape)
}

// sameShape compares two ggml shapes, trailing 1s ignored ([64 1] is [64]).
func sameShape(a, b []uint64) bool {
	trim := func(s []uint64) []uint64 {
		for len(s) > 1 && s[len(s)-1] == 1 {
			s = s[:len(s)-1]
		}
		return s
	}
	return slices.Equal(trim(a), trim(b))
}
