package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/framesweep/framesweep/llm"
)

// Bounds on what a server can make the client hold or wait for.
const (
	// DefaultMaxReplyBytes bounds one reply (Options.MaxReplyBytes): a chat completion is a few KB,
	// one with 20 top logprobs for each of 4096 tokens about 8 MB. A longer body is
	// llm.ErrBadResponse, not read further.
	DefaultMaxReplyBytes = 16 << 20
	// smallReply is what every reply in flight may hold at once; the bytes of a reply beyond it are
	// read only while it holds the client's one large-reply turn (Client.big), so N requests in
	// flight hold at most N × smallReply + MaxReplyBytes of replies, whatever the server sends.
	smallReply = 1 << 20
	// errorReplyBytes is what is read of a non-2xx body: its message.
	errorReplyBytes = 64 << 10
	// DefaultMaxWait bounds one wait before a retry (Options.MaxWait): the doubling backoff and a
	// server's Retry-After alike.
	DefaultMaxWait = 30 * time.Second
	// MaxRetries bounds retries= (each wait at most MaxWait).
	MaxRetries = 20
)

// errRedirect is a redirect the client does not follow.
type errRedirect struct{ msg string }

func (e *errRedirect) Error() string { return e.msg }

// checkRedirect follows a redirect only to the origin (scheme, host and port) of the url= the spec
// names, and only one that keeps the method (307, 308): the frames are never sent to another
// server, and a POST turned into a GET (301, 302, 303) would reach the server without them.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	switch {
	case len(via) >= 5:
		return &errRedirect{fmt.Sprintf("%d redirects", len(via))}
	case origin(req.URL) != c.origin:
		return &errRedirect{fmt.Sprintf("HTTP %d redirects to %s, another origin than url= (%s): the request is not sent there", status, redact(req.URL), c.origin)}
	case req.Method != via[0].Method:
		return &errRedirect{fmt.Sprintf("HTTP %d turns the %s into a %s (only 307 and 308 keep the request)", status, via[0].Method, req.Method)}
	}
	return nil
}

// origin is u's scheme://host:port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// redact is u without its query and user info (a redirect may carry tokens).
func redact(u *url.URL) string {
	v := *u
	v.User, v.RawQuery, v.Fragment = nil, "", ""
	return v.String()
}

// retryable: server-side failures (5xx, 429) and transport trouble (llm.ErrServer); never another
// 4xx, a malformed reply or a refused redirect.
func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status >= 500 || se.Status == http.StatusTooManyRequests
	}
	return errors.Is(err, llm.ErrServer)
}

// retryWait is how long to wait before the next attempt: the backoff, or the server's Retry-After
// when it asks for longer, at most MaxWait.
func (c *Client) retryWait(err error, backoff time.Duration) time.Duration {
	d := backoff
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > d {
		d = se.RetryAfter
	}
	return min(d, c.o.MaxWait)
}

// parseRetryAfter reads a Retry-After header (RFC 9110 10.2.3): delay-seconds or an HTTP-date; 0
// when absent or unreadable.
func parseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseUint(h, 10, 64); err == nil {
		return time.Duration(min(n, uint64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return min(t.Sub(now), 24*time.Hour)
	}
	return 0
}

// snippet quotes the start of a reply body so the error shows what the server sent instead.
func snippet(b []byte) string {
	const n = 80
	if len(b) > 4*n {
		b = b[:4*n]
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return strconv.Quote(s)
}

// send posts body until an attempt succeeds, fails for good, or the retries are spent: 5xx, 429,
// timeouts and connection errors are retried after a wait (retryWait); a stop (llm.WithStop) sends
// no further attempt.
func (c *Client) send(ctx context.Context, body []byte) (*chatResponse, error) {
	delay := c.o.Backoff
	for attempt := 0; ; attempt++ {
		out, err := c.post(ctx, body)
		if err == nil || !retryable(err) || attempt >= c.o.Retries || ctx.Err() != nil || llm.Stopping(ctx) {
			return out, err
		}
		t := time.NewTimer(c.retryWait(err, delay))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-llm.StopOf(ctx):
			t.Stop()
			return nil, err // the attempt sent failed; no new one after a stop
		}
		delay = min(delay*2, c.o.MaxWait)
	}
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
		return nil, c.transportError(err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		data, err := io.ReadAll(io.LimitReader(res.Body, errorReplyBytes))
		if err != nil {
			return nil, c.transportError(err)
		}
		se := classify(res.StatusCode, data)
		se.RetryAfter = parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
		return nil, se
	}
	data, release, err := c.readReply(actx, res.Body, res.ContentLength)
	if err != nil {
		return nil, err
	}
	defer release()
	return decodeReply(res.StatusCode, data)
}

// transportError classifies a failed request or read: a refused redirect is the spec's url= being
// wrong (not retried); a timeout or any other transport failure is the server's (llm.ErrServer).
func (c *Client) transportError(err error) error {
	var re *errRedirect
	var ne net.Error
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("%w: %s; give the server's own URL in url=", llm.ErrBadRequest, re.msg)
	case errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: timeout after %v", llm.ErrServer, c.o.Timeout)
	}
	return fmt.Errorf("%w: %v", llm.ErrServer, err)
}

// readReply reads a 2xx body of at most MaxReplyBytes (length: its Content-Length, -1 when unknown):
// the first smallReply bytes at once, the rest only while holding the client's large-reply turn
// (c.big), which release gives back once the caller has decoded the bytes.
func (c *Client) readReply(ctx context.Context, r io.Reader, length int64) (data []byte, release func(), err error) {
	release = func() {}
	if length > c.o.MaxReplyBytes {
		return nil, release, fmt.Errorf("%w: the reply is over %d MiB (Content-Length %d; a chat completion is a few KB): not read", llm.ErrBadResponse, c.o.MaxReplyBytes>>20, length)
	}
	var buf bytes.Buffer
	if length > 0 {
		buf.Grow(int(min(length, smallReply)) + 1)
	}
	n, err := buf.ReadFrom(io.LimitReader(r, smallReply+1))
	if err != nil {
		return nil, release, c.transportError(fmt.Errorf("reading reply: %w", err))
	}
	if n <= smallReply {
		return buf.Bytes(), release, nil
	}
	select {
	case c.big <- struct{}{}:
	case <-ctx.Done():
		return nil, release, c.transportError(ctx.Err())
	}
	release = func() { <-c.big }
	limit := c.o.MaxReplyBytes
	if length > 0 {
		buf.Grow(int(length-n) + 1) // one allocation of the announced size, not doublings
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1-n)); err != nil {
		release()
		return nil, func() {}, c.transportError(fmt.Errorf("reading reply: %w", err))
	}
	if int64(buf.Len()) > limit {
		release()
		return nil, func() {}, fmt.Errorf("%w: the reply is over %d MiB (a chat completion is a few KB): not read further", llm.ErrBadResponse, limit>>20)
	}
	return buf.Bytes(), release, nil
}

// classify turns an error reply into a StatusError. Servers report limits only in prose, so the message
// is matched against the phrases vLLM, SGLang, OpenAI and ollama use. 5xx and 429 (too many requests)
// are the server's trouble (llm.ErrServer: retried, and transient for a sweep).
func classify(status int, body []byte) *StatusError {
	msg := errorMessage(body)
	e := &StatusError{Status: status, Message: msg, Kind: llm.ErrBadRequest}
	lower := strings.ToLower(msg)
	switch {
	case status >= 500 || status == http.StatusTooManyRequests:
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
