package serve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestBrowsers: what a web page can make a browser send to a loopback server is refused before
// anything is read or decoded — a Host that is not one of the server's names (DNS rebinding: 421), a
// request a browser marks as coming from another site (Origin, Sec-Fetch-Site: 403), and a POST body
// not declared application/json (a form post: 415), even when the body is valid JSON; the server's
// own names, --allow-host names and JSON bodies are served.
func TestBrowsers(t *testing.T) {
	s, url := start(t, Config{Roots: []string{testVideos(t)}, AllowHosts: []string{"Frames.Example.", "10.9.8.7:1234"}})
	port := url[strings.LastIndexByte(url, ':')+1:]
	body := `{"video":"h265_video.mp4","policy":"uniform","frames":2,"resolution":"32x32"}`
	send := func(method, path, host, ctype, body string, hdr map[string]string) resp {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, url+path, r)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return resp{res.StatusCode, res.Header, b}
	}
	for _, c := range []struct {
		host   string
		status int
	}{
		{"evil.example:" + port, 421}, {"evil.example", 421}, {"127.0.0.1.nip.io:" + port, 421}, {"localhost.evil.example", 421},
		{"10.9.8.8", 421}, {"0.0.0.0:" + port, 421},
		{"localhost:" + port, 200}, {"LOCALHOST.", 200}, {"127.0.0.1:" + port, 200}, {"127.0.0.2", 200}, {"[::1]:" + port, 200},
		{"frames.example", 200}, {"FRAMES.example:80", 200}, {"10.9.8.7", 200},
	} {
		for _, ep := range []struct{ method, path, ctype, body string }{
			{http.MethodGet, "/v1/health", "", ""},
			{http.MethodPost, "/v1/frames", "application/json", body},
		} {
			r := send(ep.method, ep.path, c.host, ep.ctype, ep.body, nil)
			if r.status != c.status {
				t.Errorf("Host %q %s: %d, want %d: %s", c.host, ep.path, r.status, c.status, r.body)
			} else if c.status != 200 && r.errBody(t).Code != CodeHost {
				t.Errorf("Host %q: code %s", c.host, r.errBody(t).Code)
			}
		}
	}
	// No Host at all (HTTP/1.0).
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("GET /v1/health HTTP/1.0\r\n\r\n"))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	conn.Close()
	if err != nil || res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("no Host: %v %v", res, err)
	}

	before := s.Stats().Passes
	for _, c := range []struct {
		name, ctype string
		hdr         map[string]string
		status      int
		code        string
	}{
		{"text/plain form", "text/plain", nil, 415, CodeMediaType},
		{"urlencoded form", "application/x-www-form-urlencoded", nil, 415, CodeMediaType},
		{"multipart form", "multipart/form-data; boundary=x", nil, 415, CodeMediaType},
		{"no content type", "", nil, 415, CodeMediaType},
		{"json lookalike", "application/jsonp", nil, 415, CodeMediaType},
		{"cross-site", "application/json", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, CodeOrigin},
		{"same-site", "application/json", map[string]string{"Sec-Fetch-Site": "same-site"}, 403, CodeOrigin},
		{"other origin", "application/json", map[string]string{"Origin": "http://evil.example"}, 403, CodeOrigin},
		{"null origin", "application/json", map[string]string{"Origin": "null"}, 403, CodeOrigin},
		{"rebound origin", "application/json", map[string]string{"Origin": "http://evil.example:" + port}, 403, CodeOrigin},
	} {
		r := send(http.MethodPost, "/v1/frames", "", c.ctype, body, c.hdr)
		if r.status != c.status || r.errBody(t).Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
		}
	}
	if st := s.Stats(); st.Passes != before {
		t.Errorf("refused requests decoded: %d passes", st.Passes-before)
	}
	for _, c := range []struct {
		name, ctype string
		hdr         map[string]string
	}{
		{"json with charset", "application/json; charset=utf-8", nil},
		{"same origin", "Application/JSON", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:" + port}},
		{"user-initiated", "application/json", map[string]string{"Sec-Fetch-Site": "none"}},
	} {
		if r := send(http.MethodPost, "/v1/frames", "", c.ctype, body, c.hdr); r.status != 200 {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	if _, err := New(Config{Roots: []string{testVideos(t)}, AllowHosts: []string{"http://x/"}}); err == nil {
		t.Error("a URL was taken as an allowed host")
	}
	mustHealthy(t, url)
}
