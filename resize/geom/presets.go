package geom

import "slices"

// Named is a preset: a geometry under the name users write in grid files. Its String is the name.
type Named struct {
	Name string
	Geometry
}

func (n Named) String() string { return n.Name }

// PresetInfo describes one preset for documentation and the CLI.
type PresetInfo struct {
	Name   string `json:"name"`
	Spec   string `json:"spec"`   // the equivalent explicit geometry
	Source string `json:"source"` // upstream file the geometry follows
}

type preset struct {
	geom   Geometry
	source string
}

// presetTable holds every name Parse and ForPreset accept without options. The first eight are the
// sampler presets (sampler.Names); the others are harness × model combinations with their own
// arguments (SAMPLING.md §5).
var presetTable = map[string]preset{
	"qwen2.5-vl": {Qwen{Base: "qwen2.5-vl", Version: QwenV0011, Factor: 28},
		"QwenLM/Qwen2.5-VL qwen-vl-utils vision_process.py fetch_video + smart_resize (0.0.11 defaults)"},
	"qwen3-vl": {Qwen{Base: "qwen3-vl", Version: QwenV0014, Factor: 32},
		"QwenLM/Qwen3-VL qwen-vl-utils vision_process.py (0.0.14, image_patch_size=16)"},
	"internvl3": {defaultInternVL(),
		"OpenGVLab/InternVL README load_video: dynamic_preprocess(max_num=1), i.e. one 448x448 tile"},
	"llava-onevision": {Named{"llava-onevision", Fixed{W: 384, H: 384, Tokens: 196}},
		"LLaVA-NeXT SigLipImageProcessor 384x384; 27x27 patches, 2x2 bilinear pool -> ceil(27/2)^2 = 196 tokens"},
	"llava-video": {Named{"llava-video", Fixed{W: 384, H: 384, Tokens: 169}},
		"LLaVA-Video-Qwen2 SigLIP 384x384; lmms-eval llava_vid mm_spatial_pool_mode=average stride 2 -> 13x13 = 169 tokens (assumption: newline tokens not counted)"},
	"lmms-eval": {Named{"lmms-eval", Native{}},
		"lmms-eval load_video returns frames at source size; the model adapter resizes (use lmms-eval/<model>)"},
	"vlmevalkit": {Named{"vlmevalkit", Native{}},
		"VLMEvalKit save_video_frames stores source-size JPEGs; the model resizes"},
	"videomme": {Named{"videomme", Native{}},
		"Video-MME reference slicer extracts source-size frames; the model resizes"},

	"qwen3-vl-hf": {QwenHF{Factor: 32, MinPixels: qwenHFMinPixels, MaxPixels: qwenHFMaxPixels},
		"transformers models/qwen3_vl/video_processing_qwen3_vl.py smart_resize (T x H x W), checkpoint size {4096, 25165824} (second-hand)"},
	"llava-next-video": {Named{"llava-next-video", ShortEdge{Size: 336, Crop: 336, Tokens: 144}},
		"LLaVA-NeXT-Video-7B CLIPImageProcessor: shortest edge 336 + centre crop 336; 24x24 patches, average pool stride 2 -> 144 tokens (assumption)"},
	"lmms-eval/qwen2.5-vl": {Named{"lmms-eval/qwen2.5-vl", Qwen{Base: "qwen2.5-vl", Version: QwenV0011, Factor: 28, MinPixels: 256 * 28 * 28, MaxPixels: 1605632}},
		"lmms-eval models/simple/qwen2_5_vl.py: min_pixels=256*28^2, max_pixels=1605632"},
	"lmms-eval/qwen3-vl": {Named{"lmms-eval/qwen3-vl", Qwen{Base: "qwen3-vl", Version: QwenV0014, Factor: 32, MinPixels: 256 * 28 * 28, MaxPixels: 1605632}},
		"lmms-eval models/simple/qwen3_vl.py: min_pixels=256*28^2 (28, not 32), max_pixels=1605632, image_patch_size=16"},
	"lmms-eval/internvl3": {Named{"lmms-eval/internvl3", InternVL{MinNum: 1, MaxNum: 1, Auto: true, Order: OrderLmmsEval, Thumbnail: true, TileSize: 448}},
		"lmms-eval models/simple/internvl3.py (75571cf): max_num = max(1, min(12, 64 // num_frame)), set(sorted_ratios) order"},
	"vlmevalkit/qwen2.5-vl-forvideo": {Named{"vlmevalkit/qwen2.5-vl-forvideo", Qwen{Base: "qwen2.5-vl", Version: QwenV0011, Factor: 28, MinPixels: 128 * 28 * 28, MaxPixels: 768 * 28 * 28, TotalPixels: 24576 * 28 * 28}},
		"VLMEvalKit vlmeval/config.py Qwen2.5-VL-*-ForVideo: min_pixels=128*28^2, max_pixels=768*28^2, total_pixels=24576*28^2"},
	"qwen3-vl/videomme": {Named{"qwen3-vl/videomme", Qwen{Base: "qwen3-vl", Version: QwenV0014, Factor: 32, MinPixels: 3584, MaxPixels: 401408, TotalPixels: 19267584}},
		"QwenLM/Qwen3-VL evaluation/VideoMME: min_pixels=3584, max_pixels=401408, total_pixels=19267584"},
}

// SamplerPresets are the frame-sampling presets of the sampler package, each of which implies a geometry.
var SamplerPresets = []string{"qwen2.5-vl", "qwen3-vl", "internvl3", "llava-onevision", "llava-video", "lmms-eval", "vlmevalkit", "videomme"}

// ForPreset returns the geometry a preset implies (any name Presets lists).
func ForPreset(name string) (Geometry, error) {
	p, ok := presetTable[name]
	if !ok {
		return nil, errf("preset", name, ErrUnknownPreset, "see geom.Presets")
	}
	return p.geom, nil
}

// Presets lists every preset: the sampler presets first, then the rest in name order.
func Presets() []PresetInfo {
	var out []PresetInfo
	seen := map[string]bool{}
	add := func(n string) {
		p := presetTable[n]
		spec := p.geom.String()
		if nm, ok := p.geom.(Named); ok {
			spec = nm.Geometry.String()
		}
		out = append(out, PresetInfo{Name: n, Spec: spec, Source: p.source})
		seen[n] = true
	}
	for _, n := range SamplerPresets {
		add(n)
	}
	var rest []string
	for n := range presetTable {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	for _, n := range rest {
		add(n)
	}
	return out
}
