package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/framesweep/framesweep/llm"
)

// TestAmbiguousReplies: a chat completion with a key twice (last wins in encoding/json) or a key in
// other letters than the field the client reads (CHOICES, MESSAGE, Content: encoding/json matches
// them without regard to case) is llm.ErrBadResponse naming the key and where it is, after one
// request, never an answer; keys the client does not read may be in any letters, once each.
func TestAmbiguousReplies(t *testing.T) {
	bad := []struct{ body, want string }{
		{`{"choices":[{"message":{"content":"A"}}],"choices":[{"message":{"content":"B"}}]}`, `key "choices" twice at $`},
		{`{"CHOICES":[{"message":{"content":"B"}}]}`, `key "CHOICES" at $ is "choices" in other letters`},
		{`{"choices":[{"MESSAGE":{"content":"B"}}]}`, `key "MESSAGE" at $.choices[0] is "message" in other letters`},
		{`{"choices":[{"message":{"content":"A","Content":"B"}}]}`, `key "Content" at $.choices[0].message`},
		{`{"choices":[{"message":{"content":"A","content":"B"}}]}`, `key "content" twice at $.choices[0].message`},
		{`{"choices":[{"message":{"content":"A"}}],"usage":{"prompt_tokens":5,"prompt_tokens":50000}}`, `key "prompt_tokens" twice at $.usage`},
		{`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":-0.1,"top_logprobs":[{"token":"B","logprob":-5,"logprob":-0.01}]}]}}]}`,
			`key "logprob" twice at $.choices[0].logprobs.content[0].top_logprobs[0]`},
		{`{"choices":[{"message":{"content":"A"}}],"system_fingerprint":"x","system_fingerprint":"y"}`, `key "system_fingerprint" twice`},
		{`{"choices":[{"message":{"content":"A"}}],"uſage":{"prompt_tokens":1}}`, `is "usage" in other letters`}, // ſ folds to s
	}
	var body atomic.Value
	var calls atomic.Int32
	s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		calls.Add(1)
		io.WriteString(w, body.Load().(string))
	})
	c := client(t, s, Options{Retries: 3})
	for _, tc := range bad {
		body.Store(tc.body)
		calls.Store(0)
		r := req4
		resp, err := c.Answer(context.Background(), &r)
		if resp != nil || !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), tc.want) || calls.Load() != 1 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: resp %+v err %v after %d calls; want ErrBadResponse %q after 1", tc.body, resp, err, calls.Load(), tc.want)
		}
	}
	for _, ok := range []string{
		`{"id":"x","Object":"chat.completion","choices":[{"message":{"content":"B","role":"assistant","Extra":1}}]}`,
		vllmReply, sglangReply,
	} {
		body.Store(ok)
		r := req4
		if resp, err := c.Answer(context.Background(), &r); err != nil || resp == nil {
			t.Errorf("%.60s: %v", ok, err)
		}
	}
}

// TestAmbiguousModelList: a model list whose entry gives max_model_len twice or in other letters (or
// whose data or id is spelt otherwise) is no context size: llm.ErrBadResponse naming the key.
func TestAmbiguousModelList(t *testing.T) {
	reply := ""
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, reply) }))
	defer s.Close()
	c, err := New(s.URL+"/v1", "m", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct{ body, want string }{
		{`{"data":[{"id":"m","max_model_len":4096,"max_model_len":1048576}]}`, `key "max_model_len" twice at $.data[0]`},
		{`{"data":[{"id":"m","MAX_MODEL_LEN":1048576}]}`, `key "MAX_MODEL_LEN" at $.data[0] is "max_model_len" in other letters`},
		{`{"DATA":[{"id":"m","max_model_len":4096}]}`, `key "DATA" at $ is "data" in other letters`},
		{`{"data":[{"ID":"m","max_model_len":4096}]}`, `key "ID" at $.data[0]`},
	} {
		reply = tc.body
		if info, err := c.Describe(context.Background()); !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %+v %v; want ErrBadResponse %q", tc.body, info, err, tc.want)
		}
	}
	reply = `{"object":"list","data":[{"id":"m","object":"model","Owned_By":"x","max_model_len":4096}]}`
	if info, err := c.Describe(context.Background()); err != nil || info.ContextTokens != 4096 {
		t.Errorf("a plain list: %+v %v", info, err)
	}
}
