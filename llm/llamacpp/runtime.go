package llamacpp

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framesweep/framesweep/llm"
	"github.com/ollama/ollama/llama"
	"github.com/ollama/ollama/ml"
)

// live counts C handles currently owned by open Runtimes.
var live atomic.Int64

// LiveHandles returns the number of llama.cpp handles (models, contexts, mtmd contexts, batches, the
// tokenized frames of a request in flight) alive.
func LiveHandles() int64 { return live.Load() }

var backendOnce sync.Once

const batchSize = 512

// Runtime is one loaded model (+ projector). Requests are served one at a time (a llama context is not
// safe for concurrent use); Close is idempotent.
type Runtime struct {
	mu       sync.Mutex
	model    *llama.Model
	lctx     *llama.Context
	mtmd     *mtmdCtx
	tokens   *llama.Batch
	letters  map[string][]int // option letter -> token ids whose text is the letter, with or without a leading space
	path     string
	mmproj   string
	nctx     int
	chat     string // "gguf", "chatml" or "plain"
	template string // the GGUF's tokenizer.chat_template ("" when it has none)
	// promptPos is the position after the last prompt's prefill: below its token count when frames
	// went in with M-RoPE positions (tests read it).
	promptPos int
}

// Open opens a runtime from a parsed spec (llm.Opener).
func Open(sp llm.Spec) (llm.Runtime, error) {
	if err := sp.Check([]string{"model"}, "mmproj", "threads", "ctx", "chat", "image_min_tokens", "image_max_tokens"); err != nil {
		return nil, err
	}
	threads, err := sp.Int("threads", runtime.NumCPU(), 1)
	if err != nil {
		return nil, err
	}
	nctx, err := sp.Int("ctx", 4096, 64)
	if err != nil {
		return nil, err
	}
	chat := sp.Params["chat"]
	if chat != "" && chat != ChatGGUF && chat != ChatML && chat != ChatPlain {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: chat=%q (want gguf, chatml or plain)", chat)
	}
	minTok, err := sp.Int("image_min_tokens", 0, 1)
	if err != nil {
		return nil, err
	}
	maxTok, err := sp.Int("image_max_tokens", 0, 1)
	if err != nil {
		return nil, err
	}
	if minTok > 0 && maxTok > 0 && minTok > maxTok {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: image_min_tokens %d > image_max_tokens %d", minTok, maxTok)
	}
	return New(sp.Params["model"], sp.Params["mmproj"], Options{Threads: threads, Context: nctx, Chat: chat,
		ImageMinTokens: minTok, ImageMaxTokens: maxTok})
}

// Turn formats (Options.Chat, spec key chat=).
const (
	ChatGGUF  = "gguf"   // the GGUF's own tokenizer.chat_template, through llama.cpp's built-in formatter
	ChatML    = "chatml" // <|im_start|>role\n…<|im_end|> turns
	ChatPlain = "plain"  // system, user and assistant prefix separated by newlines
)

// Options are the load settings.
type Options struct {
	Threads int    // CPU threads for the text model
	Context int    // context length in tokens
	Chat    string // ChatGGUF, ChatML or ChatPlain; "" = ChatGGUF when the GGUF has a template, else ChatML
	// ImageMinTokens and ImageMaxTokens (> 0) bound the tokens per frame of dynamic-resolution
	// projectors (the Qwen families; llama.cpp's defaults are 8 and 4096); 0 keeps the projector's own.
	ImageMinTokens, ImageMaxTokens int
}

// New loads model (and mmproj when not "") after checking both files in Go.
func New(model, mmproj string, o Options) (*Runtime, error) {
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	if o.Context <= 0 {
		o.Context = 4096
	}
	if _, err := CheckGGUF(model, false); err != nil {
		return nil, err
	}
	if mmproj != "" {
		if _, err := CheckGGUF(mmproj, true); err != nil {
			return nil, err
		}
	}
	backendOnce.Do(func() {
		llama.BackendInit()
		quietMtmd() // the projector logs every image at debug level otherwise
	})
	r := &Runtime{path: model, mmproj: mmproj, nctx: o.Context, chat: o.Chat}
	m, cause, err := loadModel(model)
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
	lc, err := llama.NewContextWithModel(m, llama.NewContextParams(o.Context, batchSize, 1, o.Threads, ml.FlashAttentionDisabled, ""))
	if err != nil {
		return fail(llm.Errorf("load model", model, llm.ErrModel, "create context: %v", err))
	}
	r.lctx = lc
	live.Add(1)
	noEmbeddings(lc)
	if r.tokens, err = llama.NewBatch(batchSize, 1, 0); err != nil {
		return fail(llm.Errorf("load model", model, llm.ErrModel, "%v", err))
	}
	live.Add(1)
	if err := r.setChat(o.Chat); err != nil {
		return fail(err)
	}
	if mmproj != "" {
		mt, err := newMtmd(mmproj, m, o.Threads, o.ImageMinTokens, o.ImageMaxTokens)
		if err != nil {
			return fail(llm.Errorf("load model", mmproj, llm.ErrModel, "mtmd could not load the projector (does it match the model?)"))
		}
		r.mtmd = mt
		live.Add(1)
		if !mt.vision() {
			return fail(llm.Errorf("load model", mmproj, llm.ErrModel, "the projector has no vision encoder"))
		}
		// Embedding positions are laid out by the projector's kind and read by the text model's: a
		// mismatch makes llama.cpp read past the position buffer (or misplace every frame).
		if pm, tm := mt.mrope(), modelMRoPE(m); pm != tm {
			kind := map[bool]string{true: "M-RoPE", false: "1-D RoPE"}
			return fail(llm.Errorf("load model", mmproj, llm.ErrModel, "the projector lays frames out for %s but the text model %s uses %s (mismatched pair)",
				kind[pm], model, kind[tm]))
		}
	}
	r.letters = letterTokens(m)
	return r, nil
}

// setChat settles the turn format: the GGUF's template when it has one and chat is "" or "gguf"
// (checked here, once, against llama.cpp's formatter), else chatml or plain as asked.
func (r *Runtime) setChat(chat string) error {
	r.template = chatTemplate(r.model)
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
func letterTokens(m *llama.Model) map[string][]int {
	out := map[string][]int{}
	for id := range m.NumVocab() {
		if l := llm.TokenLetter(m.TokenToPiece(id)); l != "" {
			out[l] = append(out[l], id)
		}
	}
	return out
}

// Close frees every C handle; it is idempotent.
func (r *Runtime) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tokens != nil {
		r.tokens.Free()
		r.tokens = nil
		live.Add(-1)
	}
	if r.mtmd != nil {
		r.mtmd.free()
		r.mtmd = nil
		live.Add(-1)
	}
	if r.lctx != nil {
		freeContext(r.lctx)
		r.lctx = nil
		live.Add(-1)
	}
	if r.model != nil {
		llama.FreeModel(r.model)
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

// Answer runs one request: prompt (+ frames) prefill, logits of the option letters at the first answer
// position, then greedy (or seeded, when Temperature > 0) generation up to MaxTokens.
func (r *Runtime) Answer(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if len(req.Tensors) > 0 {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "llamacpp takes frames, not tensors")
	}
	prompt, tpl, err := llm.Render(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.model == nil {
		return nil, llm.Errorf("answer", r.path, llm.ErrClosed, "")
	}
	if len(req.Frames) > 0 && r.mtmd == nil {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "%d frames but no mmproj in the spec", len(req.Frames))
	}
	start := time.Now()
	pre, post, err := r.renderTurns(prompt)
	if err != nil {
		return nil, err
	}
	preToks, err := r.model.Tokenize(pre, true, true)
	if err != nil {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "tokenize: %v", err)
	}
	postToks, err := r.model.Tokenize(post, false, true)
	if err != nil {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "tokenize: %v", err)
	}
	if len(postToks) == 0 {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "empty prompt after the frames")
	}
	nPrompt := len(preToks) + len(postToks)
	frames := make([]*frame, 0, len(req.Frames))
	defer func() {
		for _, f := range frames {
			f.free()
		}
	}()
	for i, f := range req.Frames {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Frames were validated (Request.Validate) and go in as raw RGB: nothing for C to decode.
		fr, err := r.mtmd.tokenizeFrame(f)
		if err != nil {
			return nil, llm.Errorf("answer", r.mmproj, llm.ErrBadImage, "frame %d (%dx%d): %v", i, f.W, f.H, err)
		}
		frames = append(frames, fr)
		nPrompt += fr.nTok
	}
	if nPrompt+req.MaxTok() > r.nctx {
		return nil, llm.Errorf("answer", r.path, llm.ErrContextTooLong, "%d prompt tokens + %d to generate > ctx %d", nPrompt, req.MaxTok(), r.nctx)
	}

	// Prefill: text up to the frames, each frame (its markers and embeddings, at the positions the
	// projector's family uses), the rest of the text; logits of the last token.
	r.lctx.KvCacheClear()
	pos := 0
	if _, err := r.decode(r.tokens, len(preToks), &pos, false, func(i int) int { return preToks[i] }); err != nil {
		return nil, err
	}
	for i, fr := range frames {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if pos, err = r.mtmd.eval(r.lctx, fr, pos, batchSize); err != nil {
			return nil, llm.Errorf("answer", r.mmproj, llm.ErrBadImage, "frame %d: %v", i, err)
		}
		fr.free() // its C memory is no longer needed
	}
	logits, err := r.decode(r.tokens, len(postToks), &pos, true, func(i int) int { return postToks[i] })
	if err != nil {
		return nil, err
	}
	r.promptPos = pos

	letters := llm.Letters(req.Options)
	var probs map[string]float64
	if len(letters) > 0 {
		scores := map[string][]float64{}
		for _, l := range letters {
			for _, id := range r.letters[l] {
				scores[l] = append(scores[l], float64(logits[id]))
			}
		}
		probs = llm.LetterProbs(scores, letters)
	}

	var rng *rand.Rand
	if req.Temperature > 0 {
		rng = rand.New(rand.NewPCG(uint64(req.Seed), 0x5eed))
	}
	var text strings.Builder
	n := 0
	for n < req.MaxTok() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tok := pick(logits, req.Temperature, rng)
		if r.model.TokenIsEog(tok) {
			break
		}
		text.WriteString(r.model.TokenToPiece(tok))
		n++
		if n == req.MaxTok() {
			break
		}
		if logits, err = r.decode(r.tokens, 1, &pos, true, func(int) int { return tok }); err != nil {
			return nil, err
		}
	}
	resp := &llm.Response{
		Text:             text.String(),
		Probs:            probs,
		PromptTokens:     nPrompt,
		CompletionTokens: n,
		LatencyS:         time.Since(start).Seconds(),
	}
	llm.Finish(resp, req, tpl)
	return resp, nil
}

// decode feeds n tokens in batch-sized slices at 1-D positions (llama.cpp spreads a text token's
// position over every M-RoPE section); when wantLogits, it returns the logits of the last token.
func (r *Runtime) decode(b *llama.Batch, n int, pos *int, wantLogits bool, at func(int) int) ([]float32, error) {
	for i := 0; i < n; {
		b.Clear()
		for ; i < n && b.NumTokens() < b.Size(); i++ {
			b.Add(at(i), nil, *pos, wantLogits && i == n-1, 0)
			*pos++
		}
		if err := r.lctx.Decode(b); err != nil {
			// Only a full KV cache means "too long"; a negative llama_decode status is another failure.
			kind := llm.ErrBadRequest
			if errors.Is(err, llama.ErrKvCacheFull) {
				kind = llm.ErrContextTooLong
			}
			return nil, llm.Errorf("answer", r.path, kind, "llama_decode: %v", err)
		}
	}
	if !wantLogits {
		return nil, nil
	}
	return r.lctx.GetLogitsIth(b.NumTokens() - 1), nil
}

// pick is greedy at temperature 0, else a seeded draw from softmax(logits/T).
func pick(logits []float32, temp float64, rng *rand.Rand) int {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	if temp <= 0 || rng == nil {
		return best
	}
	mx := float64(logits[best])
	var sum float64
	w := make([]float64, len(logits))
	for i, v := range logits {
		w[i] = math.Exp((float64(v) - mx) / temp)
		sum += w[i]
	}
	u := rng.Float64() * sum
	for i, x := range w {
		if u -= x; u <= 0 {
			return i
		}
	}
	return best
}
