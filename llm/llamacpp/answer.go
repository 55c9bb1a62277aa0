package llamacpp

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/framesweep/framesweep/llm"
)

// piece is one part of a prompt, in order: text tokens (1-D positions), or a visual block: the mtmd
// image chunk of a frame or of a temporal pair of frames.
type piece struct {
	text []int32

	frame        *frame // an image chunk (frame.chunks[chunk])
	chunk        int
	nTok         int
	gridW, gridH int
	// join continues the previous visual piece's block: same start position (a Qwen2-VL-family
	// video is one block); dt is the temporal offset within it.
	join  bool
	dt    int
	group llm.VisualGroup
}

func (p piece) visual() bool { return p.frame != nil }

// owned is the C memory a request's pieces hold; free releases it (idempotent per handle).
type owned struct {
	frames []*frame
}

func (o *owned) free() {
	for _, f := range o.frames {
		f.free()
	}
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
	resp := &llm.Response{}
	var own owned
	defer own.free()
	pieces, err := r.pieces(ctx, req, prompt, resp, &own)
	if err != nil {
		return nil, err
	}
	nPrompt := 0
	for _, p := range pieces {
		nPrompt += len(p.text) + p.nTok
	}
	if nPrompt+req.MaxTok() > r.nctx {
		return nil, llm.Errorf("answer", r.path, llm.ErrContextTooLong, "%d prompt tokens + %d to generate > ctx %d", nPrompt, req.MaxTok(), r.nctx)
	}
	logits, pos, err := r.prefill(ctx, pieces, resp, &own)
	if err != nil {
		return nil, err
	}
	r.promptPos = pos
	resp.VisualCheck = r.visualCheck(req, resp)
	resp.Probs = r.letterProbs(logits, llm.Letters(req.Options))
	text, n, err := r.generate(ctx, req, logits, pos)
	if err != nil {
		return nil, err
	}
	resp.Text, resp.PromptTokens, resp.CompletionTokens = text, nPrompt, n
	resp.LatencyS = time.Since(start).Seconds()
	llm.Finish(resp, req, tpl)
	return resp, nil
}

// pieces renders the prompt: the text up to the frames (the start of the user turn), the frames as
// the request's input mode lays them out, the rest of the text.
func (r *Runtime) pieces(ctx context.Context, req *llm.Request, prompt llm.Prompt, resp *llm.Response, own *owned) ([]piece, error) {
	pre, post, err := r.renderTurns(prompt)
	if err != nil {
		return nil, err
	}
	preToks, err := r.model.tokenize(pre, true, true)
	if err != nil {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "tokenize: %v", err)
	}
	postToks, err := r.model.tokenize(post, false, true)
	if err != nil {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "tokenize: %v", err)
	}
	if len(postToks) == 0 {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "empty prompt after the frames")
	}
	out := []piece{{text: preToks}}
	if len(req.Frames) > 0 {
		mode, err := r.mode(req)
		if err != nil {
			return nil, err
		}
		resp.InputMode = mode
		if mode == llm.InputVideo {
			vs, err := r.videoPieces(req, resp, own)
			if err != nil {
				return nil, err
			}
			out = append(out, vs...)
		} else {
			// Frames were validated (Request.Validate) and go in as raw RGB: nothing for C to decode.
			for i, f := range req.Frames {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				ps, err := r.framePieces(f, i, own)
				if err != nil {
					return nil, err
				}
				out = append(out, ps...)
			}
		}
	}
	return append(out, piece{text: postToks}), nil
}

// prefill decodes the pieces in order and returns the logits of the last token and the next
// position. Text takes 1-D positions (llama.cpp spreads a text token's position over every M-RoPE
// section); a visual block under M-RoPE takes (t, h, w) = (start+dt, start+row, start+column) per
// token and the next position is one past the largest component, as get_rope_index continues after
// a vision block; without M-RoPE its tokens take start, start+1, ….
func (r *Runtime) prefill(ctx context.Context, pieces []piece, resp *llm.Response, own *owned) ([]float32, int, error) {
	r.lctx.clear()
	mrope := r.mtmd != nil && r.mtmd.mrope()
	nonCausal := r.mtmd != nil && r.mtmd.nonCausal()
	pos, blockStart, blockMax := 0, 0, 0
	var logits []float32
	for i, p := range pieces {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if !p.visual() {
			last := i == len(pieces)-1
			l, err := r.lctx.decodeTokens(p.text, pos, last, r.nVocab)
			if err != nil {
				return nil, 0, r.decodeErr(err)
			}
			r.traceText(pos, len(p.text))
			pos += len(p.text)
			if last {
				logits = l
			}
			continue
		}
		if !p.join {
			blockStart, blockMax = pos, pos-1
		}
		s := blockStart
		var positions []int32
		nPer := 1
		if mrope {
			positions, nPer = mropePositions(s, p), 4
			blockMax = max(blockMax, s+p.dt, s+p.gridH-1, s+p.gridW-1)
		} else {
			positions = make([]int32, p.nTok)
			for k := range positions {
				positions[k] = int32(s + k)
			}
			blockMax = s + p.nTok - 1
		}
		if err := r.decodeVisual(p, positions, nPer, nonCausal); err != nil {
			return nil, 0, err
		}
		r.traceVisual(positions, nPer)
		g := p.group
		g.Tokens, g.GridW, g.GridH, g.PosStart, g.PosT = p.nTok, p.gridW, p.gridH, s, s+p.dt
		if !mrope {
			g.GridW, g.GridH, g.PosT = p.nTok, 1, s
		}
		resp.VisualGroups = append(resp.VisualGroups, g)
		resp.VisualTokens += p.nTok
		pos = blockMax + 1
	}
	return logits, pos, nil
}

// mropePositions are a visual block's M-RoPE positions, dimension-major: t, then h, then w, then
// the unused fourth component.
func mropePositions(start int, p piece) []int32 {
	n := p.nTok
	pos := make([]int32, 4*n)
	for y := range p.gridH {
		for x := range p.gridW {
			k := y*p.gridW + x
			pos[k] = int32(start + p.dt)
			pos[n+k] = int32(start + y)
			pos[2*n+k] = int32(start + x)
		}
	}
	return pos
}

// decodeVisual encodes a visual piece and decodes its embeddings at positions; a frame's C memory is
// released as soon as its last image chunk is decoded.
func (r *Runtime) decodeVisual(p piece, positions []int32, nPer int, nonCausal bool) error {
	embd, err := r.mtmd.encode(p.frame, p.chunk)
	if err != nil {
		return llm.Errorf("answer", r.mmproj, llm.ErrBadImage, "frames %v: %v", p.group.Frames, err)
	}
	if err := r.lctx.decodeEmbd(embd, p.nTok, positions, nPer, nonCausal); err != nil {
		return r.decodeErr(err)
	}
	if p.chunk == len(p.frame.chunks)-1 || !hasImageAfter(p.frame, p.chunk) {
		p.frame.free()
	}
	return nil
}

// hasImageAfter reports whether frame f has another image chunk after chunk k.
func hasImageAfter(f *frame, k int) bool {
	for _, c := range f.chunks[k+1:] {
		if c.typ == chunkImage {
			return true
		}
	}
	return false
}

// decodeErr classifies a llama_decode failure: only a full KV cache means "too long".
func (r *Runtime) decodeErr(err error) error {
	kind := llm.ErrBadRequest
	if errors.Is(err, errKVFull) {
		kind = llm.ErrContextTooLong
	}
	return llm.Errorf("answer", r.path, kind, "llama_decode: %v", err)
}

func (r *Runtime) traceText(pos, n int) {
	if r.trace == nil {
		return
	}
	for k := range n {
		*r.trace = append(*r.trace, tracePos{0, pos + k, pos + k, pos + k})
	}
}

func (r *Runtime) traceVisual(positions []int32, nPer int) {
	if r.trace == nil {
		return
	}
	n := len(positions) / nPer
	for k := range n {
		t := int(positions[k])
		if nPer == 1 {
			*r.trace = append(*r.trace, tracePos{1, t, t, t})
		} else {
			*r.trace = append(*r.trace, tracePos{1, t, int(positions[n+k]), int(positions[2*n+k])})
		}
	}
}

// letterProbs: the logits of every token that spells an option letter, combined per letter.
func (r *Runtime) letterProbs(logits []float32, letters []string) map[string]float64 {
	if len(letters) == 0 {
		return nil
	}
	scores := map[string][]float64{}
	for _, l := range letters {
		for _, id := range r.letters[l] {
			scores[l] = append(scores[l], float64(logits[id]))
		}
	}
	return llm.LetterProbs(scores, letters)
}

// generate decodes up to MaxTokens tokens after the prompt from its last logits.
func (r *Runtime) generate(ctx context.Context, req *llm.Request, logits []float32, pos int) (string, int, error) {
	var rng *rand.Rand
	if req.Temperature > 0 {
		rng = rand.New(rand.NewPCG(uint64(req.Seed), 0x5eed))
	}
	var text strings.Builder
	n := 0
	for n < req.MaxTok() {
		if err := ctx.Err(); err != nil {
			return "", 0, err
		}
		tok := pick(logits, req.Temperature, rng)
		if r.model.isEOG(tok) {
			break
		}
		text.WriteString(r.model.piece(tok))
		n++
		if n == req.MaxTok() {
			break
		}
		var err error
		if logits, err = r.lctx.decodeTokens([]int32{int32(tok)}, pos, true, r.nVocab); err != nil {
			return "", 0, r.decodeErr(err)
		}
		pos++
	}
	return text.String(), n, nil
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
