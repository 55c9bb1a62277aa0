package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
)

// What a server should count of the frames sent (llm.VisualCheck), and its count of a request's
// text-only prompt (its tokenize endpoint): the sweep subtracts the latter from usage.prompt_tokens
// and compares (docs/runtimes.md "Did the server see our frames?").

// Family is the family whose arithmetic counts this client's frames: the spec's family=, else the one
// the model name names (llm.FamilyOf), else "" (unknown: never a guess).
func (c *Client) Family() string {
	if c.o.Family != "" {
		return c.o.Family
	}
	return llm.FamilyOf(c.model)
}

// visualCheck is the family's count of the frames as this request sent them (its form: image parts,
// vLLM's video item, SGLang's MP4 after SGLang's own resize), with the template's fixed overhead a
// server's prompt_tokens also counts; nil without frames. Seen is the sweep's to find.
func (c *Client) visualCheck(req *llm.Request, resp *llm.Response) *llm.VisualCheck {
	if len(req.Frames) == 0 || resp.InputForm == "" {
		return nil
	}
	fam := c.Family()
	vc := &llm.VisualCheck{Family: fam}
	v, ok := llm.DefaultVision(fam)
	if !ok {
		vc.Why = llm.WhyUnknownFamily
		return vc
	}
	var n llm.VisualCount
	var err error
	if resp.InputForm == llm.FormImageURL {
		n, err = imagesCount(v, req.Frames)
	} else {
		n, err = c.videoCount(v, req, resp)
	}
	if err != nil {
		vc.Why = err.Error()
		return vc
	}
	vc.Expected, vc.Overhead = &n.Tokens, n.Overhead
	return vc
}

// imagesCount is the sum over image parts (each its own size).
func imagesCount(v llm.Vision, frames []*rgb.Image) (llm.VisualCount, error) {
	var sum llm.VisualCount
	for _, f := range frames {
		k, err := v.Count(llm.VisualInput{Form: llm.FormImageURL, Frames: 1, W: f.W, H: f.H})
		if err != nil {
			return llm.VisualCount{}, err
		}
		sum.Tokens += k.Tokens
		sum.Overhead += k.Overhead
	}
	return sum, nil
}

// videoCount is the video item's count: its frames at the size the server's processor gets them
// (SGLang resizes each frame first: sglangVideo names it in video_warnings), Qwen3-VL's pairs at the
// times sent.
func (c *Client) videoCount(v llm.Vision, req *llm.Request, resp *llm.Response) (llm.VisualCount, error) {
	n, w, h := len(req.Frames), req.Frames[0].W, req.Frames[0].H
	if resp.InputForm == llm.FormSGLangVideo {
		l, err := geom.Qwen{Base: "qwen2.5-vl", Version: geom.QwenV0010, Factor: sglangImageFactor}.Layout(w, h, n)
		if err != nil {
			return llm.VisualCount{}, err
		}
		w, h = l.Resize.W, l.Resize.H
	}
	return v.Count(llm.VisualInput{Form: resp.InputForm, Frames: n, Images: 1, W: w, H: h, PairTimes: llm.PairTimes(resp.VideoTimestampsS)})
}

// tokenizeReplyBytes bounds a tokenize reply (a token list of a long prompt).
const tokenizeReplyBytes = 8 << 20

// TextPromptTokens counts the prompt tokens of req's text-only form (the same template, question and
// turns as its chat request, no frames) with the server's tokenize endpoint (llm.TextCounter):
// vLLM's and SGLang's POST /tokenize taking the chat messages ({"count"} or {"tokens"} back), else
// llama-server's POST /apply-template then /tokenize of the prompt it renders. A server with neither
// is llm.ErrNoTokenize, from then on without asking again; a server error is llm.ErrServer.
func (c *Client) TextPromptTokens(ctx context.Context, req *llm.Request) (int, error) {
	if c.noTokenize.Load() {
		return 0, llm.ErrNoTokenize
	}
	text := *req
	text.Frames, text.Video, text.ImagesPerFrame = nil, nil, 0
	if err := text.Validate(); err != nil {
		return 0, err
	}
	p, _, err := llm.Render(&text)
	if err != nil {
		return 0, err
	}
	cr, err := c.buildRequest(&text, p, &llm.Response{})
	if err != nil {
		return 0, err
	}
	root := strings.TrimSuffix(c.base, "/v1")
	chat := map[string]any{"model": c.model, "messages": cr.Messages}
	if cr.ContinueFinalMessage {
		chat["continue_final_message"], chat["add_generation_prompt"] = true, false
	}
	var out struct {
		Count  *int  `json:"count"`
		Tokens []int `json:"tokens"`
	}
	status, err := c.postJSON(ctx, root+"/tokenize", chat, &out)
	if err == nil && out.Count != nil && *out.Count >= 0 {
		return *out.Count, nil
	}
	if err == nil && out.Tokens != nil {
		return len(out.Tokens), nil
	}
	if err != nil && (!noEndpoint(status) || errors.Is(err, errAmbiguous)) {
		return 0, err
	}
	return c.llamaServerTokens(ctx, root, cr)
}

// llamaServerTokens is llama-server's count: the prompt its chat template renders (/apply-template),
// tokenized as its chat endpoint tokenizes a prompt (special tokens added and parsed).
func (c *Client) llamaServerTokens(ctx context.Context, root string, cr *chatRequest) (int, error) {
	var tpl struct {
		Prompt *string `json:"prompt"`
	}
	status, err := c.postJSON(ctx, root+"/apply-template", map[string]any{"messages": cr.Messages}, &tpl)
	if err == nil && tpl.Prompt != nil {
		var tok struct {
			Tokens []json.RawMessage `json:"tokens"`
		}
		status, err = c.postJSON(ctx, root+"/tokenize", map[string]any{"content": *tpl.Prompt, "add_special": true, "parse_special": true}, &tok)
		if err == nil && tok.Tokens != nil {
			return len(tok.Tokens), nil
		}
	}
	if err != nil && (!noEndpoint(status) || errors.Is(err, errAmbiguous)) {
		return 0, err
	}
	c.noTokenize.Store(true)
	return 0, llm.ErrNoTokenize
}

// noEndpoint: a status saying the server has no such endpoint or form (not a server failure); a 2xx
// reply without the form's count is another endpoint's answer, so the other form is tried.
func noEndpoint(status int) bool {
	return status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusBadRequest ||
		status == http.StatusUnprocessableEntity || status == http.StatusNotImplemented || (status >= 200 && status < 300)
}

// postJSON posts v as JSON to url and decodes a 2xx reply into out (at most tokenizeReplyBytes),
// within the client's timeout and concurrency. It returns the reply's status (0 without one) and an
// error wrapping llm.ErrServer (no reply, a 5xx), llm.ErrBadResponse (a reply that is not JSON) or
// llm.ErrBadRequest (another status).
func (c *Client) postJSON(ctx context.Context, url string, v any, out any) (int, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return 0, llm.Errorf("tokenize", url, llm.ErrBadRequest, "%v", err)
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-c.sem }()
	actx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, llm.Errorf("tokenize", url, llm.ErrBadRequest, "%v", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(hr)
	if err != nil {
		return 0, llm.Errorf("tokenize", url, llm.ErrServer, "%v", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, tokenizeReplyBytes+1))
	switch {
	case err != nil:
		return res.StatusCode, llm.Errorf("tokenize", url, llm.ErrServer, "%v", err)
	case res.StatusCode >= 500:
		return res.StatusCode, llm.Errorf("tokenize", url, llm.ErrServer, "HTTP %d", res.StatusCode)
	case res.StatusCode < 200 || res.StatusCode > 299:
		return res.StatusCode, llm.Errorf("tokenize", url, llm.ErrBadRequest, "HTTP %d", res.StatusCode)
	case len(data) > tokenizeReplyBytes:
		return res.StatusCode, llm.Errorf("tokenize", url, llm.ErrBadResponse, "the reply is over %d bytes", tokenizeReplyBytes)
	}
	if err := decodeStrict(data, out); err != nil {
		if errors.Is(err, errAmbiguous) { // a count given twice is no count, and no sign of another endpoint
			return res.StatusCode, &llm.Error{Op: "tokenize", Path: url, Err: fmt.Errorf("%w: %w", llm.ErrBadResponse, err)}
		}
		return res.StatusCode, llm.Errorf("tokenize", url, llm.ErrBadResponse, "%s: %v", snippet(data), err)
	}
	return res.StatusCode, nil
}
