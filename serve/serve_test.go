package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/npy"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/sampler"
)

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPathSafety: only regular files inside a root are served; every escape is a 403 with a JSON
// error, a missing file a 404, and the server keeps answering.
func TestPathSafety(t *testing.T) {
	vids := testVideos(t)
	outside := t.TempDir()
	copyFile(t, filepath.Join(vids, "h265_video.mp4"), filepath.Join(outside, "secret.mp4"))
	root, root2 := t.TempDir(), t.TempDir()
	copyFile(t, filepath.Join(vids, "h265_video.mp4"), filepath.Join(root, "a.mp4"))
	copyFile(t, filepath.Join(vids, "video_90.mov"), filepath.Join(root2, "c.mov"))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "sub", "dir"), 0o755))
	must(os.Symlink("../a.mp4", filepath.Join(root, "sub", "inside.mp4")))
	must(os.Symlink(filepath.Join(outside, "secret.mp4"), filepath.Join(root, "out.mp4")))
	must(os.Symlink(outside, filepath.Join(root, "outdir")))
	must(os.Symlink(filepath.Join(root, "nowhere.mp4"), filepath.Join(root, "dangling.mp4")))
	must(syscall.Mkfifo(filepath.Join(root, "fifo.mp4"), 0o644))
	must(os.WriteFile(filepath.Join(root, "notes.txt"), []byte("not a video\n"), 0o644))
	// A symlinked root: absolute names through the link are inside it.
	linkRoot := filepath.Join(t.TempDir(), "videos")
	must(os.Symlink(root, linkRoot))

	_, url := start(t, Config{Roots: []string{linkRoot, root2}})
	cases := []struct {
		name, video string
		status      int
		code        string
	}{
		{"relative", "a.mp4", 200, ""},
		{"second root", "c.mov", 200, ""},
		{"symlink inside", "sub/inside.mp4", 200, ""},
		{"absolute via the link", filepath.Join(linkRoot, "a.mp4"), 200, ""},
		{"absolute resolved", filepath.Join(root, "a.mp4"), 200, ""},
		{"dot slash", "./a.mp4", 200, ""},
		{"dotdot", "../secret.mp4", 403, CodeForbidden},
		{"dotdot inside", "sub/../a.mp4", 403, CodeForbidden},
		{"absolute outside", filepath.Join(outside, "secret.mp4"), 403, CodeForbidden},
		{"etc passwd", "/etc/passwd", 403, CodeForbidden},
		{"symlink out", "out.mp4", 403, CodeForbidden},
		{"through a symlinked dir", "outdir/secret.mp4", 403, CodeForbidden},
		{"directory", "sub/dir", 403, CodeForbidden},
		{"root itself", ".", 403, CodeForbidden},
		{"fifo", "fifo.mp4", 403, CodeForbidden},
		{"file url", "file://" + filepath.Join(root, "a.mp4"), 403, CodeForbidden},
		{"http url", "http://127.0.0.1:1/a.mp4", 403, CodeForbidden},
		{"ffmpeg protocol", "concat:a.mp4|a.mp4", 403, CodeForbidden},
		{"missing", "missing.mp4", 404, CodeNotFound},
		{"dangling symlink", "dangling.mp4", 404, CodeNotFound},
		{"through a file", "a.mp4/x.mp4", 404, CodeNotFound},
		{"not a video", "notes.txt", 422, CodeBadVideo},
		{"empty", "", 400, CodeBadRequest},
		{"NUL", "a.mp4\x00.txt", 400, CodeBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, endpoint := range []string{"probe", "frames"} {
				var r resp
				if endpoint == "probe" {
					r = get(t, url, "/v1/probe?video="+queryEscape(c.video))
				} else {
					r = post(t, url, "/v1/frames", Request{Video: c.video, Policy: "uniform", Frames: 2, Resolution: "32x32"})
				}
				if r.status != c.status {
					t.Fatalf("%s: status %d, want %d: %s", endpoint, r.status, c.status, r.body)
				}
				if c.status == 200 {
					if endpoint == "probe" {
						var in decode.Info
						if err := json.Unmarshal(r.body, &in); err != nil || in.Frames == 0 || !strings.HasPrefix(in.Path, root) && !strings.HasPrefix(in.Path, root2) {
							t.Fatalf("probe: %v %+v", err, in)
						}
					} else {
						framesOf(t, r)
					}
					continue
				}
				e := r.errBody(t)
				if e.Code != c.code {
					t.Fatalf("%s: code %q, want %q (%s)", endpoint, e.Code, c.code, e.Error)
				}
				if strings.Contains(e.Error, outside) && !strings.Contains(c.video, outside) {
					t.Fatalf("%s: the error names the outside path: %s", endpoint, e.Error)
				}
			}
		})
	}
	mustHealthy(t, url)
}

func queryEscape(s string) string {
	r := strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23", "?", "%3F", "\x00", "%00")
	return r.Replace(s)
}

// TestAuth: with a token, every endpoint needs "Authorization: Bearer <token>" (401 and a JSON error
// without it).
func TestAuth(t *testing.T) {
	_, url := start(t, Config{Roots: []string{testVideos(t)}, Token: "s3cret-token"})
	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}, {"Authorization": "Basic czNjcmV0LXRva2Vu"}} {
		for _, path := range []string{"/v1/health", "/v1/probe?video=h265_video.mp4", "/v1/nothing"} {
			r := do(t, http.MethodGet, url+path, nil, hdr)
			if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") == "" || r.errBody(t).Code != CodeUnauthorized {
				t.Fatalf("%s with %v: %d %v %s", path, hdr, r.status, r.header, r.body)
			}
		}
		r := do(t, http.MethodPost, url+"/v1/frames", strings.NewReader(`{"video":"h265_video.mp4","policy":"uniform","frames":2}`), hdr)
		if r.status != http.StatusUnauthorized {
			t.Fatalf("frames with %v: %d", hdr, r.status)
		}
	}
	for _, scheme := range []string{"Bearer", "bearer"} {
		r := do(t, http.MethodGet, url+"/v1/probe?video=h265_video.mp4", nil, map[string]string{"Authorization": scheme + " s3cret-token"})
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", scheme, r.status, r.body)
		}
	}
}

// TestBadRequests: malformed, invalid and unservable requests get 400/405/404/413/422 with a JSON
// error, nothing is decoded for them (the response size is checked from the plan), and the server
// goes on answering.
func TestBadRequests(t *testing.T) {
	s, url := start(t, Config{Roots: []string{testVideos(t)}, MaxResponseBytes: 4 << 20, MaxFrames: 100, MaxBodyBytes: 4096})
	ok := `"video":"nasa_13013.mp4","policy":"uniform"`
	cases := []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"empty body", "/v1/frames", "", 400, CodeBadRequest},
		{"null", "/v1/frames", "null", 400, CodeBadRequest},
		{"array", "/v1/plan", "[]", 400, CodeBadRequest},
		{"truncated", "/v1/frames", `{"video":`, 400, CodeBadRequest},
		{"trailing data", "/v1/frames", `{` + ok + `,"frames":4}{}`, 400, CodeBadRequest},
		{"unknown field", "/v1/frames", `{` + ok + `,"frame":4}`, 400, CodeBadRequest},
		{"no sampler", "/v1/frames", `{"video":"nasa_13013.mp4","frames":4}`, 400, CodeBadRequest},
		{"preset and policy", "/v1/frames", `{` + ok + `,"preset":"qwen2.5-vl","frames":4}`, 400, CodeBadRequest},
		{"fractional frames", "/v1/frames", `{` + ok + `,"frames":8.5}`, 400, CodeBadRequest},
		{"negative frames", "/v1/plan", `{` + ok + `,"frames":-1}`, 400, CodeBadRequest},
		{"string frames", "/v1/plan", `{` + ok + `,"frames":"8"}`, 400, CodeBadRequest},
		{"frames and fps", "/v1/frames", `{` + ok + `,"frames":4,"sample_fps":1}`, 400, CodeBadRequest},
		{"unknown policy", "/v1/frames", `{"video":"nasa_13013.mp4","policy":"sometimes","frames":4}`, 400, CodeBadRequest},
		{"policy as preset", "/v1/frames", `{"video":"nasa_13013.mp4","preset":"uniform","frames":4}`, 400, CodeBadRequest},
		{"bad resolution", "/v1/frames", `{` + ok + `,"frames":4,"resolution":"huge"}`, 400, CodeBadRequest},
		{"bad pipeline", "/v1/frames", `{` + ok + `,"frames":4,"pipeline":"jpeg"}`, 400, CodeBadRequest},
		{"bad kernel", "/v1/frames", `{` + ok + `,"frames":4,"kernel":"nearest-ish"}`, 400, CodeBadRequest},
		{"bad dtype", "/v1/frames", `{` + ok + `,"frames":4,"dtype":"f64"}`, 400, CodeBadRequest},
		{"norm with u8", "/v1/frames", `{` + ok + `,"frames":4,"norm":"imagenet"}`, 400, CodeBadRequest},
		{"bad norm", "/v1/frames", `{` + ok + `,"frames":4,"dtype":"f32","norm":"zscore"}`, 400, CodeBadRequest},
		{"bad torch", "/v1/frames", `{` + ok + `,"frames":4,"torch":"3"}`, 400, CodeBadRequest},
		{"bad on_damaged", "/v1/frames", `{` + ok + `,"frames":4,"on_damaged":"ignore"}`, 400, CodeBadRequest},
		{"negative stream", "/v1/frames", `{` + ok + `,"frames":4,"stream":-2}`, 400, CodeBadRequest},
		{"bad format", "/v1/frames", `{` + ok + `,"frames":4,"format":"png"}`, 400, CodeBadRequest},
		{"bad format query", "/v1/frames?format=xml", `{` + ok + `,"frames":4}`, 400, CodeBadRequest},
		{"unknown query", "/v1/frames?frames=4", `{` + ok + `,"frames":4}`, 400, CodeBadRequest},
		{"over the body limit", "/v1/frames", `{` + ok + `,"resolution":"` + strings.Repeat("x", 5000) + `"}`, 413, CodeTooLarge},
		{"no such stream", "/v1/frames", `{` + ok + `,"frames":4,"stream":7}`, 422, CodeBadVideo},
		{"32 of 3 frames", "/v1/frames", `{"video":"video_90.mov","policy":"uniform","frames":32}`, 422, CodeUnplannable},
		{"qwen nframes of 3", "/v1/plan", `{"video":"video_90.mov","preset":"qwen2.5-vl","frames":32}`, 422, CodeUnplannable},
		{"over the frame limit", "/v1/frames", `{` + ok + `,"frames":200,"resolution":"16x16"}`, 422, CodeResponseTooLarge},
		{"over the response limit", "/v1/frames", `{` + ok + `,"frames":64}`, 422, CodeResponseTooLarge},
		{"unknown endpoint", "/v1/frame", `{}`, 404, CodeNotFound},
		{"GET frames", "/v1/frames", "", 405, CodeMethod},
		{"POST health", "/v1/health", "{}", 405, CodeMethod},
		{"probe without video", "/v1/probe", "", 400, CodeBadRequest},
		{"probe unknown param", "/v1/probe?video=nasa_13013.mp4&frames=2", "", 400, CodeBadRequest},
		{"probe bad stream", "/v1/probe?video=nasa_13013.mp4&stream=x", "", 400, CodeBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := http.MethodPost
			if c.status == 405 && c.path == "/v1/frames" || strings.HasPrefix(c.path, "/v1/probe") {
				method = http.MethodGet
			}
			r := do(t, method, url+c.path, strings.NewReader(c.body), nil)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if e := r.errBody(t); e.Code != c.code {
				t.Fatalf("code %q, want %q: %s", e.Code, c.code, e.Error)
			}
			if c.status == 405 && r.header.Get("Allow") == "" {
				t.Fatal("405 without Allow")
			}
		})
	}
	// Raw garbage on a connection: a 400 from net/http, and the server goes on.
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("\x00\x01GARBAGE /v1/frames HTTP/9.9\r\n\r\n"))
	buf := make([]byte, 64)
	n, _ := conn.Read(buf)
	conn.Close()
	if !bytes.Contains(buf[:n], []byte("400")) {
		t.Fatalf("garbage: %q", buf[:n])
	}
	if st := s.Stats(); st.Passes != 0 || st.FramesDecoded != 0 {
		t.Fatalf("bad requests decoded something: %+v", st)
	}
	mustHealthy(t, url)
	r := post(t, url, "/v1/frames", Request{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 4, Resolution: "32x32"})
	framesOf(t, r)
}

// TestFramesEqualEngine: what the server returns (safetensors and npy, uint8 and float16, raw and
// cached) is the engine's object for that configuration: the same key, the same frames tensor, the
// same whole object (the server's path is the path the engine was given).
func TestFramesEqualEngine(t *testing.T) {
	vids := testVideos(t)
	_, url := start(t, Config{Roots: []string{vids}, Window: -1})
	for _, r := range []Request{
		{Video: "nasa_13013.mp4", Preset: "qwen2.5-vl", Frames: 8, Resolution: "qwen2.5-vl"},
		{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 6, Resolution: "64x48", Pipeline: "cached"},
		{Video: "video_90.mov", Preset: "lmms-eval", Frames: 3, DType: "f16", Norm: "imagenet"},
		{Video: "bear-vp9-odd-dimensions.webm", Policy: "random", Frames: 5, Seed: 7, Resolution: "short:40+crop:32", Kernel: "cv-area"},
		{Video: "h265_video.mp4", Preset: "internvl3", Frames: 4, Resolution: "internvl3"},
	} {
		t.Run(r.Video+"/"+r.Preset+r.Policy, func(t *testing.T) {
			want := direct(t, filepath.Join(vids, r.Video), r)
			res := post(t, url, "/v1/frames", r)
			fr, meta := framesOf(t, res)
			if meta["key"] != want.Result.Job.Key || !bytes.Equal(fr.Data, want.Data) || !bytes.Equal(res.body, want.Bytes()) {
				t.Fatalf("served object differs from the engine's (key %s vs %s)", meta["key"], want.Result.Job.Key)
			}
			if res.header.Get("X-Framesweep-Served") != "decoded" || res.header.Get("X-Framesweep-Config") != want.Result.Job.Config.ID {
				t.Fatalf("headers %v", res.header)
			}
			// npy, by query and by body field: the same tensor, numpy's header.
			r2 := r
			r2.Format = FormatNPY
			for _, n := range []resp{do(t, http.MethodPost, url+"/v1/frames?format=npy", strings.NewReader(mustJSON(t, r)), nil), post(t, url, "/v1/frames", r2)} {
				shape, descr, data := parseNPY(t, n.body)
				if fmt.Sprint(shape) != fmt.Sprint(want.Result.Job.Shape()) || !bytes.Equal(data, want.Data) || n.header.Get("X-Framesweep-Served") != "lru" {
					t.Fatalf("npy: shape %v descr %s (want %v), %d bytes, served %s", shape, descr, want.Result.Job.Shape(), len(data), n.header.Get("X-Framesweep-Served"))
				}
			}
			// plan names the same key, shape and indices.
			var p PlanResponse
			pr := post(t, url, "/v1/plan", r)
			if err := json.Unmarshal(pr.body, &p); err != nil || p.Key != want.Result.Job.Key || fmt.Sprint(p.Indices) != fmt.Sprint(want.Result.Job.Selection.Indices) ||
				p.TensorBytes != int64(len(want.Data)) || p.Count != want.Result.Job.Frames() || p.Config != want.Result.Job.Config.ID {
				t.Fatalf("plan %d %v: %s", pr.status, err, pr.body)
			}
		})
	}
}

func mustJSON(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parseNPY reads a .npy file as a client would (internal/npy), checking numpy's own framing: version
// 1.0, a header padded to 64 bytes and ended by a newline.
func parseNPY(t testing.TB, b []byte) ([]int, string, []byte) {
	t.Helper()
	a, err := npy.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	head := b[:len(b)-len(a.Data)]
	if string(head[:8]) != "\x93NUMPY\x01\x00" || len(head)%64 != 0 || head[len(head)-1] != '\n' {
		t.Fatalf("npy header %q", head)
	}
	return a.Shape, a.Descr, a.Data
}

// TestProbe: /v1/probe is decode.Info, as `framesweep probe --json` prints it.
func TestProbe(t *testing.T) {
	vids := testVideos(t)
	_, url := start(t, Config{Roots: []string{vids}})
	for _, q := range []struct {
		query string
		opts  decode.Options
	}{
		{"video=nasa_13013.mp4", decode.Options{}},
		{"video=nasa_13013.mp4&stream=0", decode.Options{Stream: decode.StreamAt(0)}},
		{"video=video_90.mov&no_autorotate=true", decode.Options{NoAutorotate: true}},
	} {
		r := get(t, url, "/v1/probe?"+q.query)
		path := filepath.Join(vids, strings.SplitN(strings.TrimPrefix(q.query, "video="), "&", 2)[0])
		v, err := decode.Open(path, q.opts)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.MarshalIndent(v.Info(), "", "  ")
		v.Close()
		if r.status != 200 || !bytes.Equal(bytes.TrimSpace(r.body), want) {
			t.Fatalf("%s: %d\n%s\nwant\n%s", q.query, r.status, r.body, want)
		}
	}
}

// TestSharing: concurrent requests for several configurations of one video share one decoding pass
// (frames decoded < the frames the requests asked for); a duplicate joins the build of its key; a
// repeat comes from the LRU; every object equals the engine's own for its configuration.
func TestSharing(t *testing.T) {
	vids := testVideos(t)
	s, url := start(t, Config{Roots: []string{vids}, Window: 500 * time.Millisecond, MaxInflight: 8})
	reqs := []Request{
		{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 8, Resolution: "64x48"},
		{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 16, Resolution: "64x48"},
		{Video: "nasa_13013.mp4", Preset: "lmms-eval", Frames: 16, Resolution: "32x32"},
		{Video: "nasa_13013.mp4", Preset: "qwen2.5-vl", Frames: 8, Resolution: "qwen2.5-vl"},
		{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 8, Resolution: "64x48"}, // a duplicate of the first
	}
	res := make([]resp, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() { res[i] = post(t, url, "/v1/frames", r) })
	}
	wg.Wait()
	waitFor(t, "the pass to end", func() bool { return s.Stats().PassesRunning == 0 })
	requested := 0
	served := map[string]int{}
	for i, r := range res {
		fr, meta := framesOf(t, r)
		requested += fr.Shape[0]
		served[r.header.Get("X-Framesweep-Served")]++
		want := direct(t, filepath.Join(vids, reqs[i].Video), reqs[i])
		if meta["key"] != want.Result.Job.Key || !bytes.Equal(fr.Data, want.Data) {
			t.Fatalf("request %d: the shared pass built other bytes than the engine alone", i)
		}
	}
	st := s.Stats()
	t.Logf("%d requests: %d pass(es), %d frames decoded for %d requested, served %v", len(reqs), st.Passes, st.FramesDecoded, requested, served)
	if st.Passes != 1 || st.ObjectsBuilt != 4 || st.JoinedBuilds != 1 || served["decoded"] != 4 || served["joined"] != 1 {
		t.Fatalf("want one pass building 4 objects and one joined request: %+v, served %v", st, served)
	}
	if st.FramesDecoded >= int64(requested) {
		t.Fatalf("frames decoded %d not below the %d requested", st.FramesDecoded, requested)
	}
	r := post(t, url, "/v1/frames", reqs[2])
	if r.header.Get("X-Framesweep-Served") != "lru" || s.Stats().Passes != 1 {
		t.Fatalf("repeat: served %s, passes %d", r.header.Get("X-Framesweep-Served"), s.Stats().Passes)
	}
	// Another video within the window is another pass.
	other := Request{Video: "h265_video.mp4", Policy: "uniform", Frames: 4}
	framesOf(t, post(t, url, "/v1/frames", other))
	waitFor(t, "the pass to end", func() bool { return s.Stats().PassesRunning == 0 })
	if st := s.Stats(); st.Passes != 2 || st.OpenBatches != 0 || st.Building != 0 || st.Inflight != 0 {
		t.Fatalf("after: %+v", st)
	}
}

// TestOverload: with every slot taken a request is refused at once with 503 and Retry-After; the
// request holding the slot completes.
func TestOverload(t *testing.T) {
	// Two slots, each held by a request of its own video waiting out the sharing window.
	s, url := start(t, Config{Roots: []string{testVideos(t)}, MaxInflight: 2, Window: 800 * time.Millisecond})
	done := make(chan resp, 2)
	for _, v := range []string{"nasa_13013.mp4", "h265_video.mp4"} {
		go func() {
			done <- post(t, url, "/v1/frames", Request{Video: v, Policy: "uniform", Frames: 4, Resolution: "32x32"})
		}()
	}
	waitFor(t, "both requests to hold a slot", func() bool { return s.Stats().OpenBatches == 2 })
	for _, path := range []string{"/v1/frames", "/v1/plan"} {
		r := post(t, url, path, Request{Video: "video_90.mov", Policy: "uniform", Frames: 2})
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || r.errBody(t).Code != CodeOverloaded {
			t.Fatalf("%s: %d %v %s", path, r.status, r.header, r.body)
		}
	}
	mustHealthy(t, url) // health needs no slot
	framesOf(t, <-done)
	framesOf(t, <-done)
	if st := s.Stats(); st.Overloaded != 2 || st.Inflight != 0 {
		t.Fatalf("%+v", st)
	}
}

// TestCancelledRequest: a client that gives up cancels a pass nobody else waits for; the server
// forgets the build, and the next request for the same key builds it.
func TestCancelledRequest(t *testing.T) {
	s, url := start(t, Config{Roots: []string{testVideos(t)}, Window: 300 * time.Millisecond})
	body := mustJSON(t, Request{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 4, Resolution: "32x32"})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/frames", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if _, err := http.DefaultClient.Do(req); err == nil || !isTimeout(err) {
		t.Fatalf("want a client timeout, got %v", err)
	}
	waitFor(t, "the abandoned batch to be forgotten", func() bool {
		st := s.Stats()
		return st.OpenBatches == 0 && st.Building == 0 && st.Inflight == 0
	})
	if st := s.Stats(); st.Passes != 0 {
		t.Fatalf("a pass ran for nobody: %+v", st)
	}
	r := do(t, http.MethodPost, url+"/v1/frames", strings.NewReader(body), nil)
	if framesOf(t, r); r.header.Get("X-Framesweep-Served") != "decoded" {
		t.Fatalf("served %s", r.header.Get("X-Framesweep-Served"))
	}
}

// TestStore: with a cache, a built object is written as extract would write it, and a fresh server
// over the same cache serves it from there, byte for byte.
func TestStore(t *testing.T) {
	vids := testVideos(t)
	ctx := context.Background()
	dir := t.TempDir()
	st, err := cache.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	req := Request{Video: "nasa_13013.mp4", Preset: "vlmevalkit", Frames: 8, Resolution: "64x48", Pipeline: "cached"}
	s1, url1 := start(t, Config{Roots: []string{vids}, Store: st})
	first := post(t, url1, "/v1/frames", req)
	_, meta := framesOf(t, first)
	if first.header.Get("X-Framesweep-Served") != "decoded" || s1.Stats().StoreWrites != 1 {
		t.Fatalf("served %s, %+v", first.header.Get("X-Framesweep-Served"), s1.Stats())
	}
	stored, _, err := st.Get(ctx, meta["key"])
	if err != nil || !bytes.Equal(stored, first.body) {
		t.Fatalf("the stored object differs from the response: %v", err)
	}
	s2, url2 := start(t, Config{Roots: []string{vids}, Store: st})
	again := post(t, url2, "/v1/frames", req)
	framesOf(t, again)
	if again.header.Get("X-Framesweep-Served") != "store" || !bytes.Equal(again.body, first.body) || s2.Stats().Passes != 0 {
		t.Fatalf("second server: served %s, equal %v, %+v", again.header.Get("X-Framesweep-Served"), bytes.Equal(again.body, first.body), s2.Stats())
	}
	npy := do(t, http.MethodPost, url2+"/v1/frames?format=npy", strings.NewReader(mustJSON(t, req)), nil)
	if _, _, data := parseNPY(t, npy.body); !bytes.Equal(data, func() []byte { f, _ := framesOf(t, first); return f.Data }()) {
		t.Fatal("npy from the store differs")
	}
}

// TestLRU: the LRU keeps the most recent objects within its byte capacity and never one larger than
// all of it; through the server, the bytes held never exceed the capacity.
func TestLRU(t *testing.T) {
	c := newLRU[string, []byte](10, func(b []byte) int64 { return int64(len(b)) })
	c.put("a", make([]byte, 4))
	c.put("b", make([]byte, 4))
	c.get("a") // a is now the most recent
	c.put("c", make([]byte, 4))
	if _, ok := c.get("b"); ok {
		t.Fatal("b should have been evicted (least recent)")
	}
	if _, ok := c.get("a"); !ok {
		t.Fatal("a should be kept")
	}
	c.put("big", make([]byte, 11))
	if _, ok := c.get("big"); ok {
		t.Fatal("an entry over the capacity was kept")
	}
	c.put("a", make([]byte, 6)) // replace: size recomputed
	if n, k := c.usage(); n != 10 || k != 2 {
		t.Fatalf("usage %d bytes, %d entries", n, k)
	}

	const capacity = 200 << 10
	s, url := start(t, Config{Roots: []string{testVideos(t)}, LRUBytes: capacity, Window: -1})
	for i := 2; i < 12; i++ {
		framesOf(t, post(t, url, "/v1/frames", Request{Video: "nasa_13013.mp4", Policy: "uniform", Frames: i, Resolution: "64x64"}))
		if st := s.Stats(); st.LRUBytes > capacity {
			t.Fatalf("LRU holds %d bytes > %d", st.LRUBytes, capacity)
		}
	}
	if st := s.Stats(); st.LRUObjects == 0 || st.LRUObjects >= 10 {
		t.Fatalf("LRU objects %d: want some kept and some evicted", st.LRUObjects)
	}
	_, url2 := start(t, Config{Roots: []string{testVideos(t)}, LRUBytes: -1, Window: -1})
	req := Request{Video: "h265_video.mp4", Policy: "uniform", Frames: 2}
	post(t, url2, "/v1/frames", req)
	if r := post(t, url2, "/v1/frames", req); r.header.Get("X-Framesweep-Served") != "decoded" {
		t.Fatalf("without an LRU: served %s", r.header.Get("X-Framesweep-Served"))
	}
}

// TestPlanEqualsSampler: /v1/plan's indices and timestamps are the sampler's for the video.
func TestPlanEqualsSampler(t *testing.T) {
	vids := testVideos(t)
	_, url := start(t, Config{Roots: []string{vids}})
	v, err := decode.Open(filepath.Join(vids, "nasa_13013.mp4"), decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := v.Info()
	v.Close()
	for _, r := range []Request{
		{Video: "nasa_13013.mp4", Preset: "qwen3-vl", SampleFPS: 2},
		{Video: "nasa_13013.mp4", Preset: "vlmevalkit", Frames: 16},
		{Video: "nasa_13013.mp4", Policy: "random", Frames: 8, Seed: 3},
		{Video: "nasa_13013.mp4", Preset: "qwen2.5-vl"}, // the preset's own default budget
	} {
		c, err := grid.One(r.Preset+r.Policy, sampler.Request{Frames: r.Frames, SampleFPS: r.SampleFPS, Seed: r.Seed}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := c.Select(sampler.Video{Frames: in.Frames, FPS: in.FPS, DurationS: in.DurationS})
		if err != nil {
			t.Fatal(err)
		}
		var p PlanResponse
		res := post(t, url, "/v1/plan", r)
		if err := json.Unmarshal(res.body, &p); err != nil || res.status != 200 {
			t.Fatalf("%d %s", res.status, res.body)
		}
		if fmt.Sprint(p.Indices) != fmt.Sprint(want.Indices) || fmt.Sprint(p.TimestampsS) != fmt.Sprint(want.TimestampsS) || p.Config != c.ID || p.TotalFrames != in.Frames {
			t.Fatalf("%+v: plan %v (%s), sampler %v (%s)", r, p.Indices, p.Config, want.Indices, c.ID)
		}
	}
}

// TestNewErrors: bad configurations are refused at construction.
func TestNewErrors(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	for _, cfg := range []Config{{}, {Roots: []string{"/nonexistent/dir"}}, {Roots: []string{f}}, {Roots: []string{t.TempDir()}, MaxInflight: -1},
		{Roots: []string{t.TempDir()}, Token: "two words"}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// TestObjectFromStored rejects bytes that are not a framesweep object for the key.
func TestObjectFromStored(t *testing.T) {
	vids := testVideos(t)
	o := direct(t, filepath.Join(vids, "h265_video.mp4"), Request{Video: "h265_video.mp4", Policy: "uniform", Frames: 2})
	got, err := fromStored(o.Result.Job.Key, o.Bytes())
	if err != nil || !bytes.Equal(got.Data, o.Data) || got.DataSHA256 != o.DataSHA256 || fmt.Sprint(got.Indices) != fmt.Sprint(o.Result.Job.Selection.Indices) {
		t.Fatalf("%v", err)
	}
	if _, err := fromStored("other-key", o.Bytes()); err == nil {
		t.Fatal("accepted an object under another key")
	}
	other, _ := cache.EncodeSafetensors([]cache.Tensor{{Name: "x", DType: cache.U8, Shape: []int{1}, Data: []byte{1}}}, map[string]string{"format": pipeline.Format, "key": "k"})
	if _, err := fromStored("k", other); err == nil {
		t.Fatal("accepted a safetensors file without frames")
	}
}

// TestSlowClients: a header or a body that does not arrive in time, and a client that does not read
// its response, are cut off and release their slot; the server goes on.
func TestSlowClients(t *testing.T) {
	const limit = 300 * time.Millisecond
	s, url := start(t, Config{Roots: []string{testVideos(t)}, HeaderTimeout: limit, BodyTimeout: limit, WriteTimeout: limit})
	addr := strings.TrimPrefix(url, "http://")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// A header that never ends: the connection is closed.
	c := dial()
	c.Write([]byte("POST /v1/frames HTTP/1.1\r\nHost: 127.0.0.1\r\n"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			if isTimeout(err) {
				t.Fatal("a stalled header kept the connection open for 5 s")
			}
			break
		}
	}
	c.Close()
	if d := time.Since(t0); d > 3*time.Second {
		t.Fatalf("closed after %v", d)
	}
	// A body that stops short: 408 with a JSON error.
	c = dial()
	c.Write([]byte("POST /v1/frames HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"video\":"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	c.Close()
	if e := (resp{status: res.StatusCode, body: b}).errBody(t); res.StatusCode != http.StatusRequestTimeout || e.Code != CodeTimeout {
		t.Fatalf("stalled body: %d %s", res.StatusCode, b)
	}
	// A client that asks for 15 MiB and reads none of it: the write deadline ends the response and
	// the slot is free again while the connection is still open.
	c = dial()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetReadBuffer(4096)
	}
	body := mustJSON(t, Request{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 40})
	fmt.Fprintf(c, "POST /v1/frames HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	waitFor(t, "the response to start", func() bool { return s.Stats().BytesSent > 0 })
	waitFor(t, "the unread response to be cut off", func() bool { return s.Stats().Inflight == 0 })
	c.Close()
	if st := s.Stats(); st.BytesSent >= 15<<20 {
		t.Fatalf("the whole response went out to a client that read nothing: %+v", st)
	}
	mustHealthy(t, url)
}

// TestDamagedFrames: a frame the decoder concealed fails a request under on_damaged fail (422, the
// default), is delivered and listed under keep, and an object built under keep is never handed to a
// later "fail" request from the LRU.
func TestDamagedFrames(t *testing.T) {
	ffmpeg, ffprobe := testenv.Need(t, "ffmpeg"), testenv.Need(t, "ffprobe")
	root := t.TempDir()
	clean := filepath.Join(root, "clean.mp4")
	if out, err := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2", "-c:v", "libx264",
		"-g", "25", "-bf", "2", "-pix_fmt", "yuv420p", clean).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	out, err := exec.Command(ffprobe, "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pos,size", "-of", "csv=p=0", clean).Output()
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(clean)
	lines := strings.Fields(string(out))
	damaged := filepath.Join(root, "damaged.mp4")
	found := false
	for _, k := range []int{8, 3, 17, 30, 13, 40} { // P/B packets: flip one byte until FFmpeg conceals something
		var size, pos int64
		fmt.Sscanf(lines[k], "%d,%d", &size, &pos) // ffprobe's order: size, pos
		b := bytes.Clone(src)
		b[pos+size/2] ^= 0xff
		os.WriteFile(damaged, b, 0o644)
		v, err := decode.Open(damaged, decode.Options{OnDamaged: decode.DamagedKeep})
		if err != nil {
			continue
		}
		all := make([]int, v.NumFrames())
		for i := range all {
			all[i] = i
		}
		st, err := v.Read(all, func(*decode.Frame) error { return nil })
		v.Close()
		if err == nil && len(st.Damaged) > 0 {
			found = true
			break
		}
	}
	if !found {
		t.Fatal("no flipped byte made FFmpeg conceal anything")
	}
	_, url := start(t, Config{Roots: []string{root}, Window: -1})
	req := Request{Video: "damaged.mp4", Policy: "uniform", Frames: 50, Resolution: "32x32"}
	fail := func() {
		t.Helper()
		r := post(t, url, "/v1/frames", req)
		if e := r.errBody(t); r.status != http.StatusUnprocessableEntity || e.Code != CodeBadVideo || !strings.Contains(e.Error, "damaged") {
			t.Fatalf("on_damaged fail: %d %s", r.status, r.body)
		}
	}
	fail()
	keep := req
	keep.OnDamaged = "keep"
	_, meta := framesOf(t, post(t, url, "/v1/frames", keep))
	if meta["damaged"] == "[]" || meta["damaged"] == "" {
		t.Fatalf("keep: damaged %q", meta["damaged"])
	}
	fail() // the keep object is in the LRU now, under the same content key
	framesOf(t, post(t, url, "/v1/frames", Request{Video: "clean.mp4", Policy: "uniform", Frames: 50, Resolution: "32x32"}))
}

// TestRouting: the endpoints' method patterns (GET serves HEAD), a JSON 405 with Allow for any other
// method, a JSON 404 for any other path, and no redirect for a path that is not clean (ServeMux would
// answer 301 with a text body).
func TestRouting(t *testing.T) {
	_, url := start(t, Config{Roots: []string{testVideos(t)}})
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodHead, "/v1/health", 200, ""},
		{http.MethodGet, "/v1/health", 200, ""},
		{http.MethodPut, "/v1/health", 405, "GET"},
		{http.MethodDelete, "/v1/probe", 405, "GET"},
		{http.MethodGet, "/v1/plan", 405, "POST"},
		{http.MethodHead, "/v1/frames", 405, "POST"},
		{http.MethodPatch, "/v1/frames", 405, "POST"},
		{http.MethodGet, "/v1/health/", 404, ""},
		{http.MethodPost, "/v1//frames", 404, ""},
		{http.MethodPost, "/v1/x/../frames", 404, ""},
		{http.MethodGet, "/", 404, ""},
		{http.MethodPost, "/v2/frames", 404, ""},
	} {
		r := do(t, c.method, url+c.path, strings.NewReader("{}"), nil)
		if r.status != c.status || r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d (Allow %q), want %d (Allow %q): %s", c.method, c.path, r.status, r.header.Get("Allow"), c.status, c.allow, r.body)
			continue
		}
		if c.status >= 400 && c.method != http.MethodHead {
			want := map[int]string{404: CodeNotFound, 405: CodeMethod}[c.status]
			if e := r.errBody(t); e.Code != want || e.Status != c.status {
				t.Errorf("%s %s: %+v, want code %s", c.method, c.path, e, want)
			}
		}
	}
}
