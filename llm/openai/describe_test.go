package openai

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/ollamatest"
	"github.com/framesweep/framesweep/llm"
)

// TestDescribeRealServer: a real OpenAI-compatible server (ollama serving the tiny model) lists the
// model, and Describe names it as the server does.
func TestDescribeRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the ollama server")
	}
	url := ollamatest.Start(t, ollamatest.Build(t))
	c, err := New(url, "tiny", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Describe(context.Background())
	if err != nil || info.ID != "tiny:latest" {
		t.Fatalf("describe: %+v %v", info, err)
	}
	other, _ := New(url, "absent", Options{})
	if _, err := other.Describe(context.Background()); !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), "tiny:latest") {
		t.Errorf("a model the server does not list: %v", err)
	}
}

// TestDescribeReplies: the forms of GET /v1/models Describe reads — vLLM's and SGLang's entries with
// max_model_len (the context the model is served with) — and the replies it refuses, each an error of
// its kind naming the URL.
func TestDescribeReplies(t *testing.T) {
	reply := ""
	status := http.StatusOK
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(reply))
	}))
	defer s.Close()
	c, err := New(s.URL+"/v1", "Qwen/Qwen2.5-VL-7B-Instruct", Options{})
	if err != nil {
		t.Fatal(err)
	}
	reply = `{"object":"list","data":[{"id":"other","object":"model","max_model_len":4096},{"id":"Qwen/Qwen2.5-VL-7B-Instruct","object":"model","root":"/models/qwen","max_model_len":32768}]}`
	if info, err := c.Describe(context.Background()); err != nil || info.ID != "Qwen/Qwen2.5-VL-7B-Instruct" || info.ContextTokens != 32768 {
		t.Errorf("vLLM list: %+v %v", info, err)
	}
	reply = `{"data":[{"id":"Qwen/Qwen2.5-VL-7B-Instruct"}]}`
	if info, err := c.Describe(context.Background()); err != nil || info.ContextTokens != 0 {
		t.Errorf("no max_model_len: %+v %v", info, err)
	}
	for _, tc := range []struct {
		status int
		reply  string
		kind   error
	}{{200, `{"data":[{"id":"other"}]}`, llm.ErrBadResponse}, {200, `<html>proxy</html>`, llm.ErrBadResponse}, {404, `not found`, llm.ErrServer}} {
		status, reply = tc.status, tc.reply
		if _, err := c.Describe(context.Background()); !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), s.URL) {
			t.Errorf("HTTP %d %s: %v (want %v)", tc.status, tc.reply, err, tc.kind)
		}
	}
}
