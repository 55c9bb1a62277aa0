package llamacpp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/gguf"
	"github.com/framesweep/framesweep/internal/testsupport/vlref"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/testmodel"
	"github.com/framesweep/framesweep/rgb"
)

// synthFrames are n distinct w×h frames (a moving gradient): the checks below are about tokens and
// positions, which do not depend on the content; TestPairKernels and TestVideoRealFrames use real
// frames.
func synthFrames(n, w, h int) []*rgb.Image {
	out := make([]*rgb.Image, n)
	for i := range out {
		m := rgb.New(w, h)
		for y := range h {
			for x := range w {
				o := y*m.Stride + 3*x
				m.Pix[o], m.Pix[o+1], m.Pix[o+2] = byte(x*5+i*9), byte(y*7+i*3), byte((x+y)*3+i*11)
			}
		}
		out[i] = m
	}
	return out
}

// timing is a sampling plan's timing for n frames: "uniform" draws them as numpy's
// linspace(0, 299, n) floored from a 300-frame 30 fps video; "2fps" takes every 15th frame of a
// 30 fps video.
func timing(kind string, n int) *llm.VideoTiming {
	v := &llm.VideoTiming{SourceFPS: 30}
	v.Indices = make([]int, n)
	for i := range n {
		if kind == "2fps" {
			v.Indices[i] = 15 * i
		} else {
			v.Indices[i] = int(float64(i) * 299 / float64(n-1))
		}
	}
	v.TotalFrames = 300
	if kind == "2fps" {
		v.TotalFrames = 15 * n
	}
	v.TimestampsS = make([]float64, n)
	for i, x := range v.Indices {
		v.TimestampsS[i] = float64(x) / 30
	}
	return v
}

// archGeom: the tiny families' patch size (the Qwen3-VL ViT's is 16, the others' 14).
var archGeom = map[testmodel.Arch]struct {
	family vlref.Family
	patch  int
}{
	testmodel.ArchQwen2VL:  {vlref.Qwen2VL, 14},
	testmodel.ArchQwen25VL: {vlref.Qwen25VL, 14},
	testmodel.ArchQwen3VL:  {vlref.Qwen3VL, 16},
}

// expectSeq is the token sequence the upstream processor would make of the prompt: the text before
// the frames, the video as its family writes it, the text after — as vlref token kinds, with the
// grid and second_per_grid_t of the video.
func expectSeq(t *testing.T, rt *Runtime, a testmodel.Arch, req *llm.Request, w, h int) ([]vlref.Tok, vlref.Grid, float64) {
	t.Helper()
	p, _, err := llm.Render(req)
	if err != nil {
		t.Fatal(err)
	}
	pre, post, err := rt.renderTurns(p)
	if err != nil {
		t.Fatal(err)
	}
	count := func(s string, add bool) int {
		toks, err := rt.model.tokenize(s, add, true)
		if err != nil {
			t.Fatal(err)
		}
		return len(toks)
	}
	g := archGeom[a]
	grid, err := vlref.VideoGrid(len(req.Frames), h, w, g.patch, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	var seq []vlref.Tok
	add := func(k vlref.Tok, n int) {
		for range n {
			seq = append(seq, k)
		}
	}
	add(vlref.Text, count(pre, true))
	perGroup := grid.H * grid.W / 4
	if g.family == vlref.Qwen3VL {
		for _, ts := range vlref.Qwen3Timestamps(req.Video.Indices, req.Video.SourceFPS, 2) {
			add(vlref.Text, count(ts, false))
			add(vlref.VisionStart, 1)
			add(vlref.Video, perGroup)
			add(vlref.Text, 1) // <|vision_end|>
		}
	} else {
		add(vlref.VisionStart, 1)
		add(vlref.Video, grid.Tokens(2))
		add(vlref.Text, 1)
	}
	add(vlref.Text, count(post, false))
	fps := vlref.SampleFPS(len(req.Frames), req.Video.TotalFrames, req.Video.SourceFPS)
	return seq, grid, 2 / fps
}

// TestVideoPositionsMatchReference: for 8, 15, 16 and 32 frames, at uniform budgets and at 2 fps,
// at five aspect ratios, the Qwen2-VL, Qwen2.5-VL and Qwen3-VL video paths put as many visual
// tokens in the prompt, at the same (t, h, w) position ids for every prompt token, as the upstream
// video processor and get_rope_index compute for the same frames and timing (package vlref, written
// from the transformers sources; nothing shared with this package).
func TestVideoPositionsMatchReference(t *testing.T) {
	sizes := map[int][][2]int{ // (w, h) at 4:3, 3:4, 2:1, 1:1, 5:3 on the patch×2 grid
		14: {{112, 84}, {84, 112}, {168, 84}, {84, 84}, {140, 84}},
		16: {{128, 96}, {96, 128}, {192, 96}, {96, 96}, {160, 96}},
	}
	opts := []string{"A. x", "B. y"}
	for _, a := range []testmodel.Arch{testmodel.ArchQwen25VL, testmodel.ArchQwen3VL, testmodel.ArchQwen2VL} {
		rt, err := New(archs[a].Model, archs[a].Mmproj, Options{Threads: 1, Context: 4096, Input: llm.InputVideo})
		if err != nil {
			t.Fatal(err)
		}
		g := archGeom[a]
		cases := 0
		for _, n := range []int{8, 15, 16, 32} {
			for _, kind := range []string{"uniform", "2fps"} {
				for si, wh := range sizes[g.patch] {
					if a == testmodel.ArchQwen2VL && si > 0 {
						continue // the other families cover the sizes; Qwen2-VL's rule differs only in t
					}
					req := &llm.Request{Frames: synthFrames(n, wh[0], wh[1]), Video: timing(kind, n), Question: "q", Options: opts, MaxTokens: 1}
					var trace []tracePos
					rt.trace = &trace
					resp, err := rt.Answer(context.Background(), req)
					rt.trace = nil
					if err != nil {
						t.Fatalf("%s %d frames %s %dx%d: %v", a, n, kind, wh[0], wh[1], err)
					}
					seq, grid, spg := expectSeq(t, rt, a, req, wh[0], wh[1])
					want, err := vlref.RopeIndex(g.family, seq, []vlref.Grid{grid}, []float64{spg}, 2, 2, false)
					if err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%s/%d-frames/%s/%dx%d", a, n, kind, wh[0], wh[1])
					checkTrace(t, name, trace, seq, want)
					if resp.VisualTokens != grid.Tokens(2) || resp.InputMode != llm.InputVideo || len(resp.VisualGroups) != grid.T {
						t.Errorf("%s: %d visual tokens in %d groups (%s), reference %d in %d", name, resp.VisualTokens, len(resp.VisualGroups), resp.InputMode, grid.Tokens(2), grid.T)
					}
					cases++
				}
			}
		}
		rt.Close()
		t.Logf("%s: %d cases equal to the reference", a, cases)
	}
}

// checkTrace compares the runtime's decoded positions with the reference, token by token.
func checkTrace(t *testing.T, name string, got []tracePos, seq []vlref.Tok, want [][3]int) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d prompt tokens decoded, reference sequence has %d", name, len(got), len(want))
		return
	}
	for i, g := range got {
		visual := seq[i] == vlref.Video
		if (g.Kind == 1) != visual || [3]int{g.T, g.H, g.W} != want[i] {
			t.Errorf("%s: token %d: kind %d at (%d,%d,%d), reference %v at %v", name, i, g.Kind, g.T, g.H, g.W, seq[i], want[i])
			return
		}
	}
}

// TestVideoHalvesTokens: 16 frames of the tiny Qwen2.5-VL model in video mode take half the visual
// tokens of image mode (8 temporal pairs), the temporal positions advance by time, and the response
// says so.
func TestVideoHalvesTokens(t *testing.T) {
	q := archs[testmodel.ArchQwen25VL]
	fr := synthFrames(16, 112, 84)
	req := &llm.Request{Frames: fr, Video: timing("uniform", 16), Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 1}
	var got [2]*llm.Response
	for i, in := range []string{llm.InputImages, llm.InputVideo} {
		rt := open(t, "llamacpp:model="+q.Model+",mmproj="+q.Mmproj+",threads=1,input="+in)
		resp, err := rt.Answer(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = resp
	}
	img, vid := got[0], got[1]
	t.Logf("16 frames 112x84: images %d visual tokens (%d groups), video %d (%d groups), fps %.3f (%s), temporal ids %v",
		img.VisualTokens, len(img.VisualGroups), vid.VisualTokens, len(vid.VisualGroups), vid.VideoFPS, vid.VideoFPSSource, posT(vid))
	if img.VisualTokens != 16*12 || vid.VisualTokens != img.VisualTokens/2 || len(vid.VisualGroups) != 8 {
		t.Errorf("visual tokens: images %d, video %d in %d groups; want 192 and 96 in 8", img.VisualTokens, vid.VisualTokens, len(vid.VisualGroups))
	}
	if img.InputMode != llm.InputImages || vid.InputMode != llm.InputVideo || img.PromptTokens-vid.PromptTokens < 96 {
		t.Errorf("modes %q %q, prompt tokens %d vs %d", img.InputMode, vid.InputMode, img.PromptTokens, vid.PromptTokens)
	}
	// 16 of 300 frames at 30 fps: 1.6 fps, 1.25 s per pair, 2 tokens per second: ⌊2.5 g⌋.
	if vid.VideoFPS != 1.6 || vid.VideoFPSSource != llm.FPSSampled || fmt.Sprint(posT(vid)) != "[0 2 5 7 10 12 15 17]" {
		t.Errorf("fps %v (%s), temporal offsets %v", vid.VideoFPS, vid.VideoFPSSource, posT(vid))
	}
	for g, vg := range vid.VisualGroups {
		if fmt.Sprint(vg.Frames) != fmt.Sprint([]int{2 * g, 2*g + 1}) || vg.Tokens != 12 || vg.GridW != 4 || vg.GridH != 3 {
			t.Errorf("group %d: %+v", g, vg)
		}
	}
}

// posT are the temporal offsets of a response's visual groups from the video's start.
func posT(r *llm.Response) []int {
	var out []int
	for _, g := range r.VisualGroups {
		out = append(out, g.PosT-r.VisualGroups[0].PosStart)
	}
	return out
}

// TestQwen3Timestamps: the Qwen3-VL prompt carries one "<t.t seconds>" per frame pair, the pair's
// mean time, before its <|vision_start|>; an odd count pads the last pair with the last frame.
func TestQwen3Timestamps(t *testing.T) {
	q := archs[testmodel.ArchQwen3VL]
	rt := open(t, "llamacpp:model="+q.Model+",mmproj="+q.Mmproj+",threads=1")
	for _, n := range []int{16, 15} {
		v := timing("2fps", n)
		resp, err := rt.Answer(context.Background(), &llm.Request{Frames: synthFrames(n, 128, 96), Video: v, Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := vlref.Qwen3Timestamps(v.Indices, 30, 2)
		var prefixes []string
		for _, g := range resp.VisualGroups {
			prefixes = append(prefixes, g.Prefix)
		}
		if len(prefixes) != (n+1)/2 || strings.Join(prefixes, "") != strings.Join(want, "") || len(resp.VideoTimestampsS) != (n+1)/2 {
			t.Errorf("%d frames: prefixes %v, reference %v, timestamps %v", n, prefixes, want, resp.VideoTimestampsS)
		}
		if n == 15 && fmt.Sprint(resp.VisualGroups[7].Frames) != "[14 14]" {
			t.Errorf("last pair of 15 frames: %v, want the last frame twice", resp.VisualGroups[7].Frames)
		}
		// Input unset: the timing makes it a video (the spec above has no input=).
		if resp.InputMode != llm.InputVideo {
			t.Errorf("input mode %q", resp.InputMode)
		}
	}
}

// TestInternVLFrameLines: InternVL's video path writes "Frame{i}: " before each frame (from 1), a
// line break after it, one tile per frame (any aspect), at 1-D positions.
func TestInternVLFrameLines(t *testing.T) {
	q := archs[testmodel.ArchInternVL]
	rt, err := New(q.Model, q.Mmproj, Options{Threads: 1, Context: 4096, Input: llm.InputVideo})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for _, wh := range [][2]int{{56, 56}, {96, 54}} {
		var trace []tracePos
		rt.trace = &trace
		resp, err := rt.Answer(context.Background(), &llm.Request{Frames: synthFrames(4, wh[0], wh[1]), Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 1})
		rt.trace = nil
		if err != nil {
			t.Fatal(err)
		}
		if resp.VisualTokens != 16 || len(resp.VisualGroups) != 4 || resp.InputMode != llm.InputVideo {
			t.Fatalf("%dx%d: %d tokens in %d groups (%s), want 4 tiles of 4", wh[0], wh[1], resp.VisualTokens, len(resp.VisualGroups), resp.InputMode)
		}
		for i, g := range resp.VisualGroups {
			if g.Prefix != fmt.Sprintf("Frame%d: ", i+1) || g.GridH != 1 || g.PosT != g.PosStart {
				t.Errorf("group %d: %+v", i, g)
			}
		}
		for i, p := range trace {
			if p.T != i || p.H != i || p.W != i {
				t.Fatalf("token %d at (%d,%d,%d): not 1-D", i, p.T, p.H, p.W)
			}
		}
	}
}

// TestVideoRefusals: a family without a video path refuses input=video by name at load; a Qwen2.5-VL
// or Qwen3-VL video without timing is a bad request; frames of different sizes are a bad request.
func TestVideoRefusals(t *testing.T) {
	_, err := New(tiny.Model, tiny.Mmproj, Options{Threads: 1, Input: llm.InputVideo})
	if !errors.Is(err, llm.ErrBadSpec) || !strings.Contains(err.Error(), `"mlp"`) || !strings.Contains(err.Error(), "input=images") {
		t.Errorf("llava input=video: %v", err)
	}
	if _, err := (llm.Registry{"llamacpp": Open}).Open("llamacpp:model=" + tiny.Model + ",input=clip"); !errors.Is(err, llm.ErrBadSpec) {
		t.Errorf("input=clip: %v", err)
	}
	for _, a := range []testmodel.Arch{testmodel.ArchQwen25VL, testmodel.ArchQwen3VL} {
		rt, err := New(archs[a].Model, archs[a].Mmproj, Options{Threads: 1, Input: llm.InputVideo})
		if err != nil {
			t.Fatal(err)
		}
		_, err = rt.Answer(context.Background(), &llm.Request{Frames: synthFrames(2, 64, 64), Question: "q"})
		if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), "timing") {
			t.Errorf("%s without timing: %v", a, err)
		}
		fr := append(synthFrames(1, 64, 64), synthFrames(1, 96, 64)...)
		_, err = rt.Answer(context.Background(), &llm.Request{Frames: fr, Video: timing("2fps", 2), Question: "q"})
		if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), "size") {
			t.Errorf("%s mixed sizes: %v", a, err)
		}
		rt.Close()
	}
	if LiveHandles() != 0 {
		t.Errorf("LiveHandles = %d", LiveHandles())
	}
}

// TestPairKernels: a temporal pair goes through the two Conv3d kernels as the patch set says —
// frame t through kernel 0 (v.patch_embd.weight), frame t+1 through kernel 1 (.weight.1):
//   - the pair (a, a) gives exactly the embeddings of a as a still image (upstream's path: the
//     same image through both kernels);
//   - with kernel 1 zeroed the second frame has no effect and the first has; with kernel 0 zeroed
//     the reverse; with both, the order of the pair matters.
func TestPairKernels(t *testing.T) {
	fr := videoFrames(t)                                      // 4 real frames, 56×42
	a, b, c := upscale(fr[0]), upscale(fr[1]), upscale(fr[3]) // 112×84: on the grid, not resized
	dir := t.TempDir()
	for _, arch := range []testmodel.Arch{testmodel.ArchQwen25VL, testmodel.ArchQwen3VL} {
		p := archs[arch]
		zeroed := func(name string) string {
			out := filepath.Join(dir, string(arch)+"-"+strings.ReplaceAll(name, ".", "_")+".gguf")
			rewriteGGUF(t, p.Mmproj, out, func(_ gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor {
				for _, x := range ts {
					if x.Name == name {
						n := uint64(4)
						for _, d := range x.Shape {
							n *= d
						}
						x.Data = make([]byte, n)
					}
				}
				return ts
			})
			return out
		}
		embd := func(mmproj string, x, y *rgb.Image) []float32 {
			rt, err := New(p.Model, mmproj, Options{Threads: 1, Context: 512})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			e, err := rt.mtmd.embeddingsOf(x, y, rt.model.embdWidth())
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		if d := maxDiff(embd(p.Mmproj, a, nil), embd(p.Mmproj, a, a)); d != 0 {
			t.Errorf("%s: pair (a,a) differs from image a by %g", arch, d)
		}
		if d := maxDiff(embd(p.Mmproj, a, b), embd(p.Mmproj, b, a)); d == 0 {
			t.Errorf("%s: pair order has no effect", arch)
		}
		k1 := zeroed("v.patch_embd.weight.1")
		if d := maxDiff(embd(k1, a, b), embd(k1, a, c)); d != 0 {
			t.Errorf("%s, kernel 1 zero: the second frame changed the embeddings by %g", arch, d)
		}
		if d := maxDiff(embd(k1, a, b), embd(k1, c, b)); d == 0 {
			t.Errorf("%s, kernel 1 zero: the first frame had no effect", arch)
		}
		k0 := zeroed("v.patch_embd.weight")
		if d := maxDiff(embd(k0, a, b), embd(k0, c, b)); d != 0 {
			t.Errorf("%s, kernel 0 zero: the first frame changed the embeddings by %g", arch, d)
		}
		if d := maxDiff(embd(k0, a, b), embd(k0, a, c)); d == 0 {
			t.Errorf("%s, kernel 0 zero: the second frame had no effect", arch)
		}
	}
	if LiveHandles() != 0 {
		t.Errorf("LiveHandles = %d", LiveHandles())
	}
}

// upscale doubles a frame's size by pixel repetition.
func upscale(m *rgb.Image) *rgb.Image {
	out := rgb.New(2*m.W, 2*m.H)
	for y := range out.H {
		for x := range out.W {
			copy(out.Pix[y*out.Stride+3*x:][:3], m.Pix[(y/2)*m.Stride+3*(x/2):][:3])
		}
	}
	return out
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}
