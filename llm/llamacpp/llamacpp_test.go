package llamacpp

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/gguf"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/internal/testsupport/testframes"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/testmodel"
	"github.com/framesweep/framesweep/rgb"
)

var (
	tiny    testmodel.Paths                        // the default (llama + mlp) pair, testmodel.Write
	archs   = map[testmodel.Arch]testmodel.Paths{} // every family's pair, testmodel.WriteArch
	testTmp string                                 // removed after the tests
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "llamacpp-test")
	if err != nil {
		panic(err)
	}
	testTmp = dir
	tiny, err = testmodel.Write(dir, testmodel.DefaultSeed)
	if err != nil {
		panic(err)
	}
	for _, a := range testmodel.Archs {
		if archs[a], err = testmodel.WriteArch(dir, a, testmodel.DefaultSeed); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 && LiveHandles() != 0 {
		println("leak: LiveHandles() =", LiveHandles())
		code = 1
	}
	os.Exit(code)
}

func open(t *testing.T, spec string) llm.Runtime {
	t.Helper()
	rt, err := llm.Registry{"llamacpp": Open}.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func checkProbs(t *testing.T, resp *llm.Response, letters ...string) {
	t.Helper()
	if len(resp.Probs) != len(letters) {
		t.Fatalf("probs %v: want one per option %v", resp.Probs, letters)
	}
	var sum float64
	for _, l := range letters {
		p, ok := resp.Probs[l]
		if !ok || p < 0 || p > 1 || math.IsNaN(p) {
			t.Fatalf("probs %v: bad entry for %s", resp.Probs, l)
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("probs %v sum to %v", resp.Probs, sum)
	}
}

// videoFrames returns 4 real frames (56×42) of the bbb test video; it skips without ../shared, except
// under CI=true, where the missing oracle is a failure (testenv).
func videoFrames(t *testing.T) []*rgb.Image {
	t.Helper()
	video := testenv.SharedVideo(t, testframes.Video)
	fr, err := testframes.Extract(video, []int{0, 30, 60, 90}, 56, 42)
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

func TestAnswerVideoFrames(t *testing.T) {
	fr := videoFrames(t)
	rt := open(t, "llamacpp:model="+tiny.Model+",mmproj="+tiny.Mmproj+",threads=1,ctx=2048")
	req := &llm.Request{
		Frames:   fr,
		Question: "What is the animal in the video?",
		Options:  []string{"A. a bunny", "B. a bird", "C. a squirrel", "D. a fish"},
		Template: llm.TemplateVideoMME,
	}
	resp, err := rt.Answer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("text %q choice %q probs %v prompt %d completion %d latency %.3fs", resp.Text, resp.Choice, resp.Probs, resp.PromptTokens, resp.CompletionTokens, resp.LatencyS)
	checkProbs(t, resp, "A", "B", "C", "D")
	if resp.Template != llm.TemplateVideoMME || resp.Choice != llm.ExtractVideoMME(resp.Text) {
		t.Errorf("template %q choice %q for text %q", resp.Template, resp.Choice, resp.Text)
	}
	// Each 28×28 image becomes 4 patch embeddings: the prompt must hold 16 image positions more than text-only.
	textOnly, err := rt.Answer(context.Background(), &llm.Request{Question: req.Question, Options: req.Options, Template: req.Template})
	if err != nil {
		t.Fatal(err)
	}
	checkProbs(t, textOnly, "A", "B", "C", "D")
	if got := resp.PromptTokens - textOnly.PromptTokens; got != 16 {
		t.Errorf("image positions = %d, want 16 (4 frames × 4 patches)", got)
	}
	// Greedy decoding is deterministic, and the frames change the answer distribution.
	again, err := rt.Answer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Text != resp.Text || again.Probs["A"] != resp.Probs["A"] {
		t.Errorf("not deterministic: %q %v vs %q %v", resp.Text, resp.Probs, again.Text, again.Probs)
	}
	if textOnly.Probs["A"] == resp.Probs["A"] {
		t.Errorf("frames did not change the letter distribution: %v", resp.Probs)
	}
}

func TestMLVUAndSampling(t *testing.T) {
	rt := open(t, "llamacpp:model="+tiny.Model+",chat=plain,threads=1")
	req := &llm.Request{Question: "Which?", Options: []string{"red", "green", "blue", "cyan", "pink", "gold"},
		Template: llm.TemplateMLVU, Temperature: 1, Seed: 7, MaxTokens: 8}
	a, err := rt.Answer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkProbs(t, a, "A", "B", "C", "D", "E", "F")
	if a.CompletionTokens > 8 || a.Template != llm.TemplateMLVU {
		t.Errorf("%+v", a)
	}
	b, _ := rt.Answer(context.Background(), req)
	if a.Text != b.Text {
		t.Errorf("same seed, different text: %q %q", a.Text, b.Text)
	}
}

func TestBadModelFiles(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile(tiny.Model)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]string{
		"missing":   filepath.Join(dir, "nope.gguf"),
		"empty":     write("empty.gguf", nil),
		"text":      write("text.gguf", []byte("hello, not a model")),
		"truncated": write("trunc.gguf", good[:len(good)/2]),
		"header":    write("header.gguf", append([]byte("GGUF\x03\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\x7f"), make([]byte, 64)...)),
		"dir":       dir,
	}
	for name, p := range cases {
		_, err := New(p, "", Options{Threads: 1})
		var e *llm.Error
		if !errors.Is(err, llm.ErrModel) || !errors.As(err, &e) || e.Path != p {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// A text model given as the projector, and a projector given as the model.
	if _, err := New(tiny.Model, tiny.Model, Options{}); !errors.Is(err, llm.ErrModel) || !strings.Contains(err.Error(), "projector") {
		t.Errorf("model as mmproj: %v", err)
	}
	if _, err := New(tiny.Mmproj, "", Options{}); !errors.Is(err, llm.ErrModel) {
		t.Errorf("mmproj as model: %v", err)
	}
	if _, err := (llm.Registry{"llamacpp": Open}).Open("llamacpp:mmproj=x"); !errors.Is(err, llm.ErrBadSpec) {
		t.Errorf("spec without model: %v", err)
	}
	if LiveHandles() != 0 {
		t.Errorf("failed opens left %d handles", LiveHandles())
	}
}

func TestLeakCheck(t *testing.T) {
	before := LiveHandles()
	for i := 0; i < 2; i++ {
		rt, err := New(tiny.Model, tiny.Mmproj, Options{Threads: 1, Context: 512})
		if err != nil {
			t.Fatal(err)
		}
		if LiveHandles() != before+4 { // model, context, token batch, projector
			t.Errorf("open runtime holds %d handles, want 4", LiveHandles()-before)
		}
		if _, err := rt.Answer(context.Background(), &llm.Request{Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 2}); err != nil {
			t.Fatal(err)
		}
		rt.Close()
		rt.Close() // idempotent
		if _, err := rt.Answer(context.Background(), &llm.Request{Question: "q"}); !errors.Is(err, llm.ErrClosed) {
			t.Errorf("answer after close: %v", err)
		}
	}
	if LiveHandles() != before {
		t.Errorf("LiveHandles = %d after Close, want %d", LiveHandles(), before)
	}
}

func TestContextTooLong(t *testing.T) {
	rt := open(t, "llamacpp:model="+tiny.Model+",ctx=64,threads=1")
	_, err := rt.Answer(context.Background(), &llm.Request{Question: strings.Repeat("long question ", 20), Options: []string{"A. x"}})
	if !errors.Is(err, llm.ErrContextTooLong) {
		t.Errorf("err = %v", err)
	}
}

// TestOddFrameSizes: degenerate but valid frames (1×1, 3000×1, padded stride) go through mtmd without
// crashing; an invalid one is rejected in Go before any C call.
func TestOddFrameSizes(t *testing.T) {
	rt := open(t, "llamacpp:model="+tiny.Model+",mmproj="+tiny.Mmproj+",threads=1")
	padded := &rgb.Image{W: 5, H: 4, Stride: 32, Pix: make([]byte, 32*4)}
	for _, f := range []*rgb.Image{rgb.New(1, 1), rgb.New(3000, 1), rgb.New(1, 2000), padded} {
		resp, err := rt.Answer(context.Background(), &llm.Request{Frames: []*rgb.Image{f}, Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 1})
		if err != nil || len(resp.Probs) != 2 {
			t.Errorf("%dx%d: %v %v", f.W, f.H, resp, err)
		}
	}
	bad := &rgb.Image{W: 10, H: 10, Stride: 30, Pix: make([]byte, 20)}
	if _, err := rt.Answer(context.Background(), &llm.Request{Frames: []*rgb.Image{bad}, Question: "q"}); !errors.Is(err, llm.ErrBadImage) {
		t.Errorf("short buffer: %v", err)
	}
}

// rewriteGGUF copies a GGUF with its key/values and tensors changed by edit (tensor data read back from
// the original file), to make projectors that llama.cpp itself would crash on.
func rewriteGGUF(t *testing.T, src, dst string, edit func(kv gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Read(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	kv := gguf.KV{}
	for k, v := range g.KV {
		if k != "general.parameter_count" {
			kv[k] = v
		}
	}
	var ts []*gguf.WTensor
	for _, tt := range g.Tensors {
		n, err := tt.Size()
		if err != nil {
			t.Fatal(err)
		}
		off := g.DataOffset + tt.Offset
		ts = append(ts, &gguf.WTensor{Name: tt.Name, Type: tt.Type, Shape: tt.Shape, Data: b[off : off+n]})
	}
	ts = edit(kv, ts)
	out := make([]gguf.WTensor, len(ts))
	for i, x := range ts {
		out[i] = *x
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := gguf.Write(f, kv, out); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestCrashingProjectorsRejected: projector defects that make llama.cpp segfault or abort (DEPS.md) are
// caught in Go with an error naming the file.
func TestCrashingProjectorsRejected(t *testing.T) {
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
	cases := map[string]func(gguf.KV, []*gguf.WTensor) []*gguf.WTensor{
		"no-mean": func(kv gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor { delete(kv, "clip.vision.image_mean"); return ts },
		"bad-heads": func(kv gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor {
			kv["clip.vision.attention.head_count"] = uint32(5)
			return ts
		},
		"no-attn-out": drop("v.blk.1.attn_out.weight"),
		"no-patch":    drop("v.patch_embd.weight"),
	}
	// The unmodified copy must still load: the rewrite itself is faithful.
	same := filepath.Join(dir, "same.gguf")
	rewriteGGUF(t, tiny.Mmproj, same, func(_ gguf.KV, ts []*gguf.WTensor) []*gguf.WTensor { return ts })
	rt, err := New(tiny.Model, same, Options{Threads: 1, Context: 256})
	if err != nil {
		t.Fatalf("faithful copy rejected: %v", err)
	}
	rt.Close()
	for name, edit := range cases {
		p := filepath.Join(dir, name+".gguf")
		rewriteGGUF(t, tiny.Mmproj, p, edit)
		_, err := New(tiny.Model, p, Options{Threads: 1, Context: 256})
		var e *llm.Error
		if !errors.Is(err, llm.ErrModel) || !errors.As(err, &e) || e.Path != p || !strings.Contains(err.Error(), "vision projector") {
			t.Errorf("%s: err = %v (want the Go-side projector check)", name, err)
		}
	}
}
