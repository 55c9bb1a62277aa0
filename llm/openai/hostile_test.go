package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framesweep/framesweep/llm"
)

// TestMalformedReplies: a 200 whose body is JSON but no chat completion the client can take — no
// choices, a null or empty choice, a completions-API text, a null content, a negative count, a null,
// positive or out-of-range logprob — is llm.ErrBadResponse naming the fault, after one request (the
// same request gets the same body), never an answer. The shapes real servers send still answer.
func TestMalformedReplies(t *testing.T) {
	bad := []struct{ body, want string }{
		{`{}`, "no choices"},
		{`{"choices":[]}`, "no choices"},
		{`{"choices":null}`, "no choices"},
		{`{"choices":[null]}`, "choices[0] is null"},
		{`{"choices":[{}]}`, "has no message"},
		{`{"choices":[{"text":"A","index":0}]}`, "has a text and no message"},
		{`{"choices":[{"message":null}]}`, "has no message"},
		{`{"choices":[{"message":{"role":"assistant"}}]}`, "content is null or missing"},
		{`{"choices":[{"message":{"content":null}}]}`, "content is null or missing"},
		{`{"choices":[{"message":{"content":["A"]}}]}`, "not chat-completion JSON"},
		{`{"choices":[{"message":{"content":"A"}}],"usage":{"prompt_tokens":-5}}`, "usage.prompt_tokens -5 is negative"},
		{`{"choices":[{"message":{"content":"A"}}],"usage":{"completion_tokens":-1}}`, "usage.completion_tokens -1 is negative"},
		{`{"choices":[{"message":{"content":"A"}}],"usage":{"prompt_tokens":1.5}}`, "not chat-completion JSON"},
		{`{"choices":[{"message":{"content":"A"}}],"usage":{"prompt_tokens":"12"}}`, "not chat-completion JSON"},
		{`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":null,"top_logprobs":[]}]}}]}`, "logprob is null"},
		{`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":0.5,"top_logprobs":[]}]}}]}`, "0.5 is above 0"},
		{`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":-0.1,"top_logprobs":[{"token":"B","logprob":null}]}]}}]}`, "top_logprobs[0].logprob is null"},
		{`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":-0.1,"top_logprobs":[{"token":"B","logprob":3}]}]}}]}`, "3 is above 0"},
		{`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":-1e999}]}}]}`, "not chat-completion JSON"},
		{`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":-Infinity}]}}]}`, "not chat-completion JSON"},
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
		if resp != nil || !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), tc.want) || calls.Load() != 1 {
			t.Errorf("%s: resp %+v err %v after %d calls; want ErrBadResponse %q after 1", tc.body, resp, err, calls.Load(), tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), s.URL+"/v1/chat/completions")) {
			t.Errorf("%s: the error is not one line naming the URL: %v", tc.body, err)
		}
	}
	good := []struct {
		body, text string
		probs      bool
	}{
		{`{"choices":[{"message":{"content":"C"}}]}`, "C", false},
		{`{"choices":[{"message":{"content":"C"}}],"usage":null}`, "C", false},
		{`{"choices":[{"message":{"content":""}}],"usage":{"prompt_tokens":null}}`, "", false}, // an empty answer is an answer
		{`{"choices":[{"message":{"content":"B"},"logprobs":null,"finish_reason":null}]}`, "B", false},
		{`{"choices":[{"message":{"content":"B"},"logprobs":{"content":[{"token":"B","logprob":0,"top_logprobs":[{"token":"B","logprob":0},{"token":"A","logprob":-9999}]}]}}]}`, "B", true},
		{vllmReply, "B", true},
		{sglangReply, " D", true},
	}
	for _, tc := range good {
		body.Store(tc.body)
		r := req4
		resp, err := c.Answer(context.Background(), &r)
		if err != nil || resp.Text != tc.text || (resp.Probs != nil) != tc.probs {
			t.Errorf("%s: %+v %v", tc.body, resp, err)
		}
		if err == nil && resp.Check(&r) != nil {
			t.Errorf("%s: the response fails its own check: %v", tc.body, resp.Check(&r))
		}
	}
}

// TestRateLimited: HTTP 429 is transient, as 503: retried after the server's Retry-After (seconds or
// an HTTP-date) when it asks for longer than the backoff, each wait at most MaxWait, and after the
// retries an llm.ErrServer carrying the status.
func TestRateLimited(t *testing.T) {
	var calls atomic.Int32
	var header atomic.Value
	limitFirst := atomic.Int32{}
	s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		if calls.Add(1) <= limitFirst.Load() {
			if h := header.Load().(string); h != "" {
				w.Header().Set("Retry-After", h)
			}
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"rate limit exceeded","type":"rate_limit"}}`)
			return
		}
		io.WriteString(w, vllmReply)
	})
	for _, tc := range []struct {
		name, header string
		atLeast      time.Duration
	}{
		{"seconds", "1", 900 * time.Millisecond},
		// An HTTP-date has whole seconds: 2 s ahead is at least 1 s ahead when it is read.
		{"http-date", "date", 900 * time.Millisecond},
		{"none", "", 0},
	} {
		calls.Store(0)
		limitFirst.Store(1)
		if tc.header == "date" {
			tc.header = time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)
		}
		header.Store(tc.header)
		c := client(t, s, Options{Retries: 2})
		r := req4
		t0 := time.Now()
		resp, err := c.Answer(context.Background(), &r)
		if el := time.Since(t0); err != nil || resp.Choice != "B" || calls.Load() != 2 || el < tc.atLeast {
			t.Errorf("%s: %v after %d calls and %v (want an answer after 2, at least %v)", tc.name, err, calls.Load(), el, tc.atLeast)
		}
	}
	// A Retry-After of an hour waits MaxWait; retries are bounded: 1 + retries calls, then the 429.
	calls.Store(0)
	limitFirst.Store(1000)
	header.Store("3600")
	c := client(t, s, Options{Retries: 2, MaxWait: 50 * time.Millisecond})
	r := req4
	t0 := time.Now()
	_, err := c.Answer(context.Background(), &r)
	var se *StatusError
	if !errors.Is(err, llm.ErrServer) || !errors.As(err, &se) || se.Status != 429 || se.RetryAfter != time.Hour || calls.Load() != 3 {
		t.Errorf("always 429: %v after %d calls (want ErrServer HTTP 429 after 3)", err, calls.Load())
	}
	if el := time.Since(t0); el > 20*time.Second {
		t.Errorf("Retry-After 3600 with MaxWait 50 ms took %v", el)
	}
	if _, err := (llm.Registry{"openai": Open}).Open("openai:url=" + s.URL + "/v1,model=m,retries=21"); !errors.Is(err, llm.ErrBadSpec) {
		t.Errorf("retries=21: %v, want ErrBadSpec (at most %d)", err, MaxRetries)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"": 0, "0": 0, "7": 7 * time.Second, " 7 ": 7 * time.Second, "-3": 0, "1.5": 0, "soon": 0,
		"99999999999999999999": 0, "999999999": 24 * time.Hour,
		"Sat, 01 Mar 2025 12:00:30 GMT": 30 * time.Second, "Sat, 01 Mar 2025 11:00:00 GMT": 0,
		"Saturday, 01-Mar-25 12:01:00 GMT": time.Minute,
	} {
		if got := parseRetryAfter(h, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", h, got, want)
		}
	}
}

// TestRedirects: a redirect of the POST to another origin is refused, and the frames never reach the
// other server; one that turns the POST into a GET is refused too; a 307 within the origin is
// followed. A refused redirect is not retried (the spec's url= is wrong).
func TestRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		io.WriteString(w, vllmReply)
	}))
	defer other.Close()
	var calls atomic.Int32
	var status atomic.Int32
	var target atomic.Value
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/chat/completions" && r.Method == http.MethodPost {
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, vllmReply)
			return
		}
		calls.Add(1)
		http.Redirect(w, r, target.Load().(string), int(status.Load()))
	}))
	defer s.Close()
	for _, tc := range []struct {
		status int
		to     string
		ok     bool
		want   string
	}{
		{307, other.URL + "/v1/chat/completions", false, "another origin"},
		{308, other.URL + "/v1/chat/completions?token=secret", false, "another origin"},
		{307, "/v2/chat/completions", true, ""},
		{308, s.URL + "/v2/chat/completions", true, ""},
		{302, "/v2/chat/completions", false, "turns the POST into a GET"},
		{303, other.URL + "/v1/chat/completions", false, "another origin"},
	} {
		calls.Store(0)
		status.Store(int32(tc.status))
		target.Store(tc.to)
		c, err := New(s.URL+"/v1", "m", Options{Retries: 3, Backoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		r := req4
		resp, err := c.Answer(context.Background(), &r)
		c.Close()
		switch {
		case tc.ok && (err != nil || resp.Choice != "B"):
			t.Errorf("%d to %s: %v, want the answer", tc.status, tc.to, err)
		case !tc.ok && (!errors.Is(err, llm.ErrBadRequest) || !strings.Contains(fmt.Sprint(err), tc.want) || calls.Load() != 1):
			t.Errorf("%d to %s: %v after %d calls, want ErrBadRequest %q after 1", tc.status, tc.to, err, calls.Load(), tc.want)
		case strings.Contains(fmt.Sprint(err), "secret"):
			t.Errorf("the error shows the redirect's query: %v", err)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
}

// TestReplyMemoryBounded: replies of 100 MB are refused past MaxReplyBytes (a clear ErrBadResponse,
// the body not read further), and 8 of them at once do not hold 8 × 100 MB: beyond the first MiB of
// each, one reply at a time holds memory. The Go heap's peak over the 8 requests stays within a
// bound a client reading them whole (or each up to its cap at once) would pass several times over.
func TestReplyMemoryBounded(t *testing.T) {
	const huge = 100 << 20
	chunk := []byte(strings.Repeat("A", 64<<10))
	var mu sync.Mutex
	var written []int64
	s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		var n int64
		defer func() { mu.Lock(); written = append(written, n); mu.Unlock() }()
		k, err := io.WriteString(w, `{"choices":[{"message":{"content":"`)
		n += int64(k)
		for err == nil && n < huge {
			k, err = w.Write(chunk)
			n += int64(k)
		}
		if err == nil {
			io.WriteString(w, `"}}]}`)
		}
	})
	c := client(t, s, Options{Concurrency: 8})
	errs := make([]error, 8)
	grew := heapGrowth(func() {
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := req4
				_, errs[i] = c.Answer(context.Background(), &r)
			}()
		}
		wg.Wait()
	})
	for i, err := range errs {
		if !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(fmt.Sprint(err), "over 16 MiB") {
			t.Errorf("reply %d of 100 MB: %v, want ErrBadResponse over 16 MiB", i, err)
		}
	}
	t.Logf("heap in use grew by at most %d MiB over 8 concurrent 100 MB replies", grew>>20)
	// Held at once: 8 × (up to 2 MiB for a first MiB) + one reply of up to 16 MiB (its buffer doubling
	// to 32), and the garbage the collector has not reclaimed yet (122–148 MiB measured); a client
	// reading the 8 at once up to a 64 MiB cap each, as before, holds 512 MiB or more.
	if grew > 256<<20 {
		t.Errorf("heap grew by %d MiB (want ≤ 256 MiB)", grew>>20)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, n := range written {
		if n >= huge {
			t.Errorf("a 100 MB reply was read whole (%d bytes written)", n)
		}
	}
	// A reply over the first MiB but within the cap is read whole and answers.
	big := `{"choices":[{"message":{"content":"B ` + strings.Repeat("x", 3<<20) + `"}}]}`
	s2 := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) { io.WriteString(w, big) })
	r := req4
	resp, err := client(t, s2, Options{}).Answer(context.Background(), &r)
	if err != nil || len(resp.Text) != 3<<20+2 {
		t.Errorf("a 3 MiB reply: %v", err)
	}
}

// heapGrowth runs f and returns how far the Go heap in use rose above its level before f, at most
// (sampled every 5 ms).
func heapGrowth(f func()) int64 {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak.Store(max(peak.Load(), m.HeapInuse))
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return int64(peak.Load()) - int64(base.HeapInuse)
}

// TestStopSendsNothingNew: once the caller's stop (llm.WithStop) is closed, an answer waiting for its
// turn returns llm.ErrStopped without a request, and a failed attempt is not retried; the request in
// flight goes on until the caller's context ends.
func TestStopSendsNothingNew(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	started := make(chan struct{}, 8)
	s := server(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		calls.Add(1)
		if fail.Load() {
			w.WriteHeader(503)
			return
		}
		started <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	c := client(t, s, Options{Concurrency: 1, Retries: 3})
	stop := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sctx := llm.WithStop(ctx, stop)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			r := req4
			_, err := c.Answer(sctx, &r)
			errs <- err
		}()
	}
	<-started // one in flight, the other waiting for the one slot
	close(stop)
	if err := <-errs; !errors.Is(err, llm.ErrStopped) || !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting answer after a stop: %v, want ErrStopped", err)
	}
	select {
	case err := <-errs:
		t.Fatalf("the answer in flight ended before its context: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) || calls.Load() != 1 {
		t.Fatalf("in flight, cancelled: %v after %d calls (want 1)", err, calls.Load())
	}
	// A stop during the backoff after a 503 sends no retry.
	fail.Store(true)
	calls.Store(0)
	stop2 := make(chan struct{})
	c2, err := New(s.URL+"/v1", "m", Options{Retries: 3, Backoff: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	go func() {
		for calls.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		close(stop2)
	}()
	r := req4
	_, err = c2.Answer(llm.WithStop(context.Background(), stop2), &r)
	if !errors.Is(err, llm.ErrServer) || calls.Load() != 1 {
		t.Fatalf("a 503 then a stop: %v after %d calls, want the 503 after 1", err, calls.Load())
	}
}

// FuzzDecodeReply: whatever a server's 200 body, decodeReply never panics, and a body it accepts
// gives a response every reader accepts (llm.Response.Check): no negative count, probabilities in
// [0,1] of the options' letters.
func FuzzDecodeReply(f *testing.F) {
	for _, s := range []string{vllmReply, sglangReply, `{"choices":[{"message":{"content":"A"}}]}`, `{"choices":[null]}`,
		`{"choices":[{"message":{"content":"A"}}],"usage":{"prompt_tokens":-5}}`,
		`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":0,"top_logprobs":[{"token":" B","logprob":-1e308}]}]}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := decodeReply(200, b)
		if err != nil {
			if !errors.Is(err, llm.ErrBadResponse) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: %v (want a one-line ErrBadResponse)", b, err)
			}
			return
		}
		r := req4
		resp := &llm.Response{}
		out.fill(resp, &r)
		if err := resp.Check(&r); err != nil {
			t.Fatalf("%q: accepted, but the response fails its check: %v", b, err)
		}
	})
}
