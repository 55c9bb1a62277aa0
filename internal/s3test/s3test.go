// Package s3test starts an S3-protocol server on 127.0.0.1 for tests: github.com/johannesboyne/gofakes3
// (MIT) over a file-backed store (its bbolt backend, one file in the test's temp directory), reached
// over real HTTP by the real S3 client (gocloud's s3blob on the AWS SDK v2). Only tests import it.
package s3test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
)

// Server is a running S3-protocol server with one bucket.
type Server struct {
	Bucket   string
	Endpoint string // http://127.0.0.1:PORT

	mu  sync.Mutex
	log []Request
}

// Request is one request the server answered.
type Request struct {
	Method, Path string
	Status       int
	IfNoneMatch  string
}

// Start serves a bucket until the test ends and sets the AWS SDK's environment (static credentials, a
// region, no shared config files, no instance metadata) for this process; Env gives it to children.
func Start(t testing.TB) *Server {
	t.Helper()
	dir := t.TempDir()
	be, err := s3bolt.NewFile(filepath.Join(dir, "s3.bolt"))
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Bucket: "framesweep-test"}
	if err := be.CreateBucket(s.Bucket); err != nil {
		t.Fatal(err)
	}
	h := gofakes3.New(be).Server()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &statusWriter{ResponseWriter: w, status: 200}
		h.ServeHTTP(rw, r)
		s.mu.Lock()
		s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Status: rw.status, IfNoneMatch: r.Header.Get("If-None-Match")})
		s.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	s.Endpoint = ts.URL
	for k, v := range s.env(dir) {
		t.Setenv(k, v)
	}
	return s
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
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
