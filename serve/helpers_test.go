package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/pipeline"
)

// testVideos is the repository's sample videos.
func testVideos(t testing.TB) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", "testdata", "videos"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "nasa_13013.mp4")); err != nil {
		t.Fatalf("sample videos missing: %v", err)
	}
	return d
}

// start runs a real server on 127.0.0.1 (an ephemeral port) until the test ends.
func start(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, 2*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, "http://" + ln.Addr().String()
}

// resp is one response, read whole.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) errBody(t testing.TB) errorBody {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("status %d: the error body is not JSON: %v: %.300q", r.status, err, r.body)
	}
	if e.Status != r.status || e.Code == "" || e.Error == "" {
		t.Fatalf("status %d: error body %+v", r.status, e)
	}
	return e
}

func do(t testing.TB, method, url string, body io.Reader, hdr map[string]string) resp {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json") // as every client sends (415 otherwise: TestBrowsers)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading: %v", method, url, err)
	}
	return resp{res.StatusCode, res.Header, b}
}

func post(t testing.TB, url, path string, v any) resp {
	t.Helper()
	var body []byte
	switch x := v.(type) {
	case string:
		body = []byte(x)
	default:
		var err error
		if body, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	return do(t, http.MethodPost, url+path, bytes.NewReader(body), nil)
}

func get(t testing.TB, url, path string) resp {
	t.Helper()
	return do(t, http.MethodGet, url+path, nil, nil)
}

// frames parses a safetensors response: the frames tensor and the metadata.
func framesOf(t testing.TB, r resp) (cache.Tensor, map[string]string) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	f, err := cache.ParseSafetensors(r.body)
	if err != nil {
		t.Fatal(err)
	}
	fr, ok := f.Tensors["frames"]
	if !ok {
		t.Fatal("no frames tensor")
	}
	sum := sha256.Sum256(fr.Data)
	if got := r.header.Get("X-Framesweep-Frames-Sha256"); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("X-Framesweep-Frames-Sha256 %s, the tensor hashes to %x", got, sum)
	}
	if r.header.Get("X-Framesweep-Key") != f.Metadata["key"] {
		t.Fatalf("X-Framesweep-Key %s, metadata key %s", r.header.Get("X-Framesweep-Key"), f.Metadata["key"])
	}
	return fr, f.Metadata
}

// direct builds r's object for path straight through the engine (its own pass, no server).
func direct(t testing.TB, path string, r Request) *pipeline.Object {
	t.Helper()
	sp, err := r.spec()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: path}, sp.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	jobs, fails, err := pipeline.PlanJobs(v, []grid.Config{sp.config}, sp.opts)
	if err != nil || len(fails) > 0 || len(jobs) != 1 {
		t.Fatalf("plan: %v %v %d jobs", err, fails, len(jobs))
	}
	var obj *pipeline.Object
	_, jerrs, err := pipeline.Run(ctx, v, src, jobs, &pipeline.MemorySink{Done: func(o *pipeline.Object) error { obj = o; return nil }})
	if err != nil || len(jerrs) > 0 || obj == nil {
		t.Fatalf("run: %v %v", err, jerrs)
	}
	return obj
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mustHealthy(t testing.TB, url string) Health {
	t.Helper()
	r := get(t, url, "/v1/health")
	var h Health
	if r.status != http.StatusOK || json.Unmarshal(r.body, &h) != nil || h.Status != "ok" {
		t.Fatalf("health: %d %s", r.status, r.body)
	}
	return h
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || strings.Contains(err.Error(), "deadline")
}
