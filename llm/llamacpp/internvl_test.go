package llamacpp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/gguf"
	"github.com/framesweep/framesweep/internal/testsupport/vlref"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/testmodel"
	"github.com/framesweep/framesweep/resize/geom"
)

// tinyInternVL: the tiny InternVL projector's tile (clip.vision.image_size 56, patch 14, pixel
// shuffle 0.5): (56/14/2)² = 4 visual tokens per tile, as a real InternVL's 448 tile gives 256.
const (
	tinyInternVLTile   = 56
	tinyInternVLTokens = 4
)

// flatPrompt is a prompt's pieces as one token sequence, every visual token written as -1, and as
// text, every visual token written as ctx.
func flatPrompt(rt *Runtime, ps []piece, ctx string) ([]int32, string) {
	var toks []int32
	var text strings.Builder
	for _, p := range ps {
		if p.visual() {
			for range p.nTok {
				toks = append(toks, -1)
				text.WriteString(ctx)
			}
			continue
		}
		toks = append(toks, p.text...)
		for _, t := range p.text {
			text.WriteString(rt.model.piece(int(t)))
		}
	}
	return toks, text.String()
}

// refTokens tokenizes the reference query as transformers does: the text between runs of ctx (the
// <IMG_CONTEXT> tokens) with the model's tokenizer, each run as -1s.
func refTokens(t *testing.T, rt *Runtime, query, ctx string) []int32 {
	t.Helper()
	var out []int32
	for i, seg := range strings.Split(query, ctx) {
		if i > 0 {
			out = append(out, -1)
		}
		toks, err := rt.model.tokenize(seg, i == 0, true)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, toks...)
	}
	return out
}

// TestInternVLTiles4MatchesUpstream: the in-process InternVL video prompt with the system message
// and tiles=4 (the engine's geometry internvl3:max_num=4, lmms-eval's candidate order, thumbnail:
// 4 tiles + thumbnail per frame of a 4:3 source) equals, token for token and as text, what
// InternVL's chat() with template internvl2_5 makes of lmms-eval's video question for the same
// frames (internal/testsupport/vlref: conversation.py's MPT prompt, chat()'s <image> replacement,
// internvl3.py's "Frame{i}: <image>\n" prefix), every tile's tokens inside its frame's one
// <img>…</img> block, at consecutive 1-D positions.
func TestInternVLTiles4MatchesUpstream(t *testing.T) {
	const n, srcW, srcH = 16, 112, 84
	g := geom.InternVL{MinNum: 1, MaxNum: 4, Order: geom.OrderLmmsEval, Thumbnail: true, TileSize: tinyInternVLTile}
	l, err := g.Layout(srcW, srcH, n)
	if err != nil {
		t.Fatal(err)
	}
	per := l.Images()
	if len(l.Tiles) != 4 || per != 5 {
		t.Fatalf("tiles=4 on %dx%d: %d tiles + thumbnail %v, want 4 + 1", srcW, srcH, len(l.Tiles), l.Thumb)
	}
	q := archs[testmodel.ArchInternVL]
	// The tiny vocabulary is SentencePiece's, which puts a space before the text of every tokenize
	// call and after every special token, and a BOS first; InternVL3's (Qwen2's byte-level BPE) does
	// neither, so its text tokenizes the same in pieces as whole. The copy here says the same.
	model := filepath.Join(t.TempDir(), "internvl-bpe-like.gguf")
	rewriteGGUF(t, q.Model, model, func(kv gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor {
		kv["tokenizer.ggml.add_space_prefix"], kv["tokenizer.ggml.add_bos_token"] = false, false
		return ts
	})
	rt, err := New(model, q.Mmproj, Options{Threads: 1, Context: 4096, Input: llm.InputVideo})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	req := &llm.Request{Frames: synthFrames(n*per, tinyInternVLTile, tinyInternVLTile), ImagesPerFrame: per, Video: timing("uniform", n),
		Question: "What happens?", Options: []string{"A. x", "B. y", "C. z", "D. w"}, Template: llm.TemplateVideoMME, MaxTokens: 1}
	p, _, err := llm.Render(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := &llm.Response{}
	var own owned
	ps, err := rt.pieces(context.Background(), req, p, resp, &own)
	if err != nil {
		own.free()
		t.Fatal(err)
	}
	const ctx = "\uE001" // <IMG_CONTEXT> (the tiny vocabulary has no such token)
	got, text := flatPrompt(rt, ps, ctx)
	own.free()
	patches := slices.Repeat([]int{per}, n)
	query := vlref.InternVLVideoQuery(llm.InternVLSystemMessage, p.User, patches, tinyInternVLTokens, ctx)
	if text != query {
		t.Errorf("prompt text differs from upstream's\n got: %q\nwant: %q", text, query)
	}
	want := refTokens(t, rt, query, ctx)
	if !slices.Equal(got, want) {
		t.Errorf("prompt tokens differ from upstream's: %d vs %d tokens", len(got), len(want))
	}
	// The same request answered: every tile's tokens counted, one prefix per frame, 1-D positions.
	var trace []tracePos
	rt.trace = &trace
	out, err := rt.Answer(context.Background(), req)
	rt.trace = nil
	if err != nil {
		t.Fatal(err)
	}
	if out.VisualTokens != n*per*tinyInternVLTokens || len(out.VisualGroups) != n*per || out.InputForm != llm.FormInternVLFrames || out.PromptTokens != len(want) {
		t.Errorf("%d visual tokens in %d groups, form %q, %d prompt tokens; want %d in %d, %d", out.VisualTokens, len(out.VisualGroups), out.InputForm,
			out.PromptTokens, n*per*tinyInternVLTokens, n*per, len(want))
	}
	for k, grp := range out.VisualGroups {
		want := ""
		if k%per == 0 {
			want = fmt.Sprintf("Frame%d: ", k/per+1)
		}
		if grp.Prefix != want || grp.Frames[0] != k {
			t.Errorf("group %d: prefix %q frames %v", k, grp.Prefix, grp.Frames)
		}
	}
	for i, tp := range trace {
		if tp.T != i {
			t.Fatalf("token %d at position %d: not consecutive 1-D", i, tp.T)
		}
	}
}

// TestInternVLSystemMessage: an InternVL prompt without a system turn gets the one InternVL's chat()
// sets, under chat=gguf (the GGUF's template) and chat=chatml; system=none leaves it out, a prompt's
// own system turn (MLVU) is kept, chat=plain adds none, and other families get none.
func TestInternVLSystemMessage(t *testing.T) {
	sys := "<|im_start|>system\n" + llm.InternVLSystemMessage + "<|im_end|>\n<|im_start|>user\n"
	q := archs[testmodel.ArchInternVL]
	for _, c := range []struct {
		arch          testmodel.Arch
		spec, tpl     string
		wantPre, name string
	}{
		{testmodel.ArchInternVL, "", llm.TemplateVideoMME, sys, "gguf"},
		{testmodel.ArchInternVL, ",chat=chatml", llm.TemplateGeneric, sys, "chatml"},
		{testmodel.ArchInternVL, ",system=none", llm.TemplateVideoMME, "<|im_start|>user\n", "none"},
		{testmodel.ArchInternVL, ",system=auto", llm.TemplateMLVU, "<|im_start|>system\nCarefully watch", "mlvu"},
		{testmodel.ArchInternVL, ",chat=plain", llm.TemplateVideoMME, "", "plain"},
		{testmodel.ArchQwen25VL, "", llm.TemplateVideoMME, "<|im_start|>user\n", "qwen"},
	} {
		p := archs[c.arch]
		rt := open(t, "llamacpp:model="+p.Model+",mmproj="+p.Mmproj+",threads=1"+c.spec)
		pr, _, err := llm.Render(&llm.Request{Question: "q", Options: []string{"A. x", "B. y"}, Template: c.tpl})
		if err != nil {
			t.Fatal(err)
		}
		pre, _, err := rt.(*Runtime).renderTurns(pr)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(pre, c.wantPre) || (c.wantPre == "" && pre != "") {
			t.Errorf("%s: prompt starts %q, want %q", c.name, pre, c.wantPre)
		}
	}
	if _, err := (llm.Registry{"llamacpp": Open}).Open("llamacpp:model=" + q.Model + ",mmproj=" + q.Mmproj + ",system=model"); !errors.Is(err, llm.ErrBadSpec) {
		t.Errorf("system=model: %v, want ErrBadSpec", err)
	}
}

// TestTiledFramesInProcess: tiled frames (Request.ImagesPerFrame) go to a Qwen projector as images,
// even with timing, and input=video refuses them by name; timing has one entry per frame, not per
// tile; the response of every route names its form, and the Qwen2.5-VL video notes the fps
// transformers 5.x would derive instead of the one used.
func TestTiledFramesInProcess(t *testing.T) {
	p := archs[testmodel.ArchQwen25VL]
	fr := synthFrames(8, 56, 56)
	auto := open(t, "llamacpp:model="+p.Model+",mmproj="+p.Mmproj+",threads=1,image_max_tokens=16")
	resp, err := auto.Answer(context.Background(), &llm.Request{Frames: fr, ImagesPerFrame: 2, Video: timing("uniform", 4), Question: "q", MaxTokens: 1})
	if err != nil || resp.InputMode != llm.InputImages || resp.InputForm != llm.FormImages {
		t.Errorf("tiled frames, input unset: %v, mode %q form %q", err, resp.InputMode, resp.InputForm)
	}
	if _, err := auto.Answer(context.Background(), &llm.Request{Frames: fr, ImagesPerFrame: 2, Video: timing("uniform", 8), Question: "q"}); !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("timing per tile: %v, want ErrBadRequest", err)
	}
	video := open(t, "llamacpp:model="+p.Model+",mmproj="+p.Mmproj+",threads=1,image_max_tokens=16,input=video")
	_, err = video.Answer(context.Background(), &llm.Request{Frames: fr, ImagesPerFrame: 2, Video: timing("uniform", 4), Question: "q"})
	if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), "2 tiles") {
		t.Errorf("tiled frames, input=video: %v", err)
	}
	// 4 frames of a 300-frame 30 fps video told 2 fps: transformers 5.x derives 4 / 300 × 30 = 0.4.
	v := timing("uniform", 4)
	v.SampleFPS = 2
	resp, err = video.Answer(context.Background(), &llm.Request{Frames: fr[:4], Video: v, Question: "q", MaxTokens: 1})
	if err != nil || resp.InputForm != llm.FormQwen25VLVideo || len(resp.VideoWarnings) != 1 || !strings.Contains(resp.VideoWarnings[0], "derives fps 0.4") {
		t.Errorf("qwen2.5-vl video told 2 fps: %v, form %q, warnings %q", err, resp.InputForm, resp.VideoWarnings)
	}
	resp, err = video.Answer(context.Background(), &llm.Request{Frames: fr[:4], Video: timing("uniform", 4), Question: "q", MaxTokens: 1})
	if err != nil || resp.VideoWarnings != nil {
		t.Errorf("qwen2.5-vl video at its sampled fps: %v, warnings %q", err, resp.VideoWarnings)
	}
	for a, form := range map[testmodel.Arch]string{testmodel.ArchQwen2VL: llm.FormQwen2VLVideo, testmodel.ArchQwen3VL: llm.FormQwen3VLVideo} {
		rt := open(t, "llamacpp:model="+archs[a].Model+",mmproj="+archs[a].Mmproj+",threads=1,image_max_tokens=16,input=video")
		resp, err := rt.Answer(context.Background(), &llm.Request{Frames: synthFrames(2, 64, 64), Video: timing("2fps", 2), Question: "q", MaxTokens: 1})
		if err != nil || resp.InputForm != form {
			t.Errorf("%s: %v, form %q", a, err, resp.InputForm)
		}
	}
}
