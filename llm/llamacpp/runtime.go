package llamacpp

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/framesweep/framesweep/internal/gguf"
	"github.com/framesweep/framesweep/llm"
)

// live counts C handles currently owned by open Runtimes.
var live atomic.Int64

// LiveHandles returns the number of llama.cpp handles (models, contexts, mtmd contexts, batches, the
// tokenized frames and frame pairs of a request in flight) alive.
func LiveHandles() int64 { return live.Load() }

const batchSize = 512

// Runtime is one loaded model (+ projector). Requests are served one at a time (a llama context is not
// safe for concurrent use); Close is idempotent.
type Runtime struct {
	mu       sync.Mutex
	model    *llModel
	lctx     *llContext
	mtmd     *mtmdCtx
	nVocab   int
	letters  map[string][]int // option letter -> token ids whose text is the letter, with or without a leading space
	path     string
	mmproj   string
	proj     string // the projector's clip.projector_type ("" without one)
	tile     int    // the projector's clip.vision.image_size (InternVL: the side of a tile)
	video    videoPath
	input    string // spec input=: llm.InputImages, llm.InputVideo, or "" (video when the request carries timing)
	tps      float64
	nctx     int
	chat     string // "gguf", "chatml" or "plain"
	template string // the GGUF's tokenizer.chat_template ("" when it has none)
	backend  string // the llama.cpp build and the devices it runs on (Describe; records' runtime_backend)
	sysMsg   string // the family's own system message, for prompts without one (InternVL's chat())
	// promptPos is the position after the last prompt's prefill: below its token count when frames
	// went in with M-RoPE positions (tests read it). trace, when not nil, receives every prompt
	// token's (kind, t, h, w) position (tests).
	promptPos int
	trace     *[]tracePos

	// vision is the projector's visual-token arithmetic, or visionWhy why it has none (visualtokens.go).
	vision    llm.Vision
	visionWhy string
}

// tracePos is one prompt token's position as decoded: kind 0 text (1-D, t = h = w), 1 visual.
type tracePos struct{ Kind, T, H, W int }

// Open opens a runtime from a parsed spec (llm.Opener).
func Open(sp llm.Spec) (llm.Runtime, error) {
	if err := sp.Check([]string{"model"}, "mmproj", "threads", "ctx", "chat", "image_min_tokens", "image_max_tokens", "input", "tokens_per_second",
		"system", "device", "gpu_layers"); err != nil {
		return nil, err
	}
	threads, err := sp.Int("threads", runtime.NumCPU(), 1, llm.MaxThreads)
	if err != nil {
		return nil, err
	}
	nctx, err := sp.Int("ctx", 4096, 64, 1<<24)
	if err != nil {
		return nil, err
	}
	chat := sp.Params["chat"]
	if chat != "" && chat != ChatGGUF && chat != ChatML && chat != ChatPlain {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: chat=%q (want gguf, chatml or plain)", chat)
	}
	minTok, err := sp.Int("image_min_tokens", 0, 1, 1<<20)
	if err != nil {
		return nil, err
	}
	maxTok, err := sp.Int("image_max_tokens", 0, 1, 1<<20)
	if err != nil {
		return nil, err
	}
	if minTok > 0 && maxTok > 0 && minTok > maxTok {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: image_min_tokens %d > image_max_tokens %d", minTok, maxTok)
	}
	input, err := sp.Input()
	if err != nil {
		return nil, err
	}
	tps, err := sp.Int("tokens_per_second", 0, 1, 1<<20)
	if err != nil {
		return nil, err
	}
	system := sp.Params["system"]
	if system != "" && system != SystemAuto && system != SystemNone {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: system=%q (want auto or none)", system)
	}
	layers, err := sp.Int("gpu_layers", -1, -1, 1<<16)
	if err != nil {
		return nil, err
	}
	if _, ok := sp.Params["gpu_layers"]; ok && sp.Params["device"] == "" {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: gpu_layers= needs device= (e.g. device=cuda0)")
	}
	return New(sp.Params["model"], sp.Params["mmproj"], Options{Threads: threads, Context: nctx, Chat: chat,
		ImageMinTokens: minTok, ImageMaxTokens: maxTok, Input: input, TokensPerSecond: float64(tps), System: system,
		Device: sp.Params["device"], GPULayers: layers})
}

// Turn formats (Options.Chat, spec key chat=).
const (
	ChatGGUF  = "gguf"   // the GGUF's own tokenizer.chat_template, through llama.cpp's built-in formatter
	ChatML    = "chatml" // <|im_start|>role\n…<|im_end|> turns
	ChatPlain = "plain"  // system, user and assistant prefix separated by newlines
)

// System messages (Options.System, spec key system=).
const (
	// SystemAuto: a prompt without a system turn gets the one the family's own chat() always sets
	// (InternVL: llm.InternVLSystemMessage), under chat=gguf and chat=chatml.
	SystemAuto = "auto"
	SystemNone = "none" // no system turn unless the prompt has one
)

// Options are the load settings.
type Options struct {
	Threads int    // CPU threads for the text model and the projector
	Context int    // context length in tokens
	Chat    string // ChatGGUF, ChatML or ChatPlain; "" = ChatGGUF when the GGUF has a template, else ChatML
	// ImageMinTokens and ImageMaxTokens (> 0) bound the tokens per frame of dynamic-resolution
	// projectors (the Qwen families; llama.cpp's defaults are 8 and 4096); 0 keeps the projector's own.
	ImageMinTokens, ImageMaxTokens int
	// Input is llm.InputImages, llm.InputVideo (refused at load for a family without a video path),
	// or "": video when a request carries its frames' timing (llm.Request.Video) and the family has a
	// video path, images otherwise.
	Input string
	// TokensPerSecond is Qwen2.5-VL's vision_config.tokens_per_second (the GGUF does not carry it);
	// 0 = 2, the value of the released Qwen2.5-VL checkpoints.
	TokensPerSecond float64
	// Device is where the model and the projector run: "" or "cpu" (the best ggml CPU backend for this
	// CPU), or "cudaN" (llama.cpp's CUDA backend, installed by `scripts/deps.sh cuda`). Asking for a GPU
	// that cannot be had is an error (ErrNoGPU), never a fall-back to the CPU.
	Device string
	// GPULayers is how many of the text model's layers go to the GPU (negative: all); the CPU keeps
	// the rest. Ignored without a GPU Device.
	GPULayers int
	// System is SystemAuto ("" too) or SystemNone.
	System string
}

// New loads model (and mmproj when not "") after checking both files in Go and, the first time this
// pair is seen, loading it in a child process (probe.go), so that a file llama.cpp aborts on is an
// error here, not the end of this process.
func New(model, mmproj string, o Options) (*Runtime, error) {
	return newRuntime(model, mmproj, o, true, func(string, string) {})
}

// newRuntime is New; parent is false in the load probe's child, which neither checks nor probes
// again, and stage is told each file before llama.cpp loads it.
func newRuntime(model, mmproj string, o Options, parent bool, stage func(stage, path string)) (*Runtime, error) {
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	if o.Context <= 0 {
		o.Context = 4096
	}
	if o.TokensPerSecond <= 0 {
		o.TokensPerSecond = 2
	}
	if o.Input != "" && o.Input != llm.InputImages && o.Input != llm.InputVideo {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: input=%q (want images or video)", o.Input)
	}
	if o.System != "" && o.System != SystemAuto && o.System != SystemNone {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: system=%q (want auto or none)", o.System)
	}
	if _, _, _, err := inspectGGUF(model, false, parent); err != nil {
		return nil, err
	}
	r := &Runtime{path: model, mmproj: mmproj, nctx: o.Context, chat: o.Chat, input: o.Input, tps: o.TokensPerSecond}
	if mmproj != "" {
		var err error
		var kv gguf.KV
		if _, r.proj, kv, err = inspectGGUF(mmproj, true, parent); err != nil {
			return nil, err
		}
		r.tile = int(kvUint(kv, "clip.vision.image_size"))
		r.vision, r.visionWhy = visionOf(r.proj, kv, o)
		r.video = videoPaths[r.proj]
		if r.proj == "internvl" && o.System != SystemNone {
			r.sysMsg = llm.InternVLSystemMessage
		}
		if o.Input == llm.InputVideo && r.video == noVideo {
			return nil, llm.Errorf("load model", mmproj, llm.ErrBadSpec, "input=video: projector type %q has no faithful video path in process (%s); use input=images", r.proj, noVideoWhy[r.proj])
		}
	} else if o.Input == llm.InputVideo {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: input=video needs mmproj=")
	}
	if parent {
		if err := probe(model, mmproj); err != nil {
			return nil, err
		}
	}
	if err := backendInit(); err != nil {
		return nil, llm.Errorf("load model", model, llm.ErrModel, "%v", err)
	}
	gpu, err := openDevice(o.Device)
	if err != nil {
		return nil, err // ErrBadSpec or ErrDevice, naming the device and the library
	}
	r.backend = describeBackend(gpu, o.GPULayers)
	stage("model", model)
	m, cause, err := loadModel(model, gpu, o.GPULayers)
	if err != nil {
		if cause == "" {
			cause = "no reason logged"
		}
		return nil, llm.Errorf("load model", model, llm.ErrModel, "llama.cpp could not load it: %s", cause)
	}
	r.model = m
	live.Add(1)
	fail := func(err error) (*Runtime, error) {
		r.Close()
		return nil, err
	}
	lc, err := newContext(m, o.Context, batchSize, o.Threads)
	if err != nil {
		return fail(llm.Errorf("load model", model, llm.ErrModel, "create context: %v", err))
	}
	r.lctx = lc
	live.Add(2) // the context and its token batch
	r.nVocab = m.nVocab()
	if err := r.setChat(o.Chat); err != nil {
		return fail(err)
	}
	if mmproj != "" {
		stage("mmproj", mmproj)
		if err := r.loadProjector(o, gpu); err != nil {
			return fail(err)
		}
	}
	r.letters = letterTokens(m)
	return r, nil
}

// loadProjector loads the vision projector and checks that it suits the text model.
func (r *Runtime) loadProjector(o Options, gpu *device) error {
	if pm, tm := mropeProjectors[r.proj], r.model.mrope(); pm != tm {
		kind := map[bool]string{true: "M-RoPE", false: "1-D RoPE"}
		return llm.Errorf("load model", r.mmproj, llm.ErrModel, "the projector lays frames out for %s but the text model %s uses %s (mismatched pair)",
			kind[pm], r.path, kind[tm])
	}
	mt, err := newMtmd(r.mmproj, r.model, o.Threads, o.ImageMinTokens, o.ImageMaxTokens, gpu)
	if err != nil {
		return llm.Errorf("load model", r.mmproj, llm.ErrModel, "mtmd could not load the projector (does it match the model?)")
	}
	r.mtmd = mt
	live.Add(1)
	if !mt.vision() {
		return llm.Errorf("load model", r.mmproj, llm.ErrModel, "the projector has no vision encoder")
	}
	return nil
}

// mropeProjectors are the projector types whose embeddings take M-RoPE positions (the Qwen2-VL
// family's mergers). Upstream mtmd takes the layout from the text model, so a projector of the other
// kind would load and misplace every frame (or read past the position buffer): caught here.
var mropeProjectors = map[string]bool{"qwen2vl_merger": true, "qwen2.5vl_merger": true, "qwen3vl_merger": true}

// setChat settles the turn format: the GGUF's template when it has one and chat is "" or "gguf"
// (checked here, once, against llama.cpp's formatter), else chatml or plain as asked.
func (r *Runtime) setChat(chat string) error {
	r.template = r.model.chatTemplate()
	if chat == "" {
		chat = ChatML
		if r.template != "" {
			chat = ChatGGUF
		}
	}
	r.chat = chat
	if chat != ChatGGUF {
		return nil
	}
	if r.template == "" {
		return llm.Errorf("load model", r.path, llm.ErrModel, "chat=gguf but the model has no tokenizer.chat_template")
	}
	if _, err := applyChat(r.template, "s", "u"); err != nil {
		return llm.Errorf("load model", r.path, llm.ErrModel, "its chat template is %v; pass chat=chatml or chat=plain", err)
	}
	return nil
}

// letterTokens maps each capital letter to the tokens that spell it (llm.TokenLetter: "A", " A", "(A",
// "A.", "A)").
func letterTokens(m *llModel) map[string][]int {
	out := map[string][]int{}
	for id := range m.nVocab() {
		if l := llm.TokenLetter(m.piece(id)); l != "" {
			out[l] = append(out[l], id)
		}
	}
	return out
}

// Close frees every C handle; it is idempotent.
func (r *Runtime) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mtmd != nil {
		r.mtmd.free()
		r.mtmd = nil
		live.Add(-1)
	}
	if r.lctx != nil {
		r.lctx.free()
		r.lctx = nil
		live.Add(-2)
	}
	if r.model != nil {
		r.model.free()
		r.model = nil
		live.Add(-1)
	}
	return nil
}

// framesAt marks where the frames go in a prompt rendered by the GGUF's template (a private-use
// sentinel no template or question produces; the rendered text is split there).
const framesAt = "\uE000framesweep:frames\uE000"

// renderTurns returns the prompt text before the frames (the start of the user turn) and after them
// (the rest of the user turn, the assistant header and the assistant prefix).
func (r *Runtime) renderTurns(p llm.Prompt) (pre, post string, err error) {
	if p.System == "" && r.chat != ChatPlain {
		p.System = r.sysMsg
	}
	switch r.chat {
	case ChatPlain:
		if p.System != "" {
			pre = p.System + "\n"
		}
		return pre, p.User + "\n" + p.AssistantPrefix, nil
	case ChatGGUF:
		full, err := applyChat(r.template, p.System, framesAt+p.User)
		if err != nil {
			return "", "", llm.Errorf("answer", r.path, llm.ErrBadRequest, "chat template: %v", err)
		}
		pre, post, ok := strings.Cut(full, framesAt)
		if !ok || strings.Contains(post, framesAt) {
			return "", "", llm.Errorf("answer", r.path, llm.ErrBadRequest, "chat template did not keep the user turn intact")
		}
		return pre, post + p.AssistantPrefix, nil
	}
	if p.System != "" {
		pre = "<|im_start|>system\n" + p.System + "<|im_end|>\n"
	}
	pre += "<|im_start|>user\n"
	return pre, p.User + "<|im_end|>\n<|im_start|>assistant\n" + p.AssistantPrefix, nil
}
