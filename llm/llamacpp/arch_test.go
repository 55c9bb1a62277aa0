package llamacpp

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/gguf"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/testmodel"
	"github.com/framesweep/framesweep/rgb"
)

// perFrame is what one 56×42 frame becomes in each family (the projector's own resize, mtmd's
// markers): KV cells and positions. Qwen resizes to multiples of 2 patches with at least 8 merged
// tokens (112×84 → 4×3 tokens for patch 14, 128×96 for patch 16) between <|vision_start|> and
// <|vision_end|>; under M-RoPE the grid takes max(4, 3) positions. InternVL resizes to its 56×56
// image size (4×4 patches, pixel shuffle 2 → 4 tokens) between <img> and </img>; the llama/mlp
// projector to 28×28 (4 patches), without markers.
var perFrame = map[testmodel.Arch]struct{ tokens, positions int }{
	testmodel.ArchLlama:    {4, 4},
	testmodel.ArchQwen2VL:  {12 + 2, 4 + 2},
	testmodel.ArchQwen25VL: {12 + 2, 4 + 2},
	testmodel.ArchQwen3VL:  {12 + 2, 4 + 2},
	testmodel.ArchInternVL: {4 + 2, 4 + 2},
}

// TestArchitectures: every family's tiny pair loads in process, answers a 4-frame Video-MME question
// and a text-only one with option probabilities summing to 1, lays frames out at the family's
// positions (M-RoPE for the Qwen families), uses the GGUF's chat template by default, and frees
// every handle.
func TestArchitectures(t *testing.T) {
	fr := videoFrames(t)
	before := LiveHandles()
	for _, a := range testmodel.Archs {
		t.Run(string(a), func(t *testing.T) {
			p := archs[a]
			rt, err := New(p.Model, p.Mmproj, Options{Threads: 1, Context: 4096})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			mrope := strings.HasPrefix(string(a), "qwen")
			if rt.mtmd.mrope() != mrope {
				t.Errorf("M-RoPE = %v, want %v", rt.mtmd.mrope(), mrope)
			}
			wantChat := ChatGGUF
			if a == testmodel.ArchLlama {
				wantChat = ChatML // Write's model has no chat template
			}
			if rt.chat != wantChat {
				t.Errorf("chat = %q, want %q", rt.chat, wantChat)
			}
			req := &llm.Request{Frames: fr, Question: "What is the animal in the video?",
				Options:  []string{"A. a bunny", "B. a bird", "C. a squirrel", "D. a fish"},
				Template: llm.TemplateVideoMME}
			video, err := rt.Answer(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			videoPos := rt.promptPos
			checkProbs(t, video, "A", "B", "C", "D")
			text, err := rt.Answer(context.Background(), &llm.Request{Question: req.Question, Options: req.Options, Template: req.Template})
			if err != nil {
				t.Fatal(err)
			}
			checkProbs(t, text, "A", "B", "C", "D")
			t.Logf("video: %q %v (%d tokens, %d positions); text-only: %q %v", video.Text, video.Probs,
				video.PromptTokens, videoPos, text.Text, text.Probs)
			if text.PromptTokens != rt.promptPos {
				t.Errorf("text-only: %d positions for %d tokens", rt.promptPos, text.PromptTokens)
			}
			want := perFrame[a]
			if got := video.PromptTokens - text.PromptTokens; got != 4*want.tokens {
				t.Errorf("frames took %d tokens, want 4 × %d", got, want.tokens)
			}
			if got := videoPos - text.PromptTokens; got != 4*want.positions {
				t.Errorf("frames took %d positions, want 4 × %d", got, want.positions)
			}
			if video.Probs["A"] == text.Probs["A"] {
				t.Errorf("frames did not change the letter distribution: %v", video.Probs)
			}
			again, err := rt.Answer(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if again.Text != video.Text || again.Probs["A"] != video.Probs["A"] {
				t.Errorf("not deterministic: %q %v vs %q %v", video.Text, video.Probs, again.Text, again.Probs)
			}
			if got := LiveHandles() - before; got != 4 {
				t.Errorf("open runtime holds %d handles after answering, want 4", got)
			}
		})
	}
	if LiveHandles() != before {
		t.Errorf("LiveHandles = %d after Close, want %d", LiveHandles(), before)
	}
}

// TestMRoPEOddFrames: degenerate frame shapes through the Qwen resizers and window attention.
func TestMRoPEOddFrames(t *testing.T) {
	for _, a := range []testmodel.Arch{testmodel.ArchQwen25VL, testmodel.ArchQwen3VL} {
		rt := open(t, "llamacpp:model="+archs[a].Model+",mmproj="+archs[a].Mmproj+",threads=1")
		for _, f := range []*rgb.Image{rgb.New(1, 1), rgb.New(3000, 1), rgb.New(1, 2000)} {
			resp, err := rt.Answer(context.Background(), &llm.Request{Frames: []*rgb.Image{f}, Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 1})
			if err != nil || len(resp.Probs) != 2 {
				t.Errorf("%s %dx%d: %v %v", a, f.W, f.H, resp, err)
			}
		}
	}
}

// TestChatTemplates: the GGUF's template is the default turn format; chat=chatml|plain override it;
// chat=gguf without a template, or a template llama.cpp's formatter does not know, fail at load.
func TestChatTemplates(t *testing.T) {
	q := archs[testmodel.ArchQwen2VL]
	prompt := llm.Prompt{System: "sys", User: "question", AssistantPrefix: "Best Option: ("}
	for chat, want := range map[string][2]string{
		"":        {"<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\n", "question<|im_end|>\n<|im_start|>assistant\nBest Option: ("},
		ChatPlain: {"sys\n", "question\nBest Option: ("},
	} {
		rt, err := New(q.Model, "", Options{Threads: 1, Context: 512, Chat: chat})
		if err != nil {
			t.Fatal(err)
		}
		pre, post, err := rt.renderTurns(prompt)
		rt.Close()
		if err != nil || pre != want[0] || post != want[1] {
			t.Errorf("chat=%q: %q + %q, %v; want %q + %q", chat, pre, post, err, want[0], want[1])
		}
	}
	// The template really is the GGUF's: a Vicuna-style one (LLaVA-NeXT-Video's family) renders as such.
	dir := t.TempDir()
	vicuna := filepath.Join(dir, "vicuna.gguf")
	rewriteGGUF(t, tiny.Model, vicuna, func(kv gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor {
		kv["tokenizer.chat_template"] = "{% for m in messages %}{% if m['role'] == 'user' %}USER: {{ m['content'] }} {% else %}ASSISTANT: {{ m['content'] }}</s>{% endif %}{% endfor %}ASSISTANT: "
		return ts
	})
	rt, err := New(vicuna, "", Options{Threads: 1, Context: 512})
	if err != nil {
		t.Fatal(err)
	}
	pre, post, err := rt.renderTurns(llm.Prompt{User: "question"})
	if err != nil || !strings.HasSuffix(pre, "USER: ") || !strings.HasPrefix(post, "question") || !strings.Contains(post, "ASSISTANT:") {
		t.Errorf("vicuna template: %q + %q, %v", pre, post, err)
	}
	resp, err := rt.Answer(context.Background(), &llm.Request{Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 2})
	rt.Close()
	if err != nil || len(resp.Probs) != 2 {
		t.Errorf("answer through the vicuna template: %v %v", resp, err)
	}

	unknown := filepath.Join(dir, "unknown.gguf")
	rewriteGGUF(t, tiny.Model, unknown, func(kv gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor {
		kv["tokenizer.chat_template"] = "{{ no family llama.cpp knows }}"
		return ts
	})
	for path, chat := range map[string]string{unknown: "", tiny.Model: ChatGGUF} {
		_, err := New(path, "", Options{Threads: 1, Context: 512, Chat: chat})
		var e *llm.Error
		if !errors.Is(err, llm.ErrModel) || !errors.As(err, &e) || e.Path != path || !strings.Contains(err.Error(), "chat") {
			t.Errorf("%s chat=%q: err = %v", filepath.Base(path), chat, err)
		}
	}
	rt2, err := New(unknown, "", Options{Threads: 1, Context: 512, Chat: ChatML}) // an explicit format overrides
	if err != nil {
		t.Errorf("chat=chatml over an unknown template: %v", err)
	} else {
		rt2.Close()
	}
	if _, err := (llm.Registry{"llamacpp": Open}).Open("llamacpp:model=" + tiny.Model + ",chat=jinja"); !errors.Is(err, llm.ErrBadSpec) {
		t.Errorf("chat=jinja: %v", err)
	}
	if LiveHandles() != 0 {
		t.Errorf("LiveHandles = %d", LiveHandles())
	}
}

// TestUnsupportedProjector: a projector type whose graph this backend does not validate is refused at
// load with its name, before clip.cpp sees it.
func TestUnsupportedProjector(t *testing.T) {
	dir := t.TempDir()
	for _, typ := range []string{"gemma3", "ldp", "no-such-projector"} {
		p := filepath.Join(dir, typ+".gguf")
		rewriteGGUF(t, tiny.Mmproj, p, func(kv gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor {
			kv["clip.projector_type"] = typ
			return ts
		})
		_, err := New(tiny.Model, p, Options{Threads: 1, Context: 256})
		var e *llm.Error
		if !errors.Is(err, llm.ErrModel) || !errors.As(err, &e) || e.Path != p || !strings.Contains(err.Error(), `"`+typ+`"`) {
			t.Errorf("%s: err = %v, want ErrModel naming the projector type", typ, err)
		}
	}
	if LiveHandles() != 0 {
		t.Errorf("LiveHandles = %d", LiveHandles())
	}
}

// TestCrashingFamilyProjectorsRejected: per family, projector defects are caught in Go with the key or
// tensor named; the unmodified rewrite of each family's projector still loads. Without the Go check
// (measured on the pinned llama.cpp by bypassing it) every case here takes the process down — SIGSEGV
// (no-second-conv, no-q-bias, no-qkv-bias), SIGFPE (no-scale), GGML_ASSERT abort (the rest) — except
// three that clip.cpp refuses with only "could not load" (no-merger-bias, no-window-key, no-mlp-norm)
// and mean-short, which reads past the key's array.
func TestCrashingFamilyProjectorsRejected(t *testing.T) {
	dir := t.TempDir()
	drop := func(name string) func(gguf.KV, []*gguf.WTensor) []*gguf.WTensor {
		return func(_ gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor {
			var out []*gguf.WTensor
			for _, x := range ts {
				if x.Name != name {
					out = append(out, x)
				}
			}
			return out
		}
	}
	setKV := func(k string, v any) func(gguf.KV, []*gguf.WTensor) []*gguf.WTensor {
		return func(kv gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor {
			if v == nil {
				delete(kv, k)
			} else {
				kv[k] = v
			}
			return ts
		}
	}
	reshape := func(name string, shape ...uint64) func(gguf.KV, []*gguf.WTensor) []*gguf.WTensor {
		return func(_ gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor {
			for _, x := range ts {
				if x.Name == name {
					n := uint64(1)
					for _, d := range shape {
						n *= d
					}
					x.Shape, x.Data = shape, make([]byte, 4*n)
				}
			}
			return ts
		}
	}
	cases := map[testmodel.Arch]map[string]func(gguf.KV, []*gguf.WTensor) []*gguf.WTensor{
		testmodel.ArchQwen2VL: {
			"no-second-conv": drop("v.patch_embd.weight.1"),
			"no-q-bias":      drop("v.blk.0.attn_q.bias"),
			"no-merger-bias": drop("mm.0.bias"),
			"size-as-float":  setKV("clip.vision.image_size", float32(56)),
			"mean-short":     setKV("clip.vision.image_mean", []float32{0.5}),
		},
		testmodel.ArchQwen25VL: {
			"no-window-key": setKV("clip.vision.n_wa_pattern", nil),
			"proj-dim":      setKV("clip.vision.projection_dim", uint32(32)),
			"merger-shape":  reshape("mm.0.weight", 32, 128),
		},
		testmodel.ArchQwen3VL: {
			"no-patch-bias": drop("v.patch_embd.bias"),
			"no-qkv-bias":   drop("v.blk.1.attn_qkv.bias"),
			"pos-not-grid":  reshape("v.position_embd.weight", 32, 15),
			"deepstack-out": reshape("v.deepstack.0.fc2.weight", 128, 32),
			"merge-3":       setKV("clip.vision.spatial_merge_size", uint32(3)),
		},
		testmodel.ArchInternVL: {
			"no-scale":     setKV("clip.vision.projector.scale_factor", nil),
			"scale-3":      setKV("clip.vision.projector.scale_factor", uint32(3)),
			"no-class":     drop("v.class_embd"),
			"pos-count":    reshape("v.position_embd.weight", 32, 16),
			"no-mlp-norm":  drop("mm.model.mlp.0.weight"),
			"heads-divide": setKV("clip.vision.attention.head_count", uint32(5)),
		},
	}
	for a, edits := range cases {
		src := archs[a].Mmproj
		same := filepath.Join(dir, string(a)+"-same.gguf")
		rewriteGGUF(t, src, same, func(_ gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor { return ts })
		rt, err := New(archs[a].Model, same, Options{Threads: 1, Context: 256})
		if err != nil {
			t.Fatalf("%s: faithful copy rejected: %v", a, err)
		}
		rt.Close()
		for name, edit := range edits {
			p := filepath.Join(dir, string(a)+"-"+name+".gguf")
			rewriteGGUF(t, src, p, edit)
			_, err := New(archs[a].Model, p, Options{Threads: 1, Context: 256})
			var e *llm.Error
			if !errors.Is(err, llm.ErrModel) || !errors.As(err, &e) || e.Path != p || !strings.Contains(err.Error(), "vision projector") {
				t.Errorf("%s/%s: err = %v (want the Go-side projector check)", a, name, err)
			}
		}
	}
	if LiveHandles() != 0 {
		t.Errorf("LiveHandles = %d", LiveHandles())
	}
}

// TestImageTokenLimits: image_max_tokens bounds a Qwen frame's tokens (llama.cpp's smart resize: a
// 560×420 frame is 20×15 merged tokens by default, 4×3 under a 16-token cap); min > max is a bad spec.
func TestImageTokenLimits(t *testing.T) {
	q := archs[testmodel.ArchQwen2VL]
	f := []*rgb.Image{rgb.New(560, 420)}
	for spec, want := range map[string]int{"": 300 + 2, ",image_max_tokens=16": 12 + 2} {
		rt := open(t, "llamacpp:model="+q.Model+",mmproj="+q.Mmproj+",threads=1"+spec)
		with, err := rt.Answer(context.Background(), &llm.Request{Frames: f, Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 1})
		if err != nil {
			t.Fatal(err)
		}
		without, err := rt.Answer(context.Background(), &llm.Request{Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := with.PromptTokens - without.PromptTokens; got != want {
			t.Errorf("spec %q: frame took %d tokens, want %d", spec, got, want)
		}
	}
	if _, err := (llm.Registry{"llamacpp": Open}).Open("llamacpp:model=" + q.Model + ",image_min_tokens=64,image_max_tokens=16"); !errors.Is(err, llm.ErrBadSpec) {
		t.Errorf("min > max: %v", err)
	}
}

// TestMismatchedPairs: a projector and a text model of different position kinds (M-RoPE vs 1-D) are
// refused at load, naming the projector.
func TestMismatchedPairs(t *testing.T) {
	for _, pair := range [][2]testmodel.Arch{{testmodel.ArchQwen2VL, testmodel.ArchInternVL}, {testmodel.ArchInternVL, testmodel.ArchQwen25VL}} {
		model, mmproj := archs[pair[0]].Model, archs[pair[1]].Mmproj
		_, err := New(model, mmproj, Options{Threads: 1, Context: 256})
		var e *llm.Error
		if !errors.Is(err, llm.ErrModel) || !errors.As(err, &e) || e.Path != mmproj || !strings.Contains(err.Error(), "M-RoPE") {
			t.Errorf("%s text + %s projector: err = %v", pair[0], pair[1], err)
		}
	}
	if LiveHandles() != 0 {
		t.Errorf("LiveHandles = %d", LiveHandles())
	}
}
