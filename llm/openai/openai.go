package openai

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/rgb"
)

// StatusError is a non-2xx reply; it unwraps to the llm sentinel it was classified as
// (ErrTooManyImages, ErrContextTooLong, ErrBadRequest, ErrServer). A 2xx reply that is not
// chat-completion JSON is llm.ErrBadResponse instead, and is not retried.
type StatusError struct {
	Status  int
	Message string
	Kind    error
	Hint    string // what to change on the server or in the spec, when known ("" otherwise)
	// RetryAfter is the server's Retry-After (seconds or an HTTP-date), 0 when it sent none: the
	// wait before the next attempt, at most Options.MaxWait.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%v: HTTP %d: %s (%s)", e.Kind, e.Status, e.Message, e.Hint)
	}
	return fmt.Sprintf("%v: HTTP %d: %s", e.Kind, e.Status, e.Message)
}

func (e *StatusError) Unwrap() error { return e.Kind }

// Servers whose video item the client can form (Options.Server, spec key server=).
const (
	ServerVLLM   = "vllm"   // video_url "data:video/jpeg;base64,<f1>,<f2>,…" + media_io_kwargs/mm_processor_kwargs
	ServerSGLang = "sglang" // video_url "data:video/mp4;base64,…": PNG pictures in an MP4 at a constant rate (sglang.go)
)

// Options configure a Client.
type Options struct {
	Image   string // "png" (default: lossless, the frames exactly as decoded and resized) or "jpeg"
	Quality int    // JPEG quality (Image "jpeg" only), default 95
	// Input is llm.InputImages (default: one image_url part per frame) or llm.InputVideo (the frames
	// as one video item of Server's form; JPEG for vLLM, PNG pictures in an MP4 for SGLang).
	Input  string
	Server string // ServerVLLM (default) or ServerSGLang; the video item's form
	// FallbackImages (spec fallback=images): frames the server's video form cannot take (SGLang:
	// an odd count, more than 768, a rate above 2 fps) go as image parts instead, and the response
	// says so; without it they are refused (llm.ErrVideoInput).
	FallbackImages bool

	Concurrency int           // requests in flight at once, default 4
	Timeout     time.Duration // per attempt, default 120 s
	Retries     int           // extra attempts after a 5xx/429/timeout/connection error, default 3
	TopLogprobs int           // 0 = 20 (vLLM's default --max-logprobs cap); < 0 = no logprobs
	NoPrefill   bool          // fold nothing into a final assistant message (servers that reject continue_final_message)
	Backoff     time.Duration // first retry delay, doubled each time; default 500 ms
	MaxWait     time.Duration // longest wait before a retry (backoff or Retry-After), default DefaultMaxWait
	// MaxReplyBytes bounds one reply's body (default DefaultMaxReplyBytes); a longer one is
	// llm.ErrBadResponse.
	MaxReplyBytes int64
	// Family names the model's visual-token arithmetic (spec family=, llm.Families); "": the one its
	// name names (visualtokens.go).
	Family string
}

// Client talks to one server and model. It is safe for concurrent use.
type Client struct {
	base   string
	model  string
	o      Options
	sem    chan struct{}
	big    chan struct{} // the one turn to hold a reply's bytes beyond smallReply (readReply)
	origin string        // scheme://host:port of base: redirects go nowhere else (checkRedirect)
	http   *http.Client
	closed atomic.Bool
	// noTokenize: the server has no tokenize endpoint (TextPromptTokens asks once).
	noTokenize atomic.Bool
}

// Open opens a client from a parsed spec (llm.Opener).
func Open(sp llm.Spec) (llm.Runtime, error) {
	if err := sp.Check([]string{"url", "model"}, "image_format", "image", "quality", "concurrency", "timeout", "retries", "top_logprobs", "prefill", "input", "server", "fallback", "family"); err != nil {
		return nil, err
	}
	var o Options
	var err error
	if o.Input, o.Server, err = videoSpec(sp); err != nil {
		return nil, err
	}
	switch fb, ok := sp.Params["fallback"]; {
	case !ok:
	case fb != "images":
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "openai: fallback=%q (want images)", fb)
	case o.Input != llm.InputVideo:
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "openai: fallback=images applies to input=video")
	default:
		o.FallbackImages = true
	}
	// image_format is the key; image (its former name) is still read.
	o.Image = sp.Params["image_format"]
	if v, ok := sp.Params["image"]; ok {
		if _, both := sp.Params["image_format"]; both {
			return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "openai: image= and image_format= both given (image_format is the key)")
		}
		o.Image = v
	}
	if o.Input == llm.InputVideo {
		// The video item's form fixes the encoding: vLLM's video/jpeg item decodes JPEG frames,
		// SGLang's MP4 holds PNG pictures.
		want := map[string]string{ServerVLLM: "jpeg", ServerSGLang: "png"}[o.Server]
		if o.Image != "" && o.Image != want {
			return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "openai: input=video,server=%s sends %s frames (image_format=%s given)", o.Server, want, o.Image)
		}
		o.Image = want
	}
	if _, ok := sp.Params["quality"]; ok && o.Image != "jpeg" {
		// The default is lossless PNG; a quality alone would silently do nothing.
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "openai: quality= applies to JPEG frames (image_format=jpeg, or input=video with server=vllm); frames go as lossless PNG otherwise")
	}
	if o.Quality, err = sp.Int("quality", 95, 1, 100); err != nil {
		return nil, err
	}
	if o.Concurrency, err = sp.Int("concurrency", 4, 1, 1024); err != nil {
		return nil, err
	}
	if o.Retries, err = sp.Int("retries", 3, 0, MaxRetries); err != nil {
		return nil, err
	}
	if o.TopLogprobs, err = sp.Int("top_logprobs", 20, 0, 20); err != nil {
		return nil, err
	}
	if o.TopLogprobs == 0 {
		o.TopLogprobs = -1
	}
	if o.Timeout, err = sp.Duration("timeout", 120*time.Second); err != nil {
		return nil, err
	}
	switch sp.Params["prefill"] {
	case "", "on":
	case "off":
		o.NoPrefill = true
	default:
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "openai: prefill=%q (want on or off)", sp.Params["prefill"])
	}
	if f, ok := sp.Params["family"]; ok {
		if err := llm.CheckFamily(f); err != nil {
			return nil, err
		}
		o.Family = f
	}
	return New(sp.Params["url"], sp.Params["model"], o)
}

// New returns a client for the server at base (".../v1").
func New(base, model string, o Options) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, llm.Errorf("parse spec", base, llm.ErrBadSpec, "url must be http(s)://HOST:PORT/v1")
	}
	switch o.Input {
	case "", llm.InputImages:
		o.Input = llm.InputImages
	case llm.InputVideo:
		if o.Server == "" {
			o.Server = ServerVLLM
		}
		want := map[string]string{ServerVLLM: "jpeg", ServerSGLang: "png"}[o.Server]
		if want == "" {
			return nil, llm.Errorf("parse spec", base, llm.ErrBadSpec, "server=%q (want vllm or sglang)", o.Server)
		}
		if o.Image == "" {
			o.Image = want
		}
		if o.Image != want {
			return nil, llm.Errorf("parse spec", base, llm.ErrBadSpec, "input=video,server=%s sends %s frames (image_format=%s given)", o.Server, want, o.Image)
		}
	default:
		return nil, llm.Errorf("parse spec", base, llm.ErrBadSpec, "input=%q (want images or video)", o.Input)
	}
	switch o.Image {
	case "":
		o.Image = "png"
	case "jpeg", "png":
	default:
		return nil, llm.Errorf("parse spec", base, llm.ErrBadSpec, "image_format=%q (want png or jpeg)", o.Image)
	}
	if o.Quality <= 0 || o.Quality > 100 {
		o.Quality = 95
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 120 * time.Second
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.MaxReplyBytes <= 0 {
		o.MaxReplyBytes = DefaultMaxReplyBytes
	}
	o.Retries = min(max(o.Retries, 0), MaxRetries)
	if o.TopLogprobs == 0 {
		o.TopLogprobs = 20
	}
	if o.TopLogprobs > 20 {
		o.TopLogprobs = 20 // OpenAI's cap, and vLLM's default --max-logprobs
	}
	c := &Client{
		base:   strings.TrimRight(base, "/"),
		model:  model,
		o:      o,
		sem:    make(chan struct{}, o.Concurrency),
		big:    make(chan struct{}, 1),
		origin: origin(u),
	}
	c.http = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: o.Concurrency}, CheckRedirect: c.checkRedirect}
	return c, nil
}

// Concurrency is how many requests the client has in flight at most (concurrency=, default 4):
// llm.Concurrent, so a sweep keeps that many answers going.
func (c *Client) Concurrency() int { return c.o.Concurrency }

// ImageFormat is how this client encodes frames, as llm.Response.ImageFormat records it: "png" or
// "jpeg:q=N".
func (c *Client) ImageFormat() string {
	if c.o.Image == "jpeg" {
		return "jpeg:q=" + strconv.Itoa(c.o.Quality)
	}
	return "png"
}

// Close releases idle connections; it is idempotent. Requests after Close fail with ErrClosed.
func (c *Client) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.http.CloseIdleConnections()
	}
	return nil
}

type imageURL struct {
	URL string `json:"url"`
}

type part struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
	VideoURL *imageURL `json:"video_url,omitempty"`
}

type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // string or []part
}

type chatRequest struct {
	Model                string    `json:"model"`
	Messages             []message `json:"messages"`
	Temperature          float64   `json:"temperature"`
	TopP                 float64   `json:"top_p"`
	Seed                 int64     `json:"seed"`
	MaxTokens            int       `json:"max_tokens"`
	Logprobs             bool      `json:"logprobs"`
	TopLogprobs          int       `json:"top_logprobs,omitempty"`
	Stream               bool      `json:"stream"`
	ContinueFinalMessage bool      `json:"continue_final_message,omitempty"` // vLLM/SGLang: continue the prefilled assistant turn
	AddGenerationPrompt  *bool     `json:"add_generation_prompt,omitempty"`
	// vLLM: per-request media loader settings, keyed by modality (video: num_frames, fps,
	// frames_indices, total_num_frames), and the HF processor's kwargs (fps, do_sample_frames).
	MediaIOKwargs     map[string]map[string]any `json:"media_io_kwargs,omitempty"`
	MMProcessorKwargs map[string]any            `json:"mm_processor_kwargs,omitempty"`
}

// buildRequest renders the chat request for req and fills what it sent into resp (input mode,
// encoding, timing).
func (c *Client) buildRequest(req *llm.Request, p llm.Prompt, resp *llm.Response) (*chatRequest, error) {
	cr := &chatRequest{
		Model:       c.model,
		Temperature: req.Temperature,
		TopP:        1,
		Seed:        req.Seed,
		MaxTokens:   req.MaxTok(),
		Logprobs:    c.o.TopLogprobs > 0,
	}
	if p.System != "" {
		cr.Messages = append(cr.Messages, message{Role: "system", Content: p.System})
	}
	if len(req.Frames) == 0 {
		cr.Messages = append(cr.Messages, message{Role: "user", Content: p.User})
	} else {
		parts, err := c.frameParts(req, cr, resp)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part{Type: "text", Text: p.User})
		cr.Messages = append(cr.Messages, message{Role: "user", Content: parts})
	}
	if c.o.TopLogprobs > 0 {
		cr.TopLogprobs = c.o.TopLogprobs
	}
	if p.AssistantPrefix != "" && !c.o.NoPrefill {
		no := false
		cr.Messages = append(cr.Messages, message{Role: "assistant", Content: p.AssistantPrefix})
		cr.ContinueFinalMessage, cr.AddGenerationPrompt = true, &no
	}
	return cr, nil
}

// encode encodes frame i in the client's format.
func (c *Client) encode(f *rgb.Image, i int) (b []byte, mime string, err error) {
	if c.o.Image == "png" {
		b, err = llm.EncodePNG(f)
		mime = "image/png"
	} else {
		b, err = llm.EncodeJPEG(f, c.o.Quality)
		mime = "image/jpeg"
	}
	if err != nil {
		return nil, "", llm.Errorf("answer", c.base, llm.ErrBadImage, "frame %d: %v", i, err)
	}
	return b, mime, nil
}

// imageParts is one image_url part per frame.
func (c *Client) imageParts(req *llm.Request) ([]part, error) {
	parts := make([]part, 0, len(req.Frames)+1)
	for i, f := range req.Frames {
		b, mime, err := c.encode(f, i)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part{Type: "image_url", ImageURL: &imageURL{URL: "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)}})
	}
	return parts, nil
}

// Answer sends one request, retrying 5xx and 429 replies, timeouts and connection errors with backoff
// (send). A reply that is not a valid chat completion is llm.ErrBadResponse (decodeReply), never an
// answer.
func (c *Client) Answer(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if c.closed.Load() {
		return nil, llm.Errorf("answer", c.base, llm.ErrClosed, "")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if len(req.Tensors) > 0 {
		return nil, llm.Errorf("answer", c.base, llm.ErrBadRequest, "openai takes frames, not tensors")
	}
	p, tpl, err := llm.Render(req)
	if err != nil {
		return nil, err
	}
	resp := &llm.Response{}
	cr, err := c.buildRequest(req, p, resp)
	if err != nil {
		return nil, err
	}
	resp.VisualCheck = c.visualCheck(req, resp)
	body, err := json.Marshal(cr)
	if err != nil {
		return nil, llm.Errorf("answer", c.base, llm.ErrBadRequest, "%v", err)
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-llm.StopOf(ctx):
		return nil, llm.ErrStopped // its turn never came: nothing was sent
	}
	defer func() { <-c.sem }()
	if llm.Stopping(ctx) {
		return nil, llm.ErrStopped
	}

	start := time.Now()
	out, err := c.send(ctx, body)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr // the caller gave up (or its deadline passed): not a server error
		}
		if se := (*StatusError)(nil); c.o.Input == llm.InputVideo && errors.As(err, &se) {
			c.videoError(se)
		}
		return nil, &llm.Error{Op: "answer", Path: c.base + "/chat/completions", Err: err}
	}
	digest := sha256.Sum256(body)
	resp.RequestSHA256 = hex.EncodeToString(digest[:])
	out.fill(resp, req)
	resp.LatencyS = time.Since(start).Seconds()
	llm.Finish(resp, req, tpl)
	return resp, nil
}

// videoSpec reads input= (default images) and server= (video only; default vllm).
func videoSpec(sp llm.Spec) (input, server string, err error) {
	if input, err = sp.Input(); err != nil {
		return "", "", err
	}
	server, ok := sp.Params["server"]
	switch {
	case ok && input != llm.InputVideo:
		return "", "", llm.Errorf("parse spec", "", llm.ErrBadSpec, "openai: server= names the video item's form and needs input=video")
	case !ok:
		server = ServerVLLM
	case server != ServerVLLM && server != ServerSGLang:
		return "", "", llm.Errorf("parse spec", "", llm.ErrBadSpec, "openai: server=%q (want vllm or sglang)", server)
	}
	return input, server, nil
}

// videoError turns a reply about the video item into llm.ErrVideoInput with the server setting
// that governs it. Servers report this only in prose (vLLM: "At most 0 video(s) may be provided in
// one prompt", "frames_indices length … must match", Qwen3-VL's "VideoMetadata … total_num_frames").
func (c *Client) videoError(se *StatusError) {
	lower := strings.ToLower(se.Message)
	if !strings.Contains(lower, "video") && !strings.Contains(lower, "frames_indices") &&
		!strings.Contains(lower, "num_frames") && !strings.Contains(lower, "media_io") {
		return
	}
	se.Kind = llm.ErrVideoInput
	if c.o.Server == ServerSGLang {
		se.Hint = "SGLang's load_video hands the data:video/mp4 item (PNG pictures) to decord or torchcodec, which must decode it; or use input=images"
		return
	}
	se.Hint = "vLLM: allow the video item with --limit-mm-per-prompt '{\"video\":1}' (a model without a video processor takes none), " +
		"lift the frame cap with --media-io-kwargs '{\"video\":{\"num_frames\":-1}}' on versions that ignore the per-request media_io_kwargs; or use input=images"
}
