package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/rgb"
)

const countReply = `{"choices":[{"message":{"role":"assistant","content":"A"}}],"usage":{"prompt_tokens":100,"completion_tokens":1}}`

// plainFrames are n frames of w×h, timed at 1 fps from t = 0 (0.5 fps: at most SGLang's 2 fps).
func plainFrames(n, w, h int, fps float64) ([]*rgb.Image, *llm.VideoTiming) {
	fr := make([]*rgb.Image, n)
	ts := make([]float64, n)
	idx := make([]int, n)
	for i := range fr {
		fr[i] = rgb.New(w, h)
		for k := range fr[i].Pix {
			fr[i].Pix[k] = byte(k*7 + i)
		}
		idx[i] = i * int(30/fps)
		ts[i] = float64(idx[i]) / 30
	}
	return fr, &llm.VideoTiming{TimestampsS: ts, Indices: idx, SourceFPS: 30, TotalFrames: idx[n-1] + 1}
}

// TestVisualCheckForms: the count a client expects of its frames in each form it sends them, for the
// family its spec names or its model name implies: image parts (each image's tokens between two
// markers), vLLM's video item (temporal pairs in one block; Qwen3-VL a block and a timestamp per
// pair), SGLang's MP4 (the frames at the size SGLang resizes them to). A model naming no family
// expects nothing ("unknown family"); family= takes only a known family.
func TestVisualCheckForms(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, _ *http.Request, _ map[string]any) { io.WriteString(w, countReply) })
	url := s.URL + "/v1"
	ask := func(spec string, n, w, h int, fps float64) *llm.VisualCheck {
		t.Helper()
		rt, err := llm.Registry{"openai": Open}.Open("openai:url=" + url + "," + spec)
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		fr, tm := plainFrames(n, w, h, fps)
		resp, err := rt.Answer(context.Background(), &llm.Request{Frames: fr, Video: tm, Question: "q", Options: []string{"A. x", "B. y"}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.VisualCheck
	}
	for _, tc := range []struct {
		spec              string
		n, w, h           int
		fps               float64
		family            string
		expected, overhad int
	}{
		// 112×84: 4×3 tokens an image; 3 images between 2 markers each.
		{"model=Qwen/Qwen2.5-VL-7B-Instruct", 3, 112, 84, 1, llm.FamilyQwen25VL, 36, 6},
		// 16 frames: 8 pairs of 12 in one block.
		{"model=Qwen/Qwen2.5-VL-7B-Instruct,input=video", 16, 112, 84, 1, llm.FamilyQwen25VL, 96, 2},
		// SGLang resizes 112×84 to 392×280 (its 128·28² minimum): 14×10 a pair.
		{"model=qwen2-vl-7b,input=video,server=sglang", 8, 112, 84, 0.5, llm.FamilyQwen2VL, 4 * 140, 2},
		// Qwen3-VL: 32-pixel tokens (4×3 at 128×96); each of 2 pairs a block behind "<t.t seconds>"
		// (pair times 0.5 and 2.5 s: 6 tokens each).
		{"model=m,family=qwen3-vl,input=video", 4, 128, 96, 1, llm.FamilyQwen3VL, 24, 2 * (2 + 6)},
		// InternVL: a 448² image is one tile of 256.
		{"model=OpenGVLab/InternVL3-8B", 2, 448, 448, 1, llm.FamilyInternVL, 512, 4},
		// LLaVA-NeXT-Video: 144 pooled tokens a frame.
		{"model=llava-hf/LLaVA-NeXT-Video-7B-hf,input=video", 4, 336, 336, 1, llm.FamilyLLaVANeXTVideo, 576, 0},
	} {
		c := ask(tc.spec, tc.n, tc.w, tc.h, tc.fps)
		if c == nil || c.Expected == nil || *c.Expected != tc.expected || c.Overhead != tc.overhad || c.Family != tc.family || c.Seen != nil || c.Why != "" {
			t.Errorf("%s, %d frames of %dx%d: %+v, want %s %d + %d", tc.spec, tc.n, tc.w, tc.h, c, tc.family, tc.expected, tc.overhad)
		}
	}
	if c := ask("model=tiny", 2, 64, 48, 1); c == nil || c.Expected != nil || c.Family != "" || !strings.Contains(c.Why, "unknown family") {
		t.Errorf("a model naming no family: %+v", c)
	}
	if c := ask("model=llava-v1.6-mistral", 2, 64, 48, 1); c == nil || c.Expected != nil {
		t.Errorf("LLaVA-1.6 is no family counted: %+v", c)
	}
	if _, err := Open(mustSpec(t, "openai:url="+url+",model=m,family=gemma3")); !errors.Is(err, llm.ErrBadSpec) || !strings.Contains(err.Error(), "family") {
		t.Errorf("family=gemma3: %v", err)
	}
}

func mustSpec(t *testing.T, s string) llm.Spec {
	t.Helper()
	sp, err := llm.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestTextPromptTokens: the count of a request's text-only prompt from the server's tokenize
// endpoint: vLLM's (and SGLang's) POST /tokenize of the chat messages — the request's turns without
// its frames, MLVU's prefilled assistant turn continued — or llama-server's /apply-template then
// /tokenize; a server with neither is llm.ErrNoTokenize once and not asked again; a failing server is
// llm.ErrServer and is asked again next time.
func TestTextPromptTokens(t *testing.T) {
	var calls atomic.Int64
	var last atomic.Value
	mux := func(kind string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			var body map[string]any
			b, _ := io.ReadAll(r.Body)
			json.Unmarshal(b, &body)
			last.Store(string(b))
			switch {
			case kind == "down":
				w.WriteHeader(503)
			case kind == "vllm" && r.URL.Path == "/tokenize" && body["messages"] != nil:
				io.WriteString(w, `{"count":42,"max_model_len":4096,"tokens":[1,2]}`)
			case kind == "twice" && r.URL.Path == "/tokenize":
				io.WriteString(w, `{"count":42,"count":4200,"tokens":[1,2]}`)
			case kind == "llama" && r.URL.Path == "/apply-template":
				io.WriteString(w, `{"prompt":"<|im_start|>user\nq<|im_end|>"}`)
			case kind == "llama" && r.URL.Path == "/tokenize" && body["content"] != nil:
				io.WriteString(w, `{"tokens":[1,2,3,4,5,6,7]}`)
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(s.Close)
		return s
	}
	fr, tm := plainFrames(2, 64, 48, 1)
	req := &llm.Request{Frames: fr, Video: tm, Question: "Which one?", Options: []string{"A. x", "B. y"}, Template: llm.TemplateMLVU}
	count := func(s *httptest.Server) (int, error) {
		c, err := New(s.URL+"/v1", "m", Options{Retries: 0})
		if err != nil {
			t.Fatal(err)
		}
		return c.TextPromptTokens(context.Background(), req)
	}
	if n, err := count(mux("vllm")); n != 42 || err != nil {
		t.Errorf("vLLM /tokenize: %d, %v", n, err)
	}
	body := last.Load().(string)
	if strings.Contains(body, "image_url") || !strings.Contains(body, "Which one?") || !strings.Contains(body, `"continue_final_message":true`) || !strings.Contains(body, "Best Option: (") {
		t.Errorf("tokenize request %s", body)
	}
	// A count given twice is no count (the replies' strict check, issue 40).
	if n, err := count(mux("twice")); n != 0 || !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), `key "count" twice`) {
		t.Errorf("a tokenize reply naming count twice: %d, %v", n, err)
	}
	if n, err := count(mux("llama")); n != 7 || err != nil {
		t.Errorf("llama-server /apply-template + /tokenize: %d, %v", n, err)
	}
	none := mux("none")
	c, _ := New(none.URL+"/v1", "m", Options{})
	if _, err := c.TextPromptTokens(context.Background(), req); !errors.Is(err, llm.ErrNoTokenize) {
		t.Errorf("no endpoint: %v", err)
	}
	before := calls.Load()
	if _, err := c.TextPromptTokens(context.Background(), req); !errors.Is(err, llm.ErrNoTokenize) || calls.Load() != before {
		t.Errorf("asked again (%d requests): %v", calls.Load()-before, err)
	}
	down := mux("down")
	c, _ = New(down.URL+"/v1", "m", Options{})
	for range 2 {
		if _, err := c.TextPromptTokens(context.Background(), req); !errors.Is(err, llm.ErrServer) {
			t.Errorf("a failing server: %v", err)
		}
	}
}
