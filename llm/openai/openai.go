package openai

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
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
	ServerSGLang = "sglang" // video_url "video:<base64 of the concatenated PNG frames>"
)

// Options configure a Client.
type Options struct {
	Image   string // "png" (default: lossless, the frames exactly as decoded and resized) or "jpeg"
	Quality int    // JPEG quality (Image "jpeg" only), default 95
	// Input is llm.InputImages (default: one image_url part per frame) or llm.InputVideo (the frames
	// as one video item of Server's form; JPEG for vLLM, PNG for SGLang).
	Input       string
	Server      string        // ServerVLLM (default) or ServerSGLang; the video item's form
	Concurrency int           // requests in flight at once, default 4
	Timeout     time.Duration // per attempt, default 120 s
	Retries     int           // extra attempts after a 5xx/timeout/connection error, default 3
	TopLogprobs int           // 0 = 20 (vLLM's default --max-logprobs cap); < 0 = no logprobs
	NoPrefill   bool          // fold nothing into a final assistant message (servers that reject continue_final_message)
	Backoff     time.Duration // first retry delay, doubled each time; default 500 ms
}

// Client talks to one server and model. It is safe for concurrent use.
type Client struct {
	base   string
	model  string
	o      Options
	sem    chan struct{}
	http   *http.Client
	closed atomic.Bool
}

// Open opens a client from a parsed spec (llm.Opener).
func Open(sp llm.Spec) (llm.Runtime, error) {
	if err := sp.Check([]string{"url", "model"}, "image_format", "image", "quality", "concurrency", "timeout", "retries", "top_logprobs", "prefill", "input", "server"); err != nil {
		return nil, err
	}
	var o Options
	var err error
	if o.Input, o.Server, err = videoSpec(sp); err != nil {
		return nil, err
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
		// SGLang's decoder splits PNG frames.
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
	if o.Retries, err = sp.Int("retries", 3, 0, 100); err != nil {
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
	if o.TopLogprobs == 0 {
		o.TopLogprobs = 20
	}
	if o.TopLogprobs > 20 {
		o.TopLogprobs = 20 // OpenAI's cap, and vLLM's default --max-logprobs
	}
	return &Client{
		base:  strings.TrimRight(base, "/"),
		model: model,
		o:     o,
		sem:   make(chan struct{}, o.Concurrency),
		http:  &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: o.Concurrency}},
	}, nil
}

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

type topLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
}

type tokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		Logprobs *struct {
			Content []tokenLogprob `json:"content"`
		} `json:"logprobs"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
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
		var parts []part
		var err error
		if c.o.Input == llm.InputVideo {
			parts, err = c.videoParts(req, cr, resp)
		} else {
			parts, err = c.imageParts(req)
		}
		if err != nil {
			return nil, err
		}
		resp.InputMode, resp.ImageFormat = c.o.Input, c.ImageFormat()
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

// videoParts is the frames as one video item of the server's form.
func (c *Client) videoParts(req *llm.Request, cr *chatRequest, resp *llm.Response) ([]part, error) {
	var url strings.Builder
	switch c.o.Server {
	case ServerSGLang:
		// SGLang's decode_video_base64 (python/sglang/srt/utils: reached through the "video:" prefix)
		// base64-decodes the payload and splits it at every PNG signature: the frames' PNG files
		// back to back, lossless. The form carries no timing.
		var cat []byte
		for i, f := range req.Frames {
			b, _, err := c.encode(f, i)
			if err != nil {
				return nil, err
			}
			cat = append(cat, b...)
		}
		url.WriteString("video:" + base64.StdEncoding.EncodeToString(cat))
	default:
		// vLLM's VideoMediaIO.load_base64 (vllm/multimodal/media/video.py): a "video/jpeg" payload is
		// split at ',' and each piece decoded as a JPEG image; the frames are taken as they are (no
		// re-sampling; newer versions keep the first num_frames, default 32, hence num_frames below).
		if req.Video == nil {
			return nil, llm.Errorf("answer", c.base, llm.ErrBadRequest, "input=video,server=vllm needs the frames' timing (Request.Video): without it the server places them at 1 fps")
		}
		url.WriteString("data:video/jpeg;base64,")
		for i, f := range req.Frames {
			b, _, err := c.encode(f, i)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				url.WriteByte(',')
			}
			url.WriteString(base64.StdEncoding.EncodeToString(b))
		}
		if err := c.videoTiming(req, cr, resp); err != nil {
			return nil, err
		}
	}
	return []part{{Type: "video_url", VideoURL: &imageURL{URL: url.String()}}}, nil
}

// videoTiming tells vLLM where the frames lie in time. The loader's metadata (media_io_kwargs:
// fps, frames_indices, total_num_frames; read by VideoMediaIO.load_base64) gives Qwen3-VL its
// timestamps, frames_indices / fps (transformers Qwen3VLProcessor._calculate_timestamps); the
// processor's fps (mm_processor_kwargs) gives Qwen2.5-VL its second_per_grid_t = 2 / fps
// (Qwen2_5_VLProcessor.__call__); do_sample_frames false keeps the frames as sent.
func (c *Client) videoTiming(req *llm.Request, cr *chatRequest, resp *llm.Response) error {
	v, n := req.Video, len(req.Frames)
	fps, src, err := v.FPS(n)
	if err != nil {
		return err
	}
	meta := map[string]any{"num_frames": n}
	idx, rate := v.Indices, v.SourceFPS
	if idx == nil || rate <= 0 {
		// Only timestamps: indices on a millisecond grid (fps 1000), so idx/fps is each time to 1 ms.
		idx, rate = make([]int, n), 1000
		for i, t := range v.TimestampsS {
			idx[i] = int(math.Round(t * rate))
		}
	}
	meta["fps"], meta["frames_indices"] = rate, idx
	if v.TotalFrames > 0 && v.Indices != nil {
		meta["total_num_frames"] = v.TotalFrames
	} else if last := idx[n-1] + 1; last > n {
		meta["total_num_frames"] = last // vLLM requires total_num_frames ≥ the frames sent
	}
	cr.MediaIOKwargs = map[string]map[string]any{"video": meta}
	cr.MMProcessorKwargs = map[string]any{"fps": fps, "do_sample_frames": false}
	resp.VideoFPS, resp.VideoFPSSource = fps, src
	resp.VideoTimestampsS = make([]float64, n)
	for i, x := range idx {
		resp.VideoTimestampsS[i] = float64(x) / rate
	}
	return nil
}

// Answer sends one request, retrying 5xx replies, timeouts and connection errors with backoff.
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
	body, err := json.Marshal(cr)
	if err != nil {
		return nil, llm.Errorf("answer", c.base, llm.ErrBadRequest, "%v", err)
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()

	start := time.Now()
	var out *chatResponse
	delay := c.o.Backoff
	for attempt := 0; ; attempt++ {
		out, err = c.post(ctx, body)
		if err == nil || !retryable(err) || attempt >= c.o.Retries || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		delay *= 2
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr // the caller gave up (or its deadline passed): not a server error
		}
		if se := (*StatusError)(nil); c.o.Input == llm.InputVideo && errors.As(err, &se) {
			c.videoError(se)
		}
		return nil, &llm.Error{Op: "answer", Path: c.base + "/chat/completions", Err: err}
	}
	if len(out.Choices) == 0 {
		return nil, llm.Errorf("answer", c.base+"/chat/completions", llm.ErrBadResponse, "reply has no choices")
	}
	ch := out.Choices[0]
	digest := sha256.Sum256(body)
	resp.RequestSHA256 = hex.EncodeToString(digest[:])
	resp.Text = ch.Message.Content
	resp.PromptTokens, resp.CompletionTokens = out.Usage.PromptTokens, out.Usage.CompletionTokens
	resp.LatencyS = time.Since(start).Seconds()
	if ch.Logprobs != nil {
		resp.Probs = OptionProbs(ch.Logprobs.Content, llm.Letters(req.Options))
	}
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
		se.Hint = "SGLang must read the \"video:\" concatenated-PNG item (decode_video_base64); or use input=images"
		return
	}
	se.Hint = "vLLM: allow the video item with --limit-mm-per-prompt '{\"video\":1}' (a model without a video processor takes none), " +
		"lift the frame cap with --media-io-kwargs '{\"video\":{\"num_frames\":-1}}' on versions that ignore the per-request media_io_kwargs; or use input=images"
}

// retryable: server-side failures and transport trouble, never a 4xx.
func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status >= 500
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, llm.ErrBadResponse)
}

// snippet quotes the start of a reply body so the error shows what the server sent instead.
func snippet(b []byte) string {
	const n = 80
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return strconv.Quote(s)
}

func (c *Client) post(ctx context.Context, body []byte) (*chatResponse, error) {
	actx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(actx, http.MethodPost, c.base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", llm.ErrBadSpec, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(hr)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: timeout after %v", llm.ErrServer, c.o.Timeout)
		}
		return nil, fmt.Errorf("%w: %v", llm.ErrServer, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: reading reply: %v", llm.ErrServer, err)
	}
	if res.StatusCode/100 != 2 {
		return nil, classify(res.StatusCode, data)
	}
	var out chatResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%w: HTTP %d reply is not chat-completion JSON (%s): %v", llm.ErrBadResponse, res.StatusCode, snippet(data), err)
	}
	return &out, nil
}

// classify turns an error reply into a StatusError. Servers report limits only in prose, so the message
// is matched against the phrases vLLM, SGLang, OpenAI and ollama use.
func classify(status int, body []byte) *StatusError {
	msg := errorMessage(body)
	e := &StatusError{Status: status, Message: msg, Kind: llm.ErrBadRequest}
	lower := strings.ToLower(msg)
	switch {
	case status >= 500:
		e.Kind = llm.ErrServer
	case strings.Contains(lower, "limit-mm-per-prompt") ||
		(strings.Contains(lower, "at most") && strings.Contains(lower, "image")) ||
		strings.Contains(lower, "too many images"):
		e.Kind = llm.ErrTooManyImages
	case strings.Contains(lower, "context length") || strings.Contains(lower, "context_length") ||
		strings.Contains(lower, "too long") || strings.Contains(lower, "maximum context") ||
		strings.Contains(lower, "exceeds the max") || status == http.StatusRequestEntityTooLarge:
		e.Kind = llm.ErrContextTooLong
	}
	return e
}

// errorMessage extracts the message from {"error":{"message":…}} (OpenAI, vLLM ≥0.6), {"message":…}
// (vLLM/SGLang "object":"error"), {"error":"…"} (ollama, llama-server) or {"detail":…} (FastAPI).
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		if len(v.Error) > 0 {
			var s string
			if json.Unmarshal(v.Error, &s) == nil && s != "" {
				return s
			}
			var o struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(v.Error, &o) == nil && o.Message != "" {
				return o.Message
			}
		}
		if v.Message != "" {
			return v.Message
		}
		if v.Detail != nil {
			return fmt.Sprint(v.Detail)
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// normalizeToken maps raw tokenizer spellings to text: "ĠA" (byte-level BPE) and "▁A" (SentencePiece).
func normalizeToken(t string) string {
	t = strings.ReplaceAll(t, "Ġ", " ")
	t = strings.ReplaceAll(t, "▁", " ")
	return t
}

// answerLetter returns the letter a token spells — "A", " A", "(A", "A.", "A)" — or "".
func answerLetter(tok string) string {
	return llm.TokenLetter(normalizeToken(tok))
}

// OptionProbs computes option probabilities from chat logprobs at the first answer position: the first
// generated token that is not only whitespace or "(". Variants of a letter add up; absent letters get 0
// before renormalisation; nil when no option letter is among that position's top_logprobs.
func OptionProbs(content []tokenLogprob, letters []string) map[string]float64 {
	for _, tl := range content {
		if strings.Trim(normalizeToken(tl.Token), " \t\n(") == "" {
			continue
		}
		scores := map[string][]float64{}
		seen := map[string]bool{}
		add := func(tok string, lp float64) {
			if seen[tok] || math.IsNaN(lp) {
				return
			}
			seen[tok] = true
			if l := answerLetter(tok); l != "" {
				scores[l] = append(scores[l], lp)
			}
		}
		for _, t := range tl.TopLogprobs {
			add(t.Token, t.Logprob)
		}
		add(tl.Token, tl.Logprob) // the sampled token, in case top_logprobs omits it
		return llm.LetterProbs(scores, letters)
	}
	return nil
}
