package testmodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Patch is a byte patch of one file WriteArch writes that the pinned llama.cpp (or mtmd) aborts the
// process on: GGML_ASSERT, GGML_ABORT or SIGSEGV (found by patching every key and tensor of every
// family's pair; llm/llamacpp's TestModelFilesCannotCrash). Each patch changes bytes in place, so the
// file keeps its size and layout, and only one value differs from a good file.
type Patch struct {
	Name   string
	Arch   Arch
	Mmproj bool   // the projector is patched, not the text model
	Target string // the GGUF key (or, for a tensor, its name) patched
	Aborts string // what llama.cpp does with it
	value  []byte // the new value's bytes (a tensor: the new name, of the same length)
	tensor bool   // Target names a tensor, which value renames (the file then lacks it)
}

func u32(v uint32) []byte  { return binary.LittleEndian.AppendUint32(nil, v) }
func f32(v float32) []byte { return u32(math.Float32bits(v)) }

// Patches are the reproducers: each is refused by llm/llamacpp's checks with one line naming the
// file, and aborts llama.cpp (in the load probe's child) when the checks are off.
var Patches = []Patch{
	{Name: "llama-block-count-0", Arch: ArchLlama, Target: "llama.block_count", value: u32(0),
		Aborts: "GGML_ASSERT(hparams.n_layer_all > 0 && hparams.n_layer_all <= LLAMA_MAX_LAYERS) in llama_model::load_hparams"},
	{Name: "llama-rms-epsilon-nan", Arch: ArchLlama, Target: "llama.attention.layer_norm_rms_epsilon", value: f32(float32(math.NaN())),
		Aborts: "GGML_ASSERT(eps >= 0.0f) in ggml's RMS norm at the first decode"},
	{Name: "qwen2vl-rope-dims-8", Arch: ArchQwen2VL, Target: "qwen2vl.rope.dimension_count", value: u32(8),
		Aborts: "GGML_ASSERT(n_embd_head == n_rot) in the qwen2vl graph"},
	{Name: "qwen2vl-mrope-sections-0", Arch: ArchQwen2VL, Target: "qwen2vl.rope.dimension_sections", value: make([]byte, 16),
		Aborts: "GGML_ASSERT(sections[0] > 0 || sections[1] > 0 || sections[2] > 0) in ggml's M-RoPE"},
	{Name: "qwen3vl-deepstack-overflow", Arch: ArchQwen3VL, Target: "qwen3vl.n_deepstack_layers", value: u32(math.MaxUint32),
		Aborts: "GGML_ASSERT on a view larger than its tensor (the input embedding width wraps to 0)"},
	{Name: "qwen25vl-window-pattern-1", Arch: ArchQwen25VL, Mmproj: true, Target: "clip.vision.n_wa_pattern", value: u32(1),
		Aborts: "GGML_ABORT(\"Failed to get tensor window_mask\") in clip.cpp: no block reads the window mask"},
	{Name: "internvl-clip-epsilon-negative", Arch: ArchInternVL, Mmproj: true, Target: "clip.vision.attention.layer_norm_epsilon", value: f32(-1),
		Aborts: "GGML_ASSERT(eps >= 0.0f) in ggml's layer norm in the vision encoder"},
	{Name: "llama-mlp-without-mm2", Arch: ArchLlama, Mmproj: true, Target: "mm.2.weight", value: []byte("mm.2.weighx"), tensor: true,
		Aborts: "SIGSEGV: clip_n_mmproj_embd reads mm.2.weight's width"},
}

// Write writes arch's pair into dir (WriteArch) with this patch applied to its file.
func (p Patch) Write(dir string, seed uint64) (Paths, error) {
	paths, err := WriteArch(dir, p.Arch, seed)
	if err != nil {
		return Paths{}, err
	}
	f := paths.Model
	if p.Mmproj {
		f = paths.Mmproj
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return Paths{}, fmt.Errorf("testmodel: %w", err)
	}
	if err := p.apply(b); err != nil {
		return Paths{}, fmt.Errorf("testmodel: patch %s of %s: %w", p.Name, filepath.Base(f), err)
	}
	if err := os.WriteFile(f, b, 0o644); err != nil {
		return Paths{}, fmt.Errorf("testmodel: %w", err)
	}
	return paths, nil
}

// apply overwrites, in place, the value of key Target (a 4-byte scalar, or the elements of an array
// of 4-byte values) or, for a tensor, its name.
func (p Patch) apply(b []byte) error {
	name := binary.LittleEndian.AppendUint64(nil, uint64(len(p.Target)))
	name = append(name, p.Target...)
	at := bytes.Index(b, name)
	if at < 0 {
		return fmt.Errorf("no %q in the file", p.Target)
	}
	v := at + len(name)
	if p.tensor {
		if len(p.value) != len(p.Target) {
			return fmt.Errorf("a tensor's new name must keep the length of %q", p.Target)
		}
		copy(b[at+8:], p.value)
		return nil
	}
	if v+4 > len(b) {
		return fmt.Errorf("%s: truncated", p.Target)
	}
	switch typ := binary.LittleEndian.Uint32(b[v:]); typ {
	case 4, 5, 6: // u32, i32, f32
		if len(p.value) != 4 {
			return fmt.Errorf("%s: a 4-byte value, got %d bytes", p.Target, len(p.value))
		}
		copy(b[v+4:], p.value)
	case 9: // array: element type, count, elements
		n := binary.LittleEndian.Uint64(b[v+8:])
		if et := binary.LittleEndian.Uint32(b[v+4:]); (et != 4 && et != 5 && et != 6) || uint64(len(p.value)) != 4*n {
			return fmt.Errorf("%s: an array of %d elements of type %d, got %d bytes", p.Target, n, et, len(p.value))
		}
		copy(b[v+16:], p.value)
	default:
		return fmt.Errorf("%s has type %d, not a 4-byte scalar or array", p.Target, typ)
	}
	return nil
}
