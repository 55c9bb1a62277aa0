package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/openai"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// The server-reply tests run the real openai client against an OpenAI-compatible server of their own
// on 127.0.0.1 (net/http/httptest): the client's whole HTTP path, with replies no real server sends
// on demand. TestSweepOpenAI runs the same client against a real server (ollama).

// okReply is a valid chat completion answering "A" with logprobs.
const okReply = `{"choices":[{"message":{"role":"assistant","content":"A"},"logprobs":{"content":[{"token":"A","logprob":-0.1,` +
	`"top_logprobs":[{"token":"A","logprob":-0.1},{"token":"B","logprob":-2.4}]}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":1}}`

// replyServer is an OpenAI-compatible server on 127.0.0.1 that lists model "m" and answers each chat
// request with reply(its body): status, headers and body.
type replyServer struct {
	*httptest.Server
	requests atomic.Int64
}

type reply struct {
	status int
	header map[string]string
	body   string
}

func newReplyServer(t testing.TB, answer func(ctx context.Context, body string) reply) *replyServer {
	t.Helper()
	rs := &replyServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"object":"list","data":[{"id":"m"}]}`)
			return
		}
		b, _ := io.ReadAll(r.Body)
		rs.requests.Add(1)
		rep := answer(r.Context(), string(b))
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if rep.status != 0 {
			w.WriteHeader(rep.status)
		}
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(rs.Close)
	return rs
}

// openaiOptions are sweep options for the openai client on rs with spec keys extra, over a grid of
// one 2-frame config and the text-only one.
func openaiOptions(t *testing.T, rs *replyServer, extra string) Options {
	t.Helper()
	raw := "openai:url=" + rs.URL + "/v1,model=m" + extra
	sp, err := llm.ParseSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := openai.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	grid := writeGrid(t, "frames: [2]\npolicies: [uniform]\nresolutions: [\"64x48\"]\npipelines: [raw]\ntext_only: true\n")
	return testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, grid)
}

// questionOf is the item whose question the request body carries ("" when none).
func questionOf(its []items.Item, body string) string {
	for _, it := range its {
		if strings.Contains(body, it.Question) {
			return it.ItemID
		}
	}
	return ""
}

// TestSweepBadReplies: every reply that is not a valid chat completion — a completions-API text, an
// empty or null choice, a null content, no choices, a negative count, a null or positive logprob —
// is an error record of its pair (error_kind runtime, the fault named), never an answer; the session
// goes on and exits with the other pairs answered; every record passes the validator; --resume then
// proceeds (it does not ask those pairs again: the same request gets the same reply).
func TestSweepBadReplies(t *testing.T) {
	t.Parallel()
	hostile := map[string]struct{ body, want string }{
		"bear-1": {`{"choices":[{"text":"A","index":0}]}`, "has a text and no message"},
		"bear-2": {`{"choices":[{}]}`, "has no message"},
		"bear-3": {`{"choices":[null]}`, "choices[0] is null"},
		"h265-1": {`{"choices":[{"message":{"content":null}}]}`, "content is null"},
		"h265-2": {`{"choices":[]}`, "no choices"},
		"h265-3": {`{"choices":[{"message":{"content":"A"}}],"usage":{"prompt_tokens":-5,"completion_tokens":1}}`, "usage.prompt_tokens -5"},
		"nasa-1": {`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":null,"top_logprobs":[]}]}}]}`, "logprob is null"},
		"nasa-2": {`{"choices":[{"message":{"content":"A"},"logprobs":{"content":[{"token":"A","logprob":0.7,"top_logprobs":[]}]}}]}`, "0.7 is above 0"},
	}
	var its []items.Item
	rs := newReplyServer(t, func(_ context.Context, body string) reply {
		if h, ok := hostile[questionOf(its, body)]; ok {
			return reply{body: h.body}
		}
		return reply{body: okReply}
	})
	o := openaiOptions(t, rs, "")
	its = o.Items.Items
	ctx := context.Background()
	sum, err := Run(ctx, nil, o)
	nc, bad := len(o.Grid.Configs), len(hostile)
	if err != nil || sum.PairsFailed != bad*nc || sum.PairsDone != (len(its)-bad)*nc {
		t.Fatalf("a session with %d hostile items: %+v %v", bad, sum, err)
	}
	for k, r := range readRun(t, o.Out) {
		h, isBad := hostile[k.Item]
		switch {
		case isBad && (r.Status != record.StatusError || r.ErrorKind != record.ErrorRuntime || !strings.Contains(r.Error, h.want) ||
			r.PromptTokens != 0 || r.Probs != nil || r.Response != ""):
			t.Errorf("%v: status %s kind %q error %q tokens %d probs %v: want a runtime error naming %q and nothing of the reply",
				k, r.Status, r.ErrorKind, r.Error, r.PromptTokens, r.Probs, h.want)
		case !isBad && (r.Status != record.StatusOK || r.Prediction != "A" || r.PromptTokens != 40):
			t.Errorf("%v: %+v", k, r)
		}
	}
	if _, err := record.ReadPaths([]string{o.Out}); err != nil {
		t.Fatalf("the audit refuses the RUN: %v", err)
	}
	n := rs.requests.Load()
	o.Resume = true
	sum, err = Run(ctx, nil, o)
	if err != nil || sum.PairsDone != 0 || sum.PairsRecorded != len(its)*nc || rs.requests.Load() != n {
		t.Fatalf("resume: %+v %v (%d requests)", sum, err, rs.requests.Load()-n)
	}
}

// badRuntime answers every request with resp, as a runtime that does not check its replies would.
type badRuntime struct{ resp llm.Response }

func (b *badRuntime) Answer(context.Context, *llm.Request) (*llm.Response, error) {
	r := b.resp
	return &r, nil
}
func (b *badRuntime) Close() error { return nil }

// TestSweepChecksResponses: whatever the runtime, the sweep checks a response before copying any of
// it (llm.Response.Check): a negative count, a probability outside [0,1] or of a letter no option has
// is the pair's error record (one the validator accepts), not a session stopped by the validator.
func TestSweepChecksResponses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		resp llm.Response
		want string
	}{
		{llm.Response{Text: "A", Choice: "A", PromptTokens: -5}, "prompt_tokens -5"},
		{llm.Response{Text: "A", Choice: "A", CompletionTokens: -1}, "completion_tokens -1"},
		{llm.Response{Text: "A", Choice: "A", Probs: map[string]float64{"A": 1.5}}, "probability of \"A\" is 1.5"},
		{llm.Response{Text: "A", Choice: "A", Probs: map[string]float64{"Z": 1}}, "\"Z\", which is no option's letter"},
		{llm.Response{Text: "A", Choice: "A", VisualTokens: -2}, "visual_tokens -2"},
		{llm.Response{Text: "A", Choice: "A", VisualCheck: &llm.VisualCheck{Expected: new(int), Overhead: -1}}, "visual check"},
	} {
		grid := writeGrid(t, "frames: [2]\npolicies: [uniform]\nresolutions: [\"64x48\"]\npipelines: [raw]\ntext_only: true\n")
		o := testOptions(t, filepath.Join(t.TempDir(), "run"), &badRuntime{resp: tc.resp}, llm.Spec{Engine: "fake", Raw: "fake:"}, grid)
		o.Limit = 2
		sum, err := Run(context.Background(), nil, o)
		if err != nil || sum.PairsFailed != 2*len(o.Grid.Configs) {
			t.Fatalf("%s: %+v %v", tc.want, sum, err)
		}
		for k, r := range readRun(t, o.Out) {
			if r.Status != record.StatusError || r.ErrorKind != record.ErrorRuntime || !strings.Contains(r.Error, tc.want) {
				t.Errorf("%s: %v: %s %q %q", tc.want, k, r.Status, r.ErrorKind, r.Error)
			}
		}
		o.Resume = true
		if _, err := Run(context.Background(), nil, o); err != nil {
			t.Fatalf("%s: resume: %v", tc.want, err)
		}
	}
}

// TestSweepRateLimitedResume: a server that answers 429 (with Retry-After) past the client's retries
// leaves transient error records, which --resume asks again; the client waited as asked between its
// attempts.
func TestSweepRateLimitedResume(t *testing.T) {
	t.Parallel()
	var limited atomic.Bool
	limited.Store(true)
	var mu sync.Mutex
	var its []items.Item
	last := map[string]time.Time{}
	var shortWait atomic.Int64
	rs := newReplyServer(t, func(_ context.Context, body string) reply {
		id := questionOf(its, body)
		if id != "bear-2" || !limited.Load() {
			return reply{body: okReply}
		}
		mu.Lock()
		if at, ok := last[body]; ok && time.Since(at) < 900*time.Millisecond {
			shortWait.Add(1) // the same request again, sooner than the server asked
		}
		last[body] = time.Now()
		mu.Unlock()
		return reply{status: 429, header: map[string]string{"Retry-After": "1"}, body: `{"error":{"message":"Too many requests"}}`}
	})
	o := openaiOptions(t, rs, ",retries=1,concurrency=1")
	its = o.Items.Items
	o.Limit = 3
	nc := len(o.Grid.Configs)
	sum, err := Run(context.Background(), nil, o)
	if err != nil || sum.PairsFailed != nc {
		t.Fatalf("first session: %+v %v", sum, err)
	}
	for k, r := range readRun(t, o.Out) {
		if (k.Item == "bear-2") != (r.Status == record.StatusError) || k.Item == "bear-2" && (r.ErrorKind != record.ErrorTransient || !strings.Contains(r.Error, "HTTP 429")) {
			t.Errorf("%v: %s %q %q", k, r.Status, r.ErrorKind, r.Error)
		}
	}
	if n := shortWait.Load(); n != 0 {
		t.Errorf("%d retries came sooner than the Retry-After of 1 s", n)
	}
	limited.Store(false)
	o.Resume = true
	sum, err = Run(context.Background(), nil, o)
	if err != nil || sum.PairsRetried != nc || sum.PairsDone != nc || sum.PairsFailed != 0 {
		t.Fatalf("resume: the 429 pairs are asked again: %+v %v", sum, err)
	}
}

// TestSweepDecodingIdentity: the sampling settings are run.json's decoding and each record's; a
// resume with another --temperature, --seed or --max-tokens is refused naming the flag (nothing is
// asked); the same settings resume; a run.json written before they were recorded resumes with a
// warning in its session.
func TestSweepDecodingIdentity(t *testing.T) {
	t.Parallel()
	rs := newReplyServer(t, func(context.Context, string) reply { return reply{body: okReply} })
	o := openaiOptions(t, rs, "")
	o.Limit, o.Temperature, o.Seed, o.MaxTokens = 2, 0.5, 7, 0
	if _, err := Run(context.Background(), nil, o); err != nil {
		t.Fatal(err)
	}
	want := record.Decoding{Temperature: 0.5, Seed: 7, MaxTokens: llm.DefaultMaxTokens}
	var ri runs.Info
	if err := json.Unmarshal(mustRead(t, filepath.Join(o.Out, "run.json")), &ri); err != nil || ri.Decoding == nil || *ri.Decoding != want {
		t.Fatalf("run.json decoding %+v (%v), want %+v", ri.Decoding, err, want)
	}
	for k, r := range readRun(t, o.Out) {
		if r.Decoding == nil || *r.Decoding != want {
			t.Fatalf("%v: decoding %+v, want %+v", k, r.Decoding, want)
		}
	}
	n := rs.requests.Load()
	o.Resume, o.Limit = true, 3
	for _, tc := range []struct {
		set  func(*Options)
		flag string
	}{
		{func(o *Options) { o.Temperature = 0 }, "--temperature 0.5 vs 0"},
		{func(o *Options) { o.Seed = 8 }, "--llm-seed 7 vs 8"},
		{func(o *Options) { o.MaxTokens = 3 }, "--max-tokens 32 vs 3"},
	} {
		oo := o
		tc.set(&oo)
		if _, err := Run(context.Background(), nil, oo); !errors.Is(err, runs.ErrMismatch) || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("resume with other settings: %v, want a refusal naming %q", err, tc.flag)
		}
	}
	if rs.requests.Load() != n {
		t.Fatalf("a refused resume asked %d pairs", rs.requests.Load()-n)
	}
	oo := o
	oo.MaxTokens = llm.DefaultMaxTokens // the default made explicit is the same setting
	if sum, err := Run(context.Background(), nil, oo); err != nil || sum.PairsDone != len(o.Grid.Configs) {
		t.Fatalf("resume with the same settings: %+v %v", sum, err)
	}
	// An older run.json (no decoding): resumed, with a warning naming what cannot be checked.
	var raw map[string]any
	path := filepath.Join(o.Out, "run.json")
	if err := json.Unmarshal(mustRead(t, path), &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "decoding")
	b, _ := json.Marshal(raw)
	testenv.WriteFile(t, path, b)
	o.Limit = 4
	if _, err := Run(context.Background(), nil, o); err != nil {
		t.Fatalf("resume of an older run.json: %v", err)
	}
	if err := json.Unmarshal(mustRead(t, path), &ri); err != nil {
		t.Fatal(err)
	}
	if w := ri.Sessions[len(ri.Sessions)-1].Warnings; len(w) != 1 || !strings.Contains(w[0], "records no sampling settings") {
		t.Errorf("session warnings %q", w)
	}
}

// TestSweepOpenAIConcurrencyDefault: an openai spec without concurrency= keeps the client's default
// of 4 requests in flight (as docs/runtimes.md says), not 1.
func TestSweepOpenAIConcurrencyDefault(t *testing.T) {
	t.Parallel()
	var inflight, peak atomic.Int64
	rs := newReplyServer(t, func(ctx context.Context, _ string) reply {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		// Hold each request until 4 are in flight (or 2 s: a sweep sending fewer still ends).
		for t0 := time.Now(); peak.Load() < 4 && time.Since(t0) < 2*time.Second && ctx.Err() == nil; {
			time.Sleep(5 * time.Millisecond)
		}
		return reply{body: okReply}
	})
	o := openaiOptions(t, rs, "")
	o.Jobs, o.Limit = 1, 3 // one video: 3 items × 2 configs
	if _, err := Run(context.Background(), nil, o); err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p != 4 {
		t.Errorf("%d requests in flight at most, want the default 4", p)
	}
}

// TestSweepStopGrace: after a stop nothing queued is sent; the answers in flight (to a server that
// stalls) have StopGrace and are then cancelled and left to --resume; Run returns soon after the
// grace; the resume answers every pair once.
func TestSweepStopGrace(t *testing.T) {
	t.Parallel()
	var stalled atomic.Bool
	stalled.Store(true)
	var mu sync.Mutex
	var arrivals []time.Time
	inFlight := make(chan struct{}, 64)
	rs := newReplyServer(t, func(ctx context.Context, _ string) reply {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		if stalled.Load() {
			inFlight <- struct{}{}
			select {
			case <-ctx.Done(): // the client gave up
			case <-time.After(30 * time.Second):
			}
		}
		return reply{body: okReply}
	})
	o := openaiOptions(t, rs, "")
	o.StopGrace = 300 * time.Millisecond
	stop := make(chan struct{})
	type result struct {
		sum *Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := Run(context.Background(), stop, o)
		done <- result{sum, err}
	}()
	for range 4 { // the default concurrency: 4 requests stalled in flight
		select {
		case <-inFlight:
		case <-time.After(60 * time.Second):
			t.Fatal("no 4 requests in flight")
		}
	}
	time.Sleep(100 * time.Millisecond) // let the rest queue up behind them
	stopped := time.Now()
	close(stop)
	var res result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run still going 20 s after the stop (grace 300 ms)")
	}
	took := time.Since(stopped)
	mu.Lock()
	after := 0
	for _, a := range arrivals {
		if a.After(stopped) {
			after++
		}
	}
	mu.Unlock()
	t.Logf("Run returned %v after the stop", took)
	if after != 0 || !errors.Is(res.err, ErrInterrupted) || res.sum.PairsRemaining == 0 || res.sum.PairsDone+res.sum.PairsFailed != 0 {
		t.Fatalf("%d requests sent after the stop; %+v %v", after, res.sum, res.err)
	}
	if took < o.StopGrace {
		t.Errorf("the answers in flight were cancelled after %v, before the grace %v", took, o.StopGrace)
	}
	if _, err := os.Stat(filepath.Join(o.Out, "records.jsonl")); err == nil && len(readLoose(t, o.Out)) != 0 {
		t.Fatalf("a cancelled answer was recorded")
	}
	stalled.Store(false)
	o.Resume = true
	sum, err := Run(context.Background(), nil, o)
	n := len(o.Items.Items) * len(o.Grid.Configs)
	if err != nil || sum.PairsDone != n || len(readRun(t, o.Out)) != n {
		t.Fatalf("resume: %+v %v", sum, err)
	}
}

// TestSweepStopWhileDescribing: a stop while the session asks the server for its model (GET
// /v1/models, which this server never answers) ends that question too: Run returns at once with the
// pairs left to --resume, not after the client's 120 s timeout, and no chat request is sent.
func TestSweepStopWhileDescribing(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 1)
	var chats atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			chats.Add(1)
			io.WriteString(w, okReply)
			return
		}
		asked <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	defer s.Close()
	o := openaiOptions(t, &replyServer{Server: s}, "")
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), stop, o)
		done <- err
	}()
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the session never asked for the model")
	}
	close(stop)
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) || chats.Load() != 0 {
			t.Fatalf("stopped while describing: %v, %d chat requests", err, chats.Load())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run still going 20 s after the stop")
	}
}
