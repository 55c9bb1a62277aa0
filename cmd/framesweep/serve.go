package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/serve"
)

// serveReady is the one JSON line `serve` prints on stdout once it listens.
type serveReady struct {
	URL   string   `json:"url"`
	Roots []string `json:"roots"`
	Cache string   `json:"cache,omitempty"`
	Token bool     `json:"token"`
}

// runServe: framesweep serve [--addr 127.0.0.1:8765] --root DIR [--root DIR…] [--token-file F]
// [--max-inflight N] [--cache CACHE] [limits] — the HTTP API of serve/ (docs/serve.md).
func runServe(args []string, stdout, stderr io.Writer) int {
	const name = "serve"
	fs := newFlags(name, stderr)
	var roots, allowHosts stringsFlag
	addr := fs.String("addr", serve.DefaultAddr, "listen address (loopback by default; any other needs --token-file)")
	fs.Var(&roots, "root", "directory the videos are named under (repeatable; at least one)")
	tokenFile := fs.String("token-file", "", "regular file (at most 4 KiB) holding the bearer token every request must send (Authorization: Bearer <token>)")
	fs.Var(&allowHosts, "allow-host", "a name the Host header may give besides loopback names and the listening address (repeatable; others get 421)")
	maxInflight := fs.Int("max-inflight", serve.DefaultMaxInflight, "requests served at once (a slot is taken once the body has arrived); one more gets 503 with Retry-After")
	maxBodies := fs.Int("max-bodies", serve.DefaultMaxBodies, "request bodies read at once, before a slot is taken; one more gets 503 with Retry-After")
	maxPerClient := fs.Int("max-per-client", serve.DefaultMaxPerClient, "requests one client address may have in progress; one more gets 429 with Retry-After")
	cacheLoc := fs.String("cache", "", "content-addressed cache to read objects from and write built ones to (as extract --out)")
	maxRespMB := fs.Int64("max-response-mb", serve.DefaultMaxResponseBytes>>20, "largest object served (MiB), checked from the plan before decoding")
	maxFrames := fs.Int("max-frames", serve.DefaultMaxFrames, "most frames (plan positions) in one object")
	lruMB := fs.Int64("lru-mb", serve.DefaultLRUBytes>>20, "recent objects kept in memory (MiB; 0 = none)")
	window := fs.Duration("share-window", serve.DefaultWindow, "how long a decoding pass waits for more requests of the same video (0 = none)")
	dec := addDecodeFlags(fs, dWorker) // stream, rotation and damaged frames are each request's
	addJSON(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep serve [--addr 127.0.0.1:8765] --root DIR [--root DIR…] [--token-file F] [--allow-host H…] [--max-inflight N] [--max-bodies N] [--max-per-client N] [--cache CACHE] [--worker]")
		printFlags(fs)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	switch {
	case len(pos) > 0:
		return usageErr(stderr, name, "unexpected arguments %q (videos are named by requests, under --root)", pos)
	case len(roots) == 0:
		return usageErr(stderr, name, "--root DIR is required (requests name videos under it)")
	case *maxInflight < 1 || *maxBodies < 1 || *maxPerClient < 1:
		return usageErr(stderr, name, "--max-inflight, --max-bodies and --max-per-client must be ≥ 1")
	case *maxRespMB < 1 || *maxFrames < 1 || *lruMB < 0:
		return usageErr(stderr, name, "--max-response-mb and --max-frames must be ≥ 1, --lru-mb ≥ 0")
	case *window < 0:
		return usageErr(stderr, name, "--share-window must be ≥ 0")
	}
	o, err := dec.d.Options()
	if err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	for _, h := range allowHosts {
		if err := serve.CheckAllowHost(h); err != nil {
			return usageErr(stderr, name, "--allow-host: %v", err)
		}
	}
	cfg := serve.Config{Roots: roots, MaxInflight: *maxInflight, MaxBodies: *maxBodies, MaxPerClient: *maxPerClient, MaxResponseBytes: *maxRespMB << 20, MaxFrames: *maxFrames,
		LRUBytes: *lruMB << 20, Window: *window, AllowHosts: allowHosts, Log: stderr}
	if *lruMB == 0 {
		cfg.LRUBytes = -1
	}
	if *window == 0 {
		cfg.Window = -1
	}
	cfg.Worker = o.Worker
	if *tokenFile != "" {
		if cfg.Token, err = readToken(*tokenFile); err != nil {
			return failErr(stderr, name, err)
		}
	}
	if !loopback(*addr) && cfg.Token == "" {
		return usageErr(stderr, name, "--addr %s is not a loopback address: give --token-file so that only holders of the token are served", *addr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *cacheLoc != "" {
		if cfg.Store, err = cache.Open(ctx, *cacheLoc); err != nil {
			return failErr(stderr, name, err)
		}
		defer cfg.Store.Close()
	}
	s, err := serve.New(cfg)
	if err != nil {
		return failErr(stderr, name, err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return failErr(stderr, name, err)
	}
	url := "http://" + ln.Addr().String()
	b, _ := json.Marshal(serveReady{URL: url, Roots: roots, Cache: *cacheLoc, Token: cfg.Token != ""})
	fmt.Fprintf(stdout, "%s\n", b)
	fmt.Fprintf(stderr, "framesweep serve: listening on %s (%d root(s)); Ctrl-C stops\n", url, len(roots))
	if err := s.Serve(ctx, ln, 10*time.Second); err != nil {
		return failErr(stderr, name, err)
	}
	return exitOK
}

// loopback reports whether addr (host:port) listens on a loopback address only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// maxTokenFile bounds --token-file's size.
const maxTokenFile = 4 << 10

// readToken reads --token-file: a regular file of at most maxTokenFile bytes holding one word
// (surrounding white space ignored). Anything else is refused before it is read: a FIFO would block
// until a writer comes, a device (/dev/zero) would be read until memory runs out.
func readToken(path string) (string, error) {
	// O_NONBLOCK: a FIFO opens at once instead of waiting for a writer (and is refused below).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	switch m := st.Mode(); {
	case !m.IsRegular():
		return "", fmt.Errorf("%s: the token file must be a regular file, not %s", path, serve.FileKind(m))
	case st.Size() > maxTokenFile:
		return "", fmt.Errorf("%s: the token file is %d bytes; at most %d are read", path, st.Size(), maxTokenFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("%s: the token file grew past %d bytes while it was read", path, maxTokenFile)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case tok == "":
		return "", fmt.Errorf("%s: the token file is empty", path)
	case strings.ContainsAny(tok, " \t\r\n"):
		return "", fmt.Errorf("%s: the token must be one word (no white space inside)", path)
	}
	return tok, nil
}
