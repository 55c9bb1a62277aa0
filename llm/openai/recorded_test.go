package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/piloracle"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/rgb"
)

// Reply bodies in the shapes vLLM, SGLang, OpenAI and ollama send.
const (
	// vLLM chat completion with logprobs (decoded token text, " A" variant present).
	vllmReply = `{"id":"chatcmpl-1","object":"chat.completion","model":"Qwen/Qwen2.5-VL-7B-Instruct","choices":[{"index":0,
"message":{"role":"assistant","content":"B"},"logprobs":{"content":[{"token":"B","logprob":-0.3567,"bytes":[66],
"top_logprobs":[{"token":"B","logprob":-0.3567,"bytes":[66]},{"token":"A","logprob":-1.6094,"bytes":[65]},
{"token":" A","logprob":-2.9957,"bytes":[32,65]},{"token":"C","logprob":-2.3026,"bytes":[67]},{"token":"The","logprob":-5.0}]}]},
"finish_reason":"stop","stop_reason":null}],"usage":{"prompt_tokens":1234,"total_tokens":1235,"completion_tokens":1}}`
	// SGLang: leading whitespace token, then the letter; raw BPE spelling "ĠD".
	sglangReply = `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":" D"},
"logprobs":{"content":[{"token":"ĠD","logprob":-0.1,"top_logprobs":[{"token":"ĠD","logprob":-0.1},{"token":"ĠC","logprob":-2.5}]}]},
"finish_reason":"stop","matched_stop":151645}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}`
	vllmTooManyImages = `{"object":"error","message":"At most 8 image(s) may be provided in one prompt. Set ` + "`--limit-mm-per-prompt`" + ` to increase this limit.","type":"BadRequestError","param":null,"code":400}`
	vllmContextLong   = `{"error":{"message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}}`
	sglangContextLong = `{"object":"error","message":"The input (70000 tokens) is longer than the model's context length (32768 tokens).","type":"BadRequestError","param":null,"code":400}`
	ollamaError       = `{"error":"model 'nope' not found"}`
	qwen3Metadata500  = `{"object":"error","message":"VideoMetadata.__init__() missing 1 required positional argument: 'total_num_frames'","type":"InternalServerError","param":null,"code":500}`
)

func server(t *testing.T, h func(w http.ResponseWriter, r *http.Request, body map[string]any)) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, `{"error":"bad json"}`, 400)
			return
		}
		h(w, r, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func client(t *testing.T, s *httptest.Server, o Options) *Client {
	t.Helper()
	o.Backoff = time.Millisecond
	c, err := New(s.URL+"/v1", "m", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func frame() *rgb.Image {
	m := rgb.New(8, 6)
	for i := range m.Pix {
		m.Pix[i] = byte(i * 7)
	}
	return m
}

var req4 = llm.Request{Question: "Q?", Options: []string{"A. a", "B. b", "C. c", "D. d"}, Template: llm.TemplateVideoMME}

func TestVLLMLogprobsAndRequestShape(t *testing.T) {
	var got map[string]any
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		got = body
		io.WriteString(w, vllmReply)
	})
	c := client(t, s, Options{Image: "png"})
	r := req4
	r.Frames = []*rgb.Image{frame(), frame()}
	r.Seed = 42
	resp, err := c.Answer(context.Background(), &r)
	if err != nil {
		t.Fatal(err)
	}
	// A = exp(-1.6094)+exp(-2.9957) = 0.2+0.05, B = 0.7, C = 0.1, D missing -> 0; renormalised over 1.05.
	want := map[string]float64{"A": 0.25 / 1.05, "B": 0.7 / 1.05, "C": 0.1 / 1.05, "D": 0}
	for l, p := range want {
		if math.Abs(resp.Probs[l]-p) > 1e-3 {
			t.Errorf("P(%s) = %v, want %v (all %v)", l, resp.Probs[l], p, resp.Probs)
		}
	}
	if len(resp.RequestSHA256) != 64 {
		t.Errorf("request digest %q", resp.RequestSHA256)
	}
	if resp.Choice != "B" || resp.PromptTokens != 1234 || resp.CompletionTokens != 1 || resp.Template != llm.TemplateVideoMME {
		t.Errorf("%+v", resp)
	}
	// Explicit sampling parameters and two base64 PNG image parts before the text.
	if got["temperature"] != 0.0 || got["top_p"] != 1.0 || got["seed"] != 42.0 || got["max_tokens"] != float64(llm.DefaultMaxTokens) ||
		got["logprobs"] != true || got["top_logprobs"] != 20.0 || got["stream"] != false {
		t.Errorf("sampling params: %v", got)
	}
	msgs := got["messages"].([]any)
	parts := msgs[0].(map[string]any)["content"].([]any)
	if len(parts) != 3 || parts[2].(map[string]any)["type"] != "text" ||
		!strings.HasPrefix(parts[0].(map[string]any)["image_url"].(map[string]any)["url"].(string), "data:image/png;base64,iVBOR") {
		t.Errorf("parts: %v", parts)
	}
}

func TestSGLangRawTokensAndMLVUPrefill(t *testing.T) {
	var got map[string]any
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		got = body
		io.WriteString(w, sglangReply)
	})
	c := client(t, s, Options{})
	r := req4
	r.Template = llm.TemplateMLVU
	resp, err := c.Answer(context.Background(), &r)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Probs["D"] < 0.9 || resp.Probs["A"] != 0 {
		t.Errorf("probs %v", resp.Probs)
	}
	if resp.Choice != "" { // check_ans: " D" without ')' is not exactly "D"
		t.Errorf("MLVU choice %q", resp.Choice)
	}
	msgs := got["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if len(msgs) != 3 || last["role"] != "assistant" || last["content"] != "Best Option: (" ||
		got["continue_final_message"] != true || got["add_generation_prompt"] != false {
		t.Errorf("prefill: %v", got)
	}
}

func TestErrorBodies(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   error
	}{
		{400, vllmTooManyImages, llm.ErrTooManyImages},
		{400, vllmContextLong, llm.ErrContextTooLong},
		{400, sglangContextLong, llm.ErrContextTooLong},
		{404, ollamaError, llm.ErrBadRequest},
	}
	for _, tc := range cases {
		var calls atomic.Int32
		s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
			calls.Add(1)
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		})
		c := client(t, s, Options{Retries: 3})
		r := req4
		_, err := c.Answer(context.Background(), &r)
		var se *StatusError
		if !errors.Is(err, tc.want) || !errors.As(err, &se) || se.Status != tc.status || se.Message == "" {
			t.Errorf("%d %s: err = %v", tc.status, tc.body, err)
		}
		if calls.Load() != 1 {
			t.Errorf("4xx retried: %d calls", calls.Load())
		}
		if !strings.Contains(err.Error(), s.URL) {
			t.Errorf("error does not name the server: %v", err)
		}
	}
}

func TestRetry5xxThenSuccess(t *testing.T) {
	var calls atomic.Int32
	s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		if calls.Add(1) <= 2 {
			w.WriteHeader(500)
			io.WriteString(w, qwen3Metadata500)
			return
		}
		io.WriteString(w, vllmReply)
	})
	c := client(t, s, Options{Retries: 3})
	r := req4
	resp, err := c.Answer(context.Background(), &r)
	if err != nil || resp.Choice != "B" || calls.Load() != 3 {
		t.Fatalf("resp %+v err %v calls %d", resp, err, calls.Load())
	}
	// Retries exhausted: the last 5xx is reported as ErrServer with its message.
	calls.Store(-100)
	c2 := client(t, s, Options{Retries: 1})
	_, err = c2.Answer(context.Background(), &r)
	var se *StatusError
	if !errors.Is(err, llm.ErrServer) || !errors.As(err, &se) || !strings.Contains(se.Message, "total_num_frames") || calls.Load() != -98 {
		t.Errorf("err %v calls %d", err, calls.Load())
	}
}

func TestTimeoutRetriedAndConcurrencyLimit(t *testing.T) {
	var calls, inflight, peak atomic.Int32
	s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		n := calls.Add(1)
		cur := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		if n == 1 {
			select { // first attempt hangs past the client timeout
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, vllmReply)
	})
	// 1 s per attempt: generous for the 20 ms replies on a loaded CI machine, short for the hung first one.
	c := client(t, s, Options{Timeout: time.Second, Retries: 2, Concurrency: 2})
	r := req4
	if _, err := c.Answer(context.Background(), &r); err != nil {
		t.Fatalf("timeout not retried: %v", err)
	}
	done := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			r := req4
			_, err := c.Answer(context.Background(), &r)
			done <- err
		}()
	}
	for i := 0; i < 6; i++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if peak.Load() > 2 {
		t.Errorf("%d requests in flight, limit 2", peak.Load())
	}
}

func TestNoLogprobsAndBadSpecs(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		io.WriteString(w, `{"choices":[{"message":{"content":"The answer is C"}}],"usage":{}}`)
	})
	c := client(t, s, Options{})
	r := req4
	resp, err := c.Answer(context.Background(), &r)
	if err != nil || resp.Probs != nil || resp.Choice != "C" {
		t.Errorf("%+v %v", resp, err)
	}
	c.Close()
	c.Close()
	if _, err := c.Answer(context.Background(), &r); !errors.Is(err, llm.ErrClosed) {
		t.Errorf("after close: %v", err)
	}
	reg := llm.Registry{"openai": Open}
	for _, spec := range []string{"openai:url=ftp://x/v1,model=m", "openai:url=http://h:1/v1", "openai:url=http://h:1/v1,model=m,image=webp",
		"openai:url=http://h:1/v1,model=m,concurrency=0", "openai:url=http://h:1/v1,model=m,timeout=soon", "openai:url=http://h:1/v1,model=m,bogus=1",
		"openai:url=http://h:1/v1,model=m,concurrency=1000000000", "openai:url=http://h:1/v1,model=m,top_logprobs=21", "openai:url=http://h:1/v1,model=m,timeout=1000h"} {
		if _, err := reg.Open(spec); !errors.Is(err, llm.ErrBadSpec) {
			t.Errorf("%s: %v", spec, err)
		}
	}
}

func TestConnectionRefused(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	url := s.URL
	s.Close()
	c, _ := New(url+"/v1", "m", Options{Retries: 1, Backoff: time.Millisecond})
	r := req4
	_, err := c.Answer(context.Background(), &r)
	if !errors.Is(err, llm.ErrServer) {
		t.Errorf("err = %v", err)
	}
}

// A request the caller cancels mid-flight returns the context's error, not a server error, and is not retried.
func TestCancelIsNotAServerError(t *testing.T) {
	var calls atomic.Int32
	s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	c := client(t, s, Options{Retries: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r := req4
	_, err := c.Answer(ctx, &r)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, llm.ErrServer) || calls.Load() != 1 {
		t.Errorf("err %v after %d calls, want the context's deadline after 1", err, calls.Load())
	}
}

// A 200 whose body is not chat-completion JSON (a proxy's login page, say) is a typed error naming the
// URL, and is not retried: the same request would get the same page.
func TestBadReplyNotRetried(t *testing.T) {
	var calls atomic.Int32
	s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>Sign in to continue</body></html>")
	})
	c := client(t, s, Options{Retries: 3})
	r := req4
	_, err := c.Answer(context.Background(), &r)
	var le *llm.Error
	if !errors.Is(err, llm.ErrBadResponse) || errors.Is(err, llm.ErrServer) || !errors.As(err, &le) ||
		le.Path != s.URL+"/v1/chat/completions" || !strings.Contains(err.Error(), "Sign in") || calls.Load() != 1 {
		t.Errorf("err %v after %d calls, want ErrBadResponse naming the URL after 1", err, calls.Load())
	}
	// Valid JSON without choices is the same kind of fault.
	s2 := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		io.WriteString(w, `{"object":"list","data":[]}`)
	})
	_, err = client(t, s2, Options{Retries: 3}).Answer(context.Background(), &r)
	if !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), s2.URL) {
		t.Errorf("no choices: %v", err)
	}
}

// TestImageFormat: frames reach the server as lossless PNG unless the spec asks for JPEG
// (image_format=jpeg,quality=N), and the response records which encoding was used.
func TestImageFormat(t *testing.T) {
	var url string
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		msgs := body["messages"].([]any)
		var parts []any
		if p, ok := msgs[0].(map[string]any)["content"].([]any); ok {
			parts = p
		}
		var urls []string
		for _, p := range parts {
			if iu, ok := p.(map[string]any)["image_url"]; ok {
				urls = append(urls, iu.(map[string]any)["url"].(string))
			}
		}
		url = strings.Join(urls, " ")
		io.WriteString(w, vllmReply)
	})
	f := frame()
	decodeURL := func(t *testing.T, u, mime string) image.Image {
		t.Helper()
		prefix := "data:" + mime + ";base64,"
		if !strings.HasPrefix(u, prefix) {
			t.Fatalf("image url %.40q…: want %s", u, prefix)
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(u, prefix))
		if err != nil {
			t.Fatal(err)
		}
		im, _, err := image.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return im
	}
	for _, c := range []struct {
		spec, mime, format string
	}{
		{"", "image/png", "png"},
		{",image_format=png", "image/png", "png"},
		{",image_format=jpeg,quality=80", "image/jpeg", "jpeg:q=80"},
		{",image_format=jpeg", "image/jpeg", "jpeg:q=95"},
		{",image=jpeg,quality=70", "image/jpeg", "jpeg:q=70"}, // the key's former name
	} {
		t.Run(c.format+c.spec, func(t *testing.T) {
			rt, err := llm.Registry{"openai": Open}.Open("openai:url=" + s.URL + "/v1,model=m" + c.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			r := req4
			r.Frames = []*rgb.Image{f}
			resp, err := rt.Answer(context.Background(), &r)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ImageFormat != c.format {
				t.Errorf("response image_format %q, want %q", resp.ImageFormat, c.format)
			}
			im := decodeURL(t, url, c.mime)
			if c.mime == "image/png" {
				// Lossless: the server gets the frame's exact pixels.
				got := piloracle.FromImage(im)
				if got.W != f.W || got.H != f.H || !bytes.Equal(got.Packed(), f.Packed()) {
					t.Errorf("PNG frame differs from the source frame")
				}
			}
			text, err := rt.Answer(context.Background(), &llm.Request{Question: "Q?", Options: req4.Options})
			if err != nil || text.ImageFormat != "" {
				t.Errorf("text-only: %v, image_format %q (want none)", err, text.ImageFormat)
			}
		})
	}
	for _, bad := range []string{",quality=80", ",image_format=webp", ",image_format=jpeg,quality=101", ",image=png,image_format=png"} {
		if _, err := (llm.Registry{"openai": Open}).Open("openai:url=" + s.URL + "/v1,model=m" + bad); !errors.Is(err, llm.ErrBadSpec) {
			t.Errorf("spec %q: %v, want ErrBadSpec", bad, err)
		}
	}
}
