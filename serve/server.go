package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/engine/procfd"
	"github.com/framesweep/framesweep/internal/engine/worker"
	"github.com/framesweep/framesweep/internal/npy"
	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/sampler"
)

// Defaults of Config's limits (a zero field takes its default).
const (
	DefaultAddr             = "127.0.0.1:8765"
	DefaultMaxInflight      = 4
	DefaultMaxBodyBytes     = 1 << 20
	DefaultMaxResponseBytes = 512 << 20
	DefaultMaxFrames        = 4096
	DefaultLRUBytes         = 256 << 20
	DefaultWindow           = 25 * time.Millisecond
	// descriptions of videos kept (sha256 + index scan), by file version and stream options
	videoEntries = 4096
	// Slow clients: the header and the body must arrive in time, and a response is written under a
	// deadline of DefaultWriteTimeout plus one second per writeMinRate bytes.
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	writeMinRate         = 4 << 20 // bytes per second a client must at least read
)

// Config configures a Server. Zero limits are the defaults above.
type Config struct {
	Roots []string // directories videos are named under (at least one)
	Token string   // when set, every request needs "Authorization: Bearer <Token>"
	// MaxInflight bounds the requests being served at once (probe, plan, frames); one more is a 503
	// with Retry-After. Peak memory is bounded by about 1.25 × (MaxInflight × the largest object +
	// LRUBytes) + 64 MiB per slot over the idle process (docs/serve.md, "Memory"). A request takes its
	// slot only once its body has arrived (admit.go).
	MaxInflight int
	// MaxBodies bounds the request bodies being read at once (each at most MaxBodyBytes; 503 beyond),
	// MaxPerClient the requests one client address has in progress (429 beyond); admit.go.
	MaxBodies, MaxPerClient int
	MaxBodyBytes            int64         // request bodies over it are 413
	MaxResponseBytes        int64         // an object over it (checked from the plan, before decoding) is 422
	MaxFrames               int           // frames per object (plan positions) over it are 422
	LRUBytes                int64         // recent objects kept in memory; negative: none
	Window                  time.Duration // how long a pass waits for more requests of its video; negative: none
	Store                   *cache.Store  // optional content-addressed cache: read first, written after a build
	Worker                  *worker.Limits
	// AllowHosts are names the Host header may give besides the loopback names and the address the
	// server listens on (a name it is reached by through a proxy or DNS); others get 421.
	AllowHosts []string
	Log        io.Writer // server errors and panics; nil: discarded
	// Slow-client timeouts (zero: the defaults above).
	HeaderTimeout, BodyTimeout, WriteTimeout time.Duration
}

// Server is the HTTP API over the engine. It is an http.Handler; Serve runs it on a listener.
type Server struct {
	cfg     Config
	roots   roots
	hosts   *hosts
	token   *[32]byte // sha256 of the token, compared in constant time
	window  time.Duration
	sem     chan struct{}
	bodies  chan struct{} // body readers (admit.go)
	clients *clients
	videos  *videos
	objects *lru[string, *object]
	log     *log.Logger
	mux     *http.ServeMux

	ctx        context.Context // passes and requests derive from it; Close cancels it
	cancel     context.CancelFunc
	endWorkers func() // ends the worker processes (Config.Worker); Close calls it

	mu       sync.Mutex
	open     map[passKey]*batch
	building map[buildKey]building

	stats   counters
	reclaim reclaimer
}

type counters struct {
	requests, errors, overloaded, passes, running, framesRequested, framesDecoded, codecFrames, built, joined,
	lruHits, storeHits, storeWrites, storeErrors, bytesSent atomic.Int64
}

// Stats are the server's counters since it started (GET /v1/health reports them).
type Stats struct {
	Requests        int64 `json:"requests"`
	Errors          int64 `json:"errors"`           // responses with status ≥ 400
	Overloaded      int64 `json:"overloaded"`       // 503s for want of a slot
	Passes          int64 `json:"passes"`           // decoding passes started
	PassesRunning   int64 `json:"passes_running"`   // decoding passes in progress now
	FramesRequested int64 `json:"frames_requested"` // plan positions of the objects the passes built
	FramesDecoded   int64 `json:"frames_decoded"`   // frames the passes decoded and converted
	CodecFrames     int64 `json:"codec_frames"`     // pictures the codec output (GOP warm-up included)
	ObjectsBuilt    int64 `json:"objects_built"`    // objects built by passes
	JoinedBuilds    int64 `json:"joined_builds"`    // requests that waited for a build of the same key
	LRUHits         int64 `json:"lru_hits"`         // objects served from memory
	StoreHits       int64 `json:"store_hits"`       // objects served from the cache
	StoreWrites     int64 `json:"store_writes"`     // objects written to the cache
	StoreErrors     int64 `json:"store_errors"`     // cache reads or writes that failed (logged; served anyway)
	BytesSent       int64 `json:"bytes_sent"`       // object bytes written to clients
	LRUBytes        int64 `json:"lru_bytes"`        // bytes held by the LRU now
	LRUObjects      int   `json:"lru_objects"`      // objects held by the LRU now
	Inflight        int   `json:"inflight"`         // requests being served now
	ReadingBodies   int   `json:"reading_bodies"`   // request bodies being read now (no slot held)
	InProgress      int   `json:"in_progress"`      // requests admitted and not yet answered, slot or not
	OpenBatches     int   `json:"open_batches"`     // videos whose batch still accepts requests
	Building        int   `json:"objects_building"` // content keys being built now
	Reclaims        int64 `json:"reclaims"`         // collections that returned dropped objects' memory to the OS
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	rs, err := newRoots(cfg.Roots)
	if err != nil {
		return nil, err
	}
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	if cfg.MaxInflight == 0 {
		cfg.MaxInflight = DefaultMaxInflight
	}
	if cfg.MaxFrames == 0 {
		cfg.MaxFrames = DefaultMaxFrames
	}
	if cfg.MaxBodies == 0 {
		cfg.MaxBodies = DefaultMaxBodies
	}
	if cfg.MaxPerClient == 0 {
		cfg.MaxPerClient = DefaultMaxPerClient
	}
	def(&cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	def(&cfg.MaxResponseBytes, DefaultMaxResponseBytes)
	def(&cfg.LRUBytes, DefaultLRUBytes)
	for _, d := range []struct {
		v *time.Duration
		d time.Duration
	}{{&cfg.HeaderTimeout, DefaultHeaderTimeout}, {&cfg.BodyTimeout, DefaultBodyTimeout}, {&cfg.WriteTimeout, DefaultWriteTimeout}} {
		if *d.v <= 0 {
			*d.v = d.d
		}
	}
	switch {
	case cfg.MaxInflight < 0 || cfg.MaxFrames < 0 || cfg.MaxBodyBytes < 0 || cfg.MaxResponseBytes < 0 || cfg.MaxBodies < 0 || cfg.MaxPerClient < 0:
		return nil, errors.New("limits must not be negative")
	case strings.ContainsAny(cfg.Token, " \t\r\n"):
		return nil, errors.New("the token must not contain white space")
	}
	hs, err := newHosts(cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	if err := procfd.Check(); err != nil {
		return nil, err // videos are decoded through the descriptors serve opens
	}
	// With Worker, one pool of at most MaxInflight worker processes decodes for every request.
	base, endWorkers := pipeline.Options{Worker: cfg.Worker}.WithWorkerPool(cfg.MaxInflight)
	s := &Server{cfg: cfg, roots: rs, hosts: hs, window: cfg.Window, sem: make(chan struct{}, cfg.MaxInflight),
		bodies: make(chan struct{}, cfg.MaxBodies), clients: newClients(cfg.MaxPerClient), endWorkers: endWorkers,
		videos: newVideos(base, videoEntries), open: map[passKey]*batch{}, building: map[buildKey]building{}}
	switch {
	case s.window == 0:
		s.window = DefaultWindow
	case s.window < 0:
		s.window = 0
	}
	s.objects = newLRU[string, *object](max(cfg.LRUBytes, 0), (*object).size)
	s.objects.evicted = func(o *object) { s.reclaim.dropped(o.size()) }
	s.mux = s.endpoints()
	if cfg.Token != "" {
		h := sha256.Sum256([]byte(cfg.Token))
		s.token = &h
	}
	w := cfg.Log
	if w == nil {
		w = io.Discard
	}
	s.log = log.New(w, "framesweep serve: ", log.LstdFlags)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

func (s *Server) logf(format string, a ...any) { s.log.Printf(format, a...) }

// Close cancels every pass and request in progress and ends the worker processes. It is idempotent.
func (s *Server) Close() error {
	s.cancel()
	s.endWorkers()
	return nil
}

// Serve answers on ln until ctx ends, then shuts down gracefully (requests in progress get up to
// grace to finish) and closes s.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	s.hosts.listening(ln.Addr())
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.cfg.HeaderTimeout, // slow-loris: the header must arrive in time
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          s.log,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
		case <-s.ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			srv.Close()
		}
		s.Close()
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	s.Close()
	<-done
	return err
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	c := &s.stats
	st := Stats{Requests: c.requests.Load(), Errors: c.errors.Load(), Overloaded: c.overloaded.Load(),
		Passes: c.passes.Load(), PassesRunning: c.running.Load(), FramesRequested: c.framesRequested.Load(), FramesDecoded: c.framesDecoded.Load(),
		CodecFrames: c.codecFrames.Load(), ObjectsBuilt: c.built.Load(), JoinedBuilds: c.joined.Load(),
		LRUHits: c.lruHits.Load(), StoreHits: c.storeHits.Load(), StoreWrites: c.storeWrites.Load(),
		StoreErrors: c.storeErrors.Load(), BytesSent: c.bytesSent.Load(), Inflight: len(s.sem), Reclaims: s.reclaim.runs.Load(),
		ReadingBodies: len(s.bodies), InProgress: s.clients.inProgress()}
	st.LRUBytes, st.LRUObjects = s.objects.usage()
	s.mu.Lock()
	st.OpenBatches, st.Building = len(s.open), len(s.building)
	s.mu.Unlock()
	return st
}

// statusWriter remembers the status for the counters; Unwrap keeps http.ResponseController working.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP implements http.Handler: it counts the request, turns a panic into a logged 500, checks
// the token (before routing, so an unknown endpoint is a 401 too without it) and hands the request to
// the endpoints' ServeMux.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	s.stats.requests.Add(1)
	w := &statusWriter{ResponseWriter: rw}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.logf("panic serving %s %s: %v", r.Method, r.URL.Path, p)
			if w.status == 0 {
				writeError(w, apiErr(http.StatusInternalServerError, CodeInternal, "internal error"))
			}
		}
		if w.status >= 400 {
			s.stats.errors.Add(1)
		}
	}()
	if e := s.checkBrowser(r); e != nil {
		writeError(w, e)
		return
	}
	if !s.authorized(r) {
		writeError(w, apiErr(http.StatusUnauthorized, CodeUnauthorized, "a bearer token is required (Authorization: Bearer <token>)"))
		return
	}
	if r.URL.Path == "" || path.Clean(r.URL.Path) != r.URL.Path {
		// ServeMux would redirect to the cleaned path; an API client gets a plain 404 instead.
		writeError(w, noEndpoint(r.URL.Path))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// endpoints is the API's routing: Go's ServeMux patterns with a method, plus, per path, a fallback
// that answers any other method with a JSON 405 (ServeMux's own is plain text), and a JSON 404 for
// every other path. A GET pattern also serves HEAD.
func (s *Server) endpoints() *http.ServeMux {
	mux := http.NewServeMux()
	for _, e := range []struct {
		method, path string
		h            func(http.ResponseWriter, *http.Request) error
	}{
		{http.MethodGet, "/v1/health", s.health},
		{http.MethodGet, "/v1/probe", s.probe},
		{http.MethodPost, "/v1/plan", s.plan},
		{http.MethodPost, "/v1/frames", s.frames},
	} {
		mux.Handle(e.method+" "+e.path, s.endpoint(e.h))
		mux.Handle(e.path, s.endpoint(func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Allow", e.method)
			return apiErr(http.StatusMethodNotAllowed, CodeMethod, "%s needs %s, not %s", r.URL.Path, e.method, r.Method)
		}))
	}
	mux.Handle("/", s.endpoint(func(_ http.ResponseWriter, r *http.Request) error { return noEndpoint(r.URL.Path) }))
	return mux
}

func noEndpoint(path string) *Error {
	return apiErr(http.StatusNotFound, CodeNotFound, "no endpoint %s (see /v1/health, /v1/probe, /v1/plan, /v1/frames)", path)
}

// endpoint adapts a handler that returns its error: the error becomes the JSON response, or, when the
// response has already started, a log line.
func (s *Server) endpoint(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		if sw, ok := w.(*statusWriter); ok && sw.status != 0 {
			s.logf("%s %s after the response started: %v", r.Method, r.URL.Path, err)
			return
		}
		e := asError(err)
		if e.Status >= 500 && e.Code != CodeOverloaded && e.Code != CodeUnavailable {
			s.logf("%s %s: %s", r.Method, r.URL.Path, e.Message)
		}
		writeError(w, e)
	})
}

func (s *Server) authorized(r *http.Request) bool {
	if s.token == nil {
		return true
	}
	h := r.Header.Get("Authorization")
	const p = "bearer "
	if len(h) < len(p) || !strings.EqualFold(h[:len(p)], p) {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(h[len(p):])))
	return subtle.ConstantTimeCompare(got[:], s.token[:]) == 1
}

// acquire takes a slot or fails with 503.
func (s *Server) acquire() (func(), error) {
	select {
	case s.sem <- struct{}{}:
		return func() {
			if <-s.sem; len(s.sem) == 0 {
				s.reclaim.idle()
			}
		}, nil
	default:
		s.stats.overloaded.Add(1)
		return nil, apiErr(http.StatusServiceUnavailable, CodeOverloaded, "all %d slots are busy; retry", cap(s.sem))
	}
}

// readSpec reads and validates a JSON request body within the size and time limits, holding one of
// the body readers (not a slot: admit.go) while it does.
func (s *Server) readSpec(w http.ResponseWriter, r *http.Request) (*spec, error) {
	if err := checkJSON(r); err != nil {
		w.Header().Set("Connection", "close") // the body is not read
		return nil, err
	}
	done, err := s.readingBody()
	if err != nil {
		w.Header().Set("Connection", "close")
		return nil, err
	}
	defer done()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	if r.ContentLength > s.cfg.MaxBodyBytes {
		w.Header().Set("Connection", "close")
		return nil, apiErr(http.StatusRequestEntityTooLarge, CodeTooLarge, "the body (%d bytes) is over the limit of %d bytes", r.ContentLength, s.cfg.MaxBodyBytes)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		// The deadline stays: net/http would otherwise wait for the rest of the body before it
		// answers, to keep the connection. This one closes after the error.
		w.Header().Set("Connection", "close")
		var mb *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mb):
			return nil, apiErr(http.StatusRequestEntityTooLarge, CodeTooLarge, "the body is over the limit of %d bytes", s.cfg.MaxBodyBytes)
		case errors.As(err, &ne) && ne.Timeout():
			return nil, apiErr(http.StatusRequestTimeout, CodeTimeout, "the body did not arrive within %v", s.cfg.BodyTimeout)
		}
		return nil, badRequest("reading the body: %v", err)
	}
	_ = rc.SetReadDeadline(time.Time{})
	req, err := DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	sp, err := req.spec()
	if err == nil && sp.config.Loader != "" && s.cfg.Worker != nil {
		return nil, badRequest("loader %s: this server decodes in worker processes (--worker), and a harness loader reads packets in file order in this process; /v1/health lists the loaders a server builds", sp.config.Loader)
	}
	return sp, err
}

// loaders are the harness loaders this server builds: none when it decodes in worker processes.
func (s *Server) loaders() []string {
	if s.cfg.Worker != nil {
		return []string{}
	}
	return loader.Names()
}

func writeJSON(w http.ResponseWriter, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	_, err = w.Write(append(b, '\n'))
	return err
}

// Health is the JSON of GET /v1/health.
type Health struct {
	Status           string `json:"status"`
	Engine           string `json:"engine"`
	Roots            int    `json:"roots"`
	Cache            bool   `json:"cache"`
	Worker           bool   `json:"worker"`
	MaxInflight      int    `json:"max_inflight"`
	MaxBodies        int    `json:"max_bodies"`
	MaxPerClient     int    `json:"max_per_client"`
	MaxBodyBytes     int64  `json:"max_body_bytes"`
	MaxResponseBytes int64  `json:"max_response_bytes"`
	MaxFrames        int    `json:"max_frames"`
	LRUCapacity      int64  `json:"lru_capacity_bytes"`
	WindowMS         int64  `json:"window_ms"`
	// Loaders are the harness loaders a request's "loader" may name (docs/loaders.md); none on a
	// server that decodes in worker processes.
	Loaders []string `json:"loaders"`
	Stats   Stats    `json:"stats"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	if len(r.URL.Query()) > 0 {
		return badRequest("health takes no parameters")
	}
	return writeJSON(w, Health{Status: "ok", Engine: version.Engine, Roots: len(s.roots), Cache: s.cfg.Store != nil,
		Worker: s.cfg.Worker != nil, MaxInflight: s.cfg.MaxInflight, MaxBodies: s.cfg.MaxBodies, MaxPerClient: s.cfg.MaxPerClient, MaxBodyBytes: s.cfg.MaxBodyBytes,
		MaxResponseBytes: s.cfg.MaxResponseBytes, MaxFrames: s.cfg.MaxFrames, LRUCapacity: max(s.cfg.LRUBytes, 0),
		WindowMS: s.window.Milliseconds(), Loaders: s.loaders(), Stats: s.Stats()})
}

// probe: GET /v1/probe?video=REL[&stream=N][&no_autorotate=true] → decode.Info.
func (s *Server) probe(w http.ResponseWriter, r *http.Request) error {
	leave, err := s.admit(r)
	if err != nil {
		return err
	}
	defer leave()
	release, err := s.acquire()
	if err != nil {
		return err
	}
	defer release()
	q := r.URL.Query()
	var o pipeline.Options
	for k, vs := range q {
		if len(vs) != 1 {
			return badRequest("query parameter %s given %d times", k, len(vs))
		}
		switch k {
		case "video":
		case "stream":
			n, err := strconv.Atoi(vs[0])
			if err != nil || n < 0 || n > 1<<16 {
				return badRequest("stream %q: want a stream index ≥ 0", vs[0])
			}
			o.Stream = &n
		case "no_autorotate":
			b, err := strconv.ParseBool(vs[0])
			if err != nil {
				return badRequest("no_autorotate %q: want true or false", vs[0])
			}
			o.NoAutorotate = b
		default:
			return badRequest("unknown query parameter %q (probe takes video, stream, no_autorotate)", k)
		}
	}
	name := q.Get("video")
	if err := (&Request{Video: name}).checkVideo(); err != nil {
		return err
	}
	f, v, _, err := s.video(r.Context(), name, o)
	if err != nil {
		return err
	}
	defer f.Close()
	return writeJSON(w, v.Info)
}

// video opens name beneath the roots and describes the file it opened (the request reads nothing
// else). The caller closes the returned *video.
func (s *Server) video(ctx context.Context, name string, o pipeline.Options) (*video, pipeline.Video, passKey, error) {
	f, err := s.roots.open(name)
	if err != nil {
		return nil, pipeline.Video{}, passKey{}, err
	}
	k := keyFor(f.path, f.id, o)
	v, err := s.videos.get(ctx, k, f.f)
	if err != nil {
		f.Close()
		var e *Error
		switch {
		case errors.As(err, &e):
		case ctx.Err() != nil:
			err = apiErr(http.StatusServiceUnavailable, CodeUnavailable, "request cancelled: %v", err)
		default:
			err = apiErr(http.StatusInternalServerError, CodeInternal, "%v", err)
		}
		return nil, v, k, err
	}
	return f, v, k, nil
}

// job plans the request's one configuration for v, within the response limits.
func (s *Server) job(ctx context.Context, v pipeline.Video, sp *spec) (*pipeline.Job, error) {
	jobs, fails, err := pipeline.PlanJobsContext(ctx, v, []grid.Config{sp.config}, sp.opts)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	if len(fails) > 0 {
		if isRequestErr(fails[0].Err) {
			return nil, badRequest("%v", fails[0].Err)
		}
		return nil, unplannable("%v", fails[0].Err)
	}
	if len(jobs) != 1 {
		return nil, fmt.Errorf("planning one configuration gave %d jobs", len(jobs))
	}
	return jobs[0], nil
}

// checkSize refuses, before any decoding, an object over the response limits; it returns the
// object's estimated size.
func (s *Server) checkSize(j *pipeline.Job) (int64, error) {
	if n := j.Frames(); n > s.cfg.MaxFrames {
		return 0, apiErr(http.StatusUnprocessableEntity, CodeResponseTooLarge, "the plan has %d frames; this server serves at most %d per object (--max-frames)", n, s.cfg.MaxFrames)
	}
	// The header (provenance JSON) grows with the frame count: indices, pts and pts_s, ≈ 64 bytes a frame.
	est := j.TensorBytes() + int64(8*j.Frames()) + 64*int64(j.Frames()) + 16<<10
	if est > s.cfg.MaxResponseBytes {
		return 0, apiErr(http.StatusUnprocessableEntity, CodeResponseTooLarge, "the object would be about %d bytes (%v %s); this server's limit is %d (--max-response-mb)", est, j.Shape(), j.DType, s.cfg.MaxResponseBytes)
	}
	return est, nil
}

// PlanResponse is the JSON of POST /v1/plan: `framesweep plan --json`'s report for the video and the
// configuration (pipeline.PlanReport), then what POST /v1/frames would return for it (config id,
// content key, tensor).
type PlanResponse struct {
	pipeline.PlanReport

	Config      string `json:"config"`
	Loader      string `json:"loader,omitempty"` // the harness loader that reads the frames (omitted: framesweep's own reading)
	Key         string `json:"key"`
	VideoSHA256 string `json:"video_sha256"`
	StreamIndex int    `json:"stream_index"`
	Pipeline    string `json:"pipeline"`
	Geometry    string `json:"geometry"`
	Kernel      string `json:"kernel"`
	DType       string `json:"dtype"`
	Norm        string `json:"norm"`
	Shape       []int  `json:"shape"`
	TensorBytes int64  `json:"tensor_bytes"`
}

func (s *Server) plan(w http.ResponseWriter, r *http.Request) error {
	leave, err := s.admit(r)
	if err != nil {
		return err
	}
	defer leave()
	sp, err := s.readSpec(w, r)
	if err != nil {
		return err
	}
	release, err := s.acquire()
	if err != nil {
		return err
	}
	defer release()
	f, v, _, err := s.video(r.Context(), sp.req.Video, sp.opts)
	if err != nil {
		return err
	}
	defer f.Close()
	v.File = f.f // a loader's reader opens the video again: through this descriptor
	j, err := s.job(r.Context(), v, sp)
	if err != nil {
		return err
	}
	in := v.Info
	report := pipeline.NewPlanReport(v.Path, sampler.Video{Frames: in.Frames, FPS: in.FPS, DurationS: in.DurationS}, j.Selection)
	if j.Loader != nil { // the loader's reader's count, rate and plan
		report = pipeline.NewLoaderReport(v.Path, j.Loader.Plan)
	}
	out := PlanResponse{PlanReport: report, Config: sp.config.ID, Loader: sp.config.Loader, Key: j.Key, VideoSHA256: v.SHA256, StreamIndex: j.Spec.Stream, Pipeline: j.Pipeline,
		Geometry: j.Geometry, Kernel: j.Spec.Kernel, DType: string(j.DType), Norm: j.Norm, Shape: j.Shape(),
		TensorBytes: j.TensorBytes()}
	out.SetLayout(j.Layout)
	if sp.config.Resolution != "" {
		out.Resolution = j.Geometry
	}
	return writeJSON(w, out)
}

// frames: POST /v1/frames → the object (safetensors) or its frames tensor (npy).
func (s *Server) frames(w http.ResponseWriter, r *http.Request) error {
	leave, err := s.admit(r)
	if err != nil {
		return err
	}
	defer leave()
	q := r.URL.Query()
	for k := range q {
		if k != "format" {
			return badRequest("unknown query parameter %q (frames takes format)", k)
		}
	}
	sp, err := s.readSpec(w, r)
	if err != nil {
		return err
	}
	release, err := s.acquire()
	if err != nil {
		return err
	}
	defer release()
	format, err := sp.format(q.Get("format"))
	if err != nil {
		return err
	}
	f, v, k, err := s.video(r.Context(), sp.req.Video, sp.opts)
	if err != nil {
		return err
	}
	defer f.Close()
	v.File = f.f // a loader's reader opens the video again: through this descriptor
	j, err := s.job(r.Context(), v, sp)
	if err != nil {
		return err
	}
	est, err := s.checkSize(j)
	if err != nil {
		return err
	}
	o, served, err := s.object(r.Context(), k, v, j, f.f)
	if err != nil {
		s.reclaim.dropped(est) // what a failed build may have allocated
		return err
	}
	err = s.send(w, o, format, served, sp.config.ID)
	// The object is garbage now unless the LRU holds it (its eviction counts it then). Collecting here,
	// before the slot is freed and the end of the response flushed, lets the next request build in
	// the memory this one leaves (o is not used past this line, so it is not live during it).
	if key, n := o.Key, o.size(); !s.objects.has(key) {
		s.reclaim.dropped(n)
	}
	return err
}

// object returns j's object: from the LRU, the store, or a (shared) decoding pass over file.
func (s *Server) object(ctx context.Context, k passKey, v pipeline.Video, j *pipeline.Job, file *os.File) (*object, string, error) {
	// An object built under on_damaged keep with damaged frames is not what a "fail" request gets
	// (extract under fail refuses those frames): such a request builds, and fails, afresh.
	usable := func(o *object) bool { return k.OnDamaged == decode.DamagedKeep || o.Meta["damaged"] == "[]" }
	if o, ok := s.objects.get(j.Key); ok && usable(o) {
		s.stats.lruHits.Add(1)
		return o, "lru", nil
	}
	if st := s.cfg.Store; st != nil {
		if _, _, err := st.Stat(ctx, j.Key); err == nil {
			b, _, err := st.Get(ctx, j.Key)
			var o *object
			if err == nil {
				o, err = fromStored(j.Key, b)
			}
			switch {
			case err == nil && usable(o):
				s.stats.storeHits.Add(1)
				s.objects.put(j.Key, o)
				return o, "store", nil
			case err != nil:
				s.stats.storeErrors.Add(1)
				s.logf("cache: %s: %v (building it again)", j.Key, err)
			}
			s.reclaim.dropped(int64(len(b))) // read, and not served
		} else if !errors.Is(err, cache.ErrNotFound) && !errors.Is(err, cache.ErrCorrupt) {
			s.stats.storeErrors.Add(1)
			s.logf("cache: %s: %v (building it)", j.Key, err)
		}
	}
	o, shared, err := s.build(ctx, k, v, j, file)
	if err != nil {
		return nil, "", err
	}
	if shared {
		s.stats.joined.Add(1)
		return o, "joined", nil
	}
	return o, "decoded", nil
}

// send writes o as the response, with a write deadline sized to it (a client that reads slower than
// writeMinRate is cut off).
func (s *Server) send(w http.ResponseWriter, o *object, format, served, config string) error {
	var parts [][]byte
	ext := ".safetensors"
	if format == FormatNPY {
		var err error
		if parts, err = npy.Encode(string(o.DType), o.Shape, o.Data); err != nil {
			return err
		}
		ext = ".npy"
	} else {
		parts = [][]byte{o.Header, o.Data, o.Tail}
	}
	var n int64
	for _, p := range parts {
		n += int64(len(p))
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	h.Set("Content-Disposition", `attachment; filename="`+o.Key+ext+`"`)
	h.Set("X-Framesweep-Format", format)
	h.Set("X-Framesweep-Key", o.Key)
	h.Set("X-Framesweep-Config", config)
	h.Set("X-Framesweep-Frames-Sha256", o.DataSHA256)
	h.Set("X-Framesweep-Shape", joinInts(o.Shape))
	h.Set("X-Framesweep-Dtype", string(o.DType))
	h.Set("X-Framesweep-Indices", joinInts(o.Indices))
	h.Set("X-Framesweep-Source-Sha256", o.Meta["source_sha256"])
	h.Set("X-Framesweep-Pipeline", o.Meta["pipeline"])
	if l := o.Meta["loader"]; l != "" {
		h.Set("X-Framesweep-Loader", l)
	}
	h.Set("X-Framesweep-Served", served)
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout + time.Duration(n/writeMinRate)*time.Second))
	w.WriteHeader(http.StatusOK)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
		s.stats.bytesSent.Add(int64(len(p)))
	}
	return nil
}

func joinInts(xs []int) string {
	b := make([]byte, 0, 6*len(xs))
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(b)
}
