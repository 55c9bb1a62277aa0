package sweep

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/openai"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/resize/geom"
)

// countServer is an OpenAI-compatible server on 127.0.0.1 that counts a request's prompt tokens as
// a Qwen2.5-VL server does and answers with that usage.prompt_tokens: the text with a toy tokenizer
// (3 tokens a message and one a word of its text, the same for a text-only request and a request of
// frames), each image part resized by smart_resize (factor 28) to (h/28)(w/28) tokens between two
// markers, a vLLM video/jpeg item split at ',' with its JPEG frames decoded and the item's
// media_io_kwargs num_frames kept, an SGLang MP4 item decoded and resized by SGLang's own rule
// (factor 28, video pixel bounds), each video in temporal pairs between two markers. keep says what
// of the frames it counts: every one ("all"), the first N ("first:N": vLLM ≥ 0.19 when the per-request
// num_frames does not reach it), every other one ("half": SGLang's double sampling). With tokenize it
// serves vLLM's POST /tokenize of chat messages, counting them as the chat endpoint does.
type countServer struct {
	*httptest.Server
	keep       string
	tokenize   bool
	refuseText bool // answer a request without frames with HTTP 400
	mu         sync.Mutex
	bad        []string // what it could not read
}

const countModel = "Qwen/Qwen2.5-VL-7B-Instruct"

func newCountServer(t *testing.T, keep string, tokenize bool) *countServer {
	t.Helper()
	cs := &countServer{keep: keep, tokenize: tokenize}
	cs.Server = httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(func() {
		cs.Close()
		if len(cs.bad) > 0 {
			t.Errorf("the counting server could not read: %v", cs.bad)
		}
	})
	return cs
}

type countPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
	VideoURL *struct {
		URL string `json:"url"`
	} `json:"video_url"`
}

type countRequest struct {
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	MediaIOKwargs map[string]map[string]any `json:"media_io_kwargs"`
}

func (cs *countServer) serve(w http.ResponseWriter, r *http.Request) {
	var req countRequest
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			cs.fail("body: %v", err)
		}
	}
	switch {
	case r.URL.Path == "/v1/models":
		fmt.Fprintf(w, `{"object":"list","data":[{"id":%q}]}`, countModel)
	case r.URL.Path == "/tokenize" && cs.tokenize:
		fmt.Fprintf(w, `{"count":%d,"max_model_len":32768}`, cs.count(&req))
	case r.URL.Path == "/v1/chat/completions" && cs.refuseText && !strings.Contains(string(req.Messages[len(req.Messages)-1].Content), `"type"`):
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"object":"error","message":"no"}`)
	case r.URL.Path == "/v1/chat/completions":
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":"A"},"logprobs":{"content":[{"token":"A","logprob":-0.1,`+
			`"top_logprobs":[{"token":"A","logprob":-0.1},{"token":"B","logprob":-2.4}]}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":1}}`, cs.count(&req))
	default:
		http.NotFound(w, r)
	}
}

func (cs *countServer) fail(format string, a ...any) {
	cs.mu.Lock()
	cs.bad = append(cs.bad, fmt.Sprintf(format, a...))
	cs.mu.Unlock()
}

// count is the request's prompt tokens.
func (cs *countServer) count(req *countRequest) int {
	n := 0
	var images []image.Config
	for _, m := range req.Messages {
		n += 3
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			n += len(strings.Fields(s))
			continue
		}
		var parts []countPart
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			cs.fail("content: %v", err)
		}
		for _, p := range parts {
			switch {
			case p.Type == "text":
				n += len(strings.Fields(p.Text))
			case p.ImageURL != nil:
				images = append(images, cs.configs(p.ImageURL.URL)...)
			case p.VideoURL != nil:
				n += cs.video(p.VideoURL.URL, req.MediaIOKwargs["video"])
			}
		}
	}
	for _, c := range cs.kept(images, len(images)) {
		n += cs.qwenTokens(c.Height, c.Width) + 2
	}
	return n
}

// kept is what the server keeps of frames sent (want: what the request asks it to keep).
func (cs *countServer) kept(fr []image.Config, want int) []image.Config {
	fr = fr[:min(want, len(fr))]
	switch {
	case cs.keep == "half":
		var out []image.Config
		for i := 0; i < len(fr); i += 2 {
			out = append(out, fr[i])
		}
		return out
	case strings.HasPrefix(cs.keep, "first:"):
		var n int
		fmt.Sscanf(cs.keep, "first:%d", &n)
		return fr[:min(n, len(fr))]
	}
	return fr
}

// configs decodes the sizes of a data: URL's images (a video/jpeg item's are comma-separated).
func (cs *countServer) configs(url string) []image.Config {
	_, data, _ := strings.Cut(url, ";base64,")
	var out []image.Config
	for _, b64 := range strings.Split(data, ",") {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			cs.fail("base64: %v", err)
			continue
		}
		c, _, err := image.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			cs.fail("image: %v", err)
			continue
		}
		out = append(out, c)
	}
	return out
}

// video counts a video item: its frames in temporal pairs, (h/28)(w/28) each, between two markers.
func (cs *countServer) video(url string, kw map[string]any) int {
	var fr []image.Config
	want := 0
	if strings.HasPrefix(url, "data:video/mp4;") {
		fr = cs.mp4Frames(url)
		want = len(fr)
	} else {
		fr = cs.configs(url)
		n, _ := kw["num_frames"].(float64)
		want = int(n)
	}
	fr = cs.kept(fr, want)
	if len(fr) == 0 {
		return 0
	}
	return (len(fr)+1)/2*cs.qwenTokens(fr[0].Height, fr[0].Width) + 2
}

// mp4Frames decodes an SGLang item: its frame count, each at the size SGLang's preprocess_video
// resizes it to.
func (cs *countServer) mp4Frames(url string) []image.Config {
	_, data, _ := strings.Cut(url, ";base64,")
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		cs.fail("mp4 base64: %v", err)
		return nil
	}
	f, err := os.CreateTemp("", "sglang-*.mp4")
	if err != nil {
		cs.fail("%v", err)
		return nil
	}
	defer os.Remove(f.Name())
	f.Write(b)
	f.Close()
	info, err := decode.Probe(f.Name(), decode.Options{})
	if err != nil {
		cs.fail("mp4: %v", err)
		return nil
	}
	l, err := geom.Qwen{Base: "qwen2.5-vl", Version: geom.QwenV0010, Factor: 28}.Layout(info.OutWidth, info.OutHeight, info.Frames)
	if err != nil {
		cs.fail("sglang resize: %v", err)
		return nil
	}
	out := make([]image.Config, info.Frames)
	for i := range out {
		out[i] = image.Config{Width: l.Resize.W, Height: l.Resize.H}
	}
	return out
}

// qwenTokens: smart_resize to multiples of 28 within Qwen2.5-VL's image bounds.
func (cs *countServer) qwenTokens(h, w int) int {
	rh, rw, err := geom.SmartResize(geom.QwenV0011, h, w, 28, 3136, 12845056)
	if err != nil {
		cs.fail("resize %dx%d: %v", w, h, err)
	}
	return (rh / 28) * (rw / 28)
}

// tokenSweep runs a sweep of the nasa items (13 s, 390 frames) over grid through the openai client
// on cs with spec keys extra, inputs from the shared cache, and returns its summary, records and
// warning lines.
func tokenSweep(t *testing.T, cacheDir string, cs *countServer, grid, extra string, strict bool) (*Summary, map[record.Pair]record.Full, []string) {
	t.Helper()
	return tokenSweepIn(t, cacheDir, filepath.Join(t.TempDir(), "run"), false, cs, grid, extra, strict)
}

// tokenSweepIn is tokenSweep into the RUN out (resume: continue it).
func tokenSweepIn(t *testing.T, cacheDir, out string, resume bool, cs *countServer, grid, extra string, strict bool) (*Summary, map[record.Pair]record.Full, []string) {
	t.Helper()
	raw := "openai:url=" + cs.URL + "/v1,model=" + countModel + ",concurrency=2" + extra
	sp, err := llm.ParseSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := openai.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	o := testOptions(t, out, rt, sp, writeGrid(t, grid))
	o.Items, o.Resume = nasaItems(t), resume
	o.Cache = tokenCache(t, cacheDir)
	o.StrictTokens = strict
	var logs bytes.Buffer
	o.Log = slog.New(slog.NewTextHandler(&logs, nil))
	sum, err := Run(context.Background(), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	var warns []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "visual tokens") {
			warns = append(warns, l)
		}
	}
	return sum, readRun(t, o.Out), warns
}

// tokenCache is the input store of a test's sweeps (dir: the test's): the nasa frames are decoded
// once per test.
func tokenCache(t *testing.T, dir string) *cache.Store {
	t.Helper()
	st, err := cache.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// nasaItems are two questions about testdata's nasa video.
func nasaItems(t *testing.T) *items.File {
	t.Helper()
	video, err := filepath.Abs("../testdata/videos/nasa_13013.mp4")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "items.jsonl")
	var b strings.Builder
	for i, q := range []string{"What is shown?", "Where is the camera?"} {
		fmt.Fprintf(&b, `{"item_id":"nasa-%d","video":%q,"question":%q,"options":["A. space","B. a lake"],"answer":"A"}`+"\n", i, video, q)
	}
	testenv.WriteFile(t, p, []byte(b.String()))
	f, err := items.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// namedConfigs are the frame budgets of the configs the warnings name, sorted.
func namedConfigs(t *testing.T, sum *Summary, warns []string, recs map[record.Pair]record.Full) []int {
	t.Helper()
	if len(warns) != len(sum.VisualTokenWarnings) {
		t.Errorf("%d warning lines logged, %d in the summary:\n%s", len(warns), len(sum.VisualTokenWarnings), strings.Join(warns, "\n"))
	}
	var out []int
	for k, r := range recs {
		if k.Item != "nasa-0" || r.ConfigMeta == nil || r.ConfigMeta.Frames == nil || *r.ConfigMeta.Frames == 0 {
			continue
		}
		for _, w := range sum.VisualTokenWarnings {
			if strings.Contains(w, " for "+k.Config+" (item ") {
				out = append(out, *r.ConfigMeta.Frames)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestSweepVisualTokens: a server that counts as vLLM's video/jpeg path does (and as SGLang's MP4
// path, and image parts) and replies with the prompt_tokens it counted. Honest: no config is named.
// Keeping only the first 32 frames (vLLM ≥ 0.19 when the per-request num_frames does not reach it),
// or 8 of SGLang's: the larger config is named, the smaller not. Keeping every other frame (SGLang's
// double sampling): every visual config is named. Each visual record carries the counts, found by the
// text-only difference; the sweep goes on and records every pair.
func TestSweepVisualTokens(t *testing.T) {
	t.Parallel()
	cacheDir := t.TempDir() // one input store: the frames decoded once
	forms := []struct {
		name, extra string
		small, big  int
		cut         string
	}{
		{"vllm-video-jpeg", ",input=video", 16, 64, "first:32"},
		{"sglang-video-mp4", ",input=video,server=sglang", 8, 16, "first:8"},
		{"image_url", "", 16, 64, "first:32"},
	}
	for _, f := range forms {
		grid := fmt.Sprintf("frames: [%d, %d]\npolicies: [uniform]\nresolutions: [\"112x84\"]\npipelines: [raw]\ntext_only: true\n", f.small, f.big)
		for _, tc := range []struct {
			keep  string
			named []int
		}{{"all", nil}, {f.cut, []int{f.big}}, {"half", []int{f.small, f.big}}} {
			t.Run(f.name+"/"+tc.keep, func(t *testing.T) {
				cs := newCountServer(t, tc.keep, false)
				sum, recs, warns := tokenSweep(t, cacheDir, cs, grid, f.extra, false)
				if sum.PairsDone != 2*3 || sum.PairsFailed != 0 {
					t.Fatalf("summary %+v", sum)
				}
				if got := namedConfigs(t, sum, warns, recs); !slices.Equal(got, tc.named) {
					t.Errorf("configs named: %v, want %v\n%s", got, tc.named, strings.Join(sum.VisualTokenWarnings, "\n"))
				}
				for k, r := range recs {
					v := r.VisualTokens
					if r.InputSHA256 == "" {
						if v != nil {
							t.Errorf("%v: a text-only record with visual_tokens %+v", k, v)
						}
						continue
					}
					if v == nil || v.Expected == nil || v.Seen == nil || v.How != llm.HowTextOnly || v.Family != llm.FamilyQwen25VL || r.InputForm != f.name {
						t.Fatalf("%v (%s): visual_tokens %+v", k, r.InputForm, v)
					}
					if named := slices.Contains(tc.named, *r.ConfigMeta.Frames); named == (*v.Seen == *v.Expected) {
						t.Errorf("%v: expected %d, seen %d (keep %s)", k, *v.Expected, *v.Seen, tc.keep)
					}
				}
				t.Logf("warnings:\n%s", strings.Join(sum.VisualTokenWarnings, "\n"))
				if len(tc.named) > 0 && !strings.Contains(sum.VisualTokenWarnings[0], "server counted") {
					t.Errorf("warning %q", sum.VisualTokenWarnings[0])
				}
			})
		}
	}
}

// TestSweepVisualTokensWithoutTextOnly: without a text-only config the sweep asks the server's
// tokenize endpoint for the item's text-only prompt; a server without one is measured against the
// grid's visual config of fewest frames (taken as counted right, its own count unknown). A cut to 32
// frames names the 64-frame config either way; --strict-tokens makes its pairs error records that
// keep the counts.
func TestSweepVisualTokensWithoutTextOnly(t *testing.T) {
	t.Parallel()
	cacheDir := t.TempDir() // one input store: the frames decoded once
	grid := "frames: [16, 64]\npolicies: [uniform]\nresolutions: [\"112x84\"]\npipelines: [raw]\n"
	for _, tc := range []struct {
		tokenize bool
		keep     string
		strict   bool
		how      string
		named    []int
	}{
		{true, "all", false, llm.HowTokenize, nil},
		{true, "first:32", false, llm.HowTokenize, []int{64}},
		{false, "all", false, llm.HowTwoCfgs, nil},
		{false, "first:32", true, llm.HowTwoCfgs, []int{64}},
	} {
		t.Run(fmt.Sprintf("%s/%s/strict=%v", tc.how, tc.keep, tc.strict), func(t *testing.T) {
			cs := newCountServer(t, tc.keep, tc.tokenize)
			sum, recs, warns := tokenSweep(t, cacheDir, cs, grid, ",input=video", tc.strict)
			if got := namedConfigs(t, sum, warns, recs); !slices.Equal(got, tc.named) {
				t.Errorf("configs named: %v, want %v\n%s", got, tc.named, strings.Join(sum.VisualTokenWarnings, "\n"))
			}
			for k, r := range recs {
				v, frames := r.VisualTokens, *r.ConfigMeta.Frames
				if v == nil || v.Expected == nil {
					t.Fatalf("%v: %+v", k, v)
				}
				reference := tc.how == llm.HowTwoCfgs && frames == 16
				if reference != (v.Seen == nil) || (!reference && v.How != tc.how) {
					t.Errorf("%v: %+v (%s)", k, v, v.Why)
				}
				if bad := tc.strict && frames == 64; bad != r.Failed() || (bad && !strings.Contains(r.Error, "--strict-tokens: server counted")) {
					t.Errorf("%v: status %q error %q", k, r.Status, r.Error)
				}
			}
			if tc.strict && sum.PairsFailed != 2 {
				t.Errorf("strict: %d failed pairs, want the 2 of the 64-frame config", sum.PairsFailed)
			}
		})
	}
}

// TestSweepVisualTokensBaselines: a record of frames whose item's text-only answer failed says so
// (no seen count, why named) and is written all the same; a resumed RUN finds an item's text-only
// prompt tokens in the records of the sessions before (here: the visual records dropped, asked again).
func TestSweepVisualTokensBaselines(t *testing.T) {
	t.Parallel()
	cacheDir := t.TempDir() // one input store: the frames decoded once
	grid := "frames: [16, 64]\npolicies: [uniform]\nresolutions: [\"112x84\"]\npipelines: [raw]\ntext_only: true\n"
	cs := newCountServer(t, "all", false)
	cs.refuseText = true
	sum, recs, _ := tokenSweep(t, cacheDir, cs, grid, ",input=video", false)
	if sum.PairsDone != 4 || sum.PairsFailed != 2 {
		t.Fatalf("summary %+v", sum)
	}
	for k, r := range recs {
		if v := r.VisualTokens; r.InputSHA256 != "" && (v == nil || v.Seen != nil || v.How != llm.HowUnknown || !strings.Contains(v.Why, "text-only pair got no answer")) {
			t.Errorf("%v: %+v", k, v)
		}
	}

	cs = newCountServer(t, "first:32", false)
	run := filepath.Join(t.TempDir(), "run")
	tokenSweepIn(t, cacheDir, run, false, cs, grid, ",input=video", false)
	b, err := os.ReadFile(filepath.Join(run, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.Contains(l, `"text-only"`) {
			keep = append(keep, l)
		}
	}
	testenv.WriteFile(t, filepath.Join(run, "records.jsonl"), []byte(strings.Join(keep, "")))
	sum, recs, warns := tokenSweepIn(t, cacheDir, run, true, cs, grid, ",input=video", false)
	if sum.PairsDone != 4 || len(recs) != 6 {
		t.Fatalf("resume: %+v, %d records", sum, len(recs))
	}
	if got := namedConfigs(t, sum, warns, recs); !slices.Equal(got, []int{64}) {
		t.Errorf("resume named %v", got)
	}
	for k, r := range recs {
		if v := r.VisualTokens; r.InputSHA256 != "" && (v == nil || v.Seen == nil || v.How != llm.HowTextOnly) {
			t.Errorf("resumed %v: %+v", k, v)
		}
	}
}
