// Package s3test starts an S3-protocol server on 127.0.0.1 for tests: github.com/johannesboyne/gofakes3
// (MIT) over its in-memory backend (s3mem), reached over real HTTP by the real S3 client (gocloud's
// s3blob on the AWS SDK v2). Only tests import it.
//
// The memory backend serves what it stored: each PUT keeps its own byte slice, and a GET reads it under
// the backend's lock. gofakes3's bbolt backend, which this package used before, does not: its GetObject
// hands on a slice of bbolt's mmap after the read transaction ends, so a concurrent PUT could change or
// unmap the bytes of a GET in flight (the "NUL in an S3 chunk" flake of TestMerge).
//
// A test that needs a store which does not serve what it stored asks for one (Corrupt): the server then
// flips one byte of the named objects' GET replies, the way a faulty disk or proxy would.
package s3test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is a running S3-protocol server with one bucket.
type Server struct {
	Bucket   string
	Endpoint string // http://127.0.0.1:PORT

	mu     sync.Mutex
	log    []Request
	faults map[string]int // key → GETs still to corrupt (< 0: every one)
}

// Request is one request the server answered.
type Request struct {
	Method, Path string
	Status       int
	IfNoneMatch  string
	Corrupted    bool // a byte of the reply was flipped (Corrupt)
}

// Start serves a bucket until the test ends and sets the AWS SDK's environment (static credentials, a
// region, no shared config files, no instance metadata) for this process; Env gives it to children.
func Start(t testing.TB) *Server {
	t.Helper()
	dir := t.TempDir()
	be := s3mem.New()
	s := &Server{Bucket: "framesweep-test", faults: map[string]int{}}
	if err := be.CreateBucket(s.Bucket); err != nil {
		t.Fatal(err)
	}
	h := gofakes3.New(be).Server()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &statusWriter{ResponseWriter: w, status: 200}
		if r.Method == http.MethodGet && s.takeFault(r.URL.Path) {
			rw.flip = true
		}
		h.ServeHTTP(rw, r)
		s.mu.Lock()
		s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Status: rw.status, IfNoneMatch: r.Header.Get("If-None-Match"), Corrupted: rw.flipped})
		s.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	s.Endpoint = ts.URL
	for k, v := range s.env(dir) {
		t.Setenv(k, v)
	}
	return s
}

// Corrupt makes the server flip one byte (the middle one, XOR 0x01: a digit stays a digit, a letter a
// letter) of the next times GET replies of the object key (a key in the bucket, "runs/a/records/…");
// times < 0 corrupts every GET of it, 0 none. Such a reply carries no x-amz-checksum-* header (as from
// a store that keeps none), so the client takes the bytes as they come. What the server stores is not
// changed.
func (s *Server) Corrupt(key string, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults["/"+s.Bucket+"/"+strings.TrimPrefix(key, "/")] = times
}

// takeFault reports whether this GET of path is to be corrupted, counting it.
func (s *Server) takeFault(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.faults[path]
	switch {
	case !ok || n == 0:
		return false
	case n > 0:
		s.faults[path] = n - 1
	}
	return true
}

type statusWriter struct {
	http.ResponseWriter
	status  int
	flip    bool  // flip the middle byte of the body
	size    int64 // the body's length (Content-Length), read at the first write
	off     int64 // body bytes written so far
	flipped bool
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.flip && w.off == 0 && w.status == http.StatusOK { // a whole object's reply (not a range)
		fmt.Sscan(w.Header().Get("Content-Length"), &w.size)
		// As a store that keeps no checksums answers: the SDK checks a reply's x-amz-checksum-* when
		// there is one, and would name the flipped byte itself.
		for k := range w.Header() {
			if strings.HasPrefix(strings.ToLower(k), "x-amz-checksum-") {
				w.Header().Del(k)
			}
		}
	}
	if at := w.size / 2; w.flip && w.size > 0 && !w.flipped && at >= w.off && at < w.off+int64(len(b)) {
		c := append([]byte(nil), b...)
		c[at-w.off] ^= 0x01
		w.flipped = true
		b = c
	}
	w.off += int64(len(b))
	return w.ResponseWriter.Write(b)
}

func (s *Server) env(dir string) map[string]string {
	empty := filepath.Join(dir, "aws-empty")
	os.WriteFile(empty, nil, 0o600)
	return map[string]string{
		"AWS_ACCESS_KEY_ID":           "framesweep",
		"AWS_SECRET_ACCESS_KEY":       "framesweep-secret",
		"AWS_REGION":                  "us-east-1",
		"AWS_CONFIG_FILE":             empty,
		"AWS_SHARED_CREDENTIALS_FILE": empty,
		"AWS_EC2_METADATA_DISABLED":   "true",
	}
}

// Env is the environment a child process needs to reach the server (the variables Start set).
func (s *Server) Env() []string {
	var out []string
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_EC2_METADATA_DISABLED"} {
		out = append(out, k+"="+os.Getenv(k))
	}
	return out
}

// URL is the blob URL of prefix in the bucket (s3://BUCKET/PREFIX?endpoint=…&use_path_style=true).
func (s *Server) URL(prefix string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&use_path_style=true&region=us-east-1", s.Bucket, prefix, s.Endpoint)
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}
