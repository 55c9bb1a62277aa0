package serve

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stall opens a connection that sends a POST's header and one byte of its body, then nothing (a
// slow-loris on the body); the test closes it.
func stall(t *testing.T, url, path string) net.Conn {
	t.Helper()
	host := strings.TrimPrefix(url, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{", path, host)
	return c
}

// TestBodyHoldsNoSlot: without a token, four connections that send a header and one byte of a body
// hold no slot of --max-inflight 4: a well-formed request is answered within a second while they
// stall; body readers and each client's requests are bounded apart (a request over MaxBodies is a 503,
// one over MaxPerClient a 429, each at once), and health answers throughout.
func TestBodyHoldsNoSlot(t *testing.T) {
	s, url := start(t, Config{Roots: []string{testVideos(t)}, MaxInflight: 4, MaxBodies: 6, Window: -1})
	for range 4 {
		stall(t, url, "/v1/frames")
	}
	waitFor(t, "four bodies being read", func() bool { return s.Stats().ReadingBodies == 4 })
	t0 := time.Now()
	r := post(t, url, "/v1/plan", Request{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 4, Resolution: "32x32"})
	if el := time.Since(t0); r.status != http.StatusOK || el > time.Second {
		t.Fatalf("a well-formed request beside four stalled bodies: %d after %v: %s", r.status, el, r.body)
	}
	if st := s.Stats(); st.Inflight != 0 || st.ReadingBodies != 4 || st.Overloaded != 0 {
		t.Fatalf("stats: %+v", st)
	}
	// Two more fill the body readers: the next body is refused at once, not queued.
	stall(t, url, "/v1/plan")
	stall(t, url, "/v1/plan")
	waitFor(t, "six bodies being read", func() bool { return s.Stats().ReadingBodies == 6 })
	t0 = time.Now()
	r = post(t, url, "/v1/frames", Request{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 4, Resolution: "32x32"})
	if el := time.Since(t0); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || r.errBody(t).Code != CodeOverloaded || el > time.Second {
		t.Fatalf("a body beyond MaxBodies: %d after %v: %s", r.status, el, r.body)
	}
	if h := mustHealthy(t, url); h.MaxBodies != 6 || h.MaxPerClient != DefaultMaxPerClient {
		t.Fatalf("health: %+v", h)
	}

	// One client's requests in progress, slot or not, are bounded.
	s2, url2 := start(t, Config{Roots: []string{testVideos(t)}, MaxPerClient: 2, Window: -1})
	stall(t, url2, "/v1/plan")
	stall(t, url2, "/v1/plan")
	waitFor(t, "two requests of the client", func() bool { return s2.Stats().InProgress == 2 })
	r = get(t, url2, "/v1/probe?video=nasa_13013.mp4")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || r.errBody(t).Code != CodeTooMany {
		t.Fatalf("a third request of a client with MaxPerClient 2: %d %s", r.status, r.body)
	}
	mustHealthy(t, url2)
}
