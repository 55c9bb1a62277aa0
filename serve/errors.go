package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Error codes of the JSON error body, one per cause a client may act on.
const (
	CodeBadRequest       = "bad_request"        // 400: malformed JSON, unknown field, bad value
	CodeUnauthorized     = "unauthorized"       // 401: no or wrong bearer token
	CodeForbidden        = "forbidden"          // 403: a path outside the roots, a URL, a non-regular file
	CodeNotFound         = "not_found"          // 404: no such video under any root, or no such endpoint
	CodeMethod           = "method_not_allowed" // 405
	CodeTimeout          = "request_timeout"    // 408: the body did not arrive in time
	CodeTooLarge         = "request_too_large"  // 413: the request body is over the limit
	CodeUnplannable      = "unplannable"        // 422: the configuration cannot be built for this video
	CodeResponseTooLarge = "response_too_large" // 422: the object would exceed the response limit
	CodeTooMany          = "too_many_requests"  // 429: this client has MaxPerClient requests in progress; retry after Retry-After seconds
	CodeOverloaded       = "overloaded"         // 503: every slot (or body reader) is busy; retry after Retry-After seconds
	CodeUnavailable      = "unavailable"        // 503: the server is shutting down
	CodeInternal         = "internal"           // 500: the server's own fault (a broken cache, a bug)
)

// Error is an API error: the HTTP status, a stable code and a one-line message. Handlers return it
// and writeError turns it into the JSON body.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

func apiErr(status int, code, format string, a ...any) *Error {
	msg := strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", "; ")
	return &Error{Status: status, Code: code, Message: msg}
}

func badRequest(format string, a ...any) *Error {
	return apiErr(http.StatusBadRequest, CodeBadRequest, format, a...)
}

func forbidden(format string, a ...any) *Error {
	return apiErr(http.StatusForbidden, CodeForbidden, format, a...)
}

func unplannable(format string, a ...any) *Error {
	return apiErr(http.StatusUnprocessableEntity, CodeUnplannable, format, a...)
}

// errorBody is the JSON of every error response.
type errorBody struct {
	Error  string `json:"error"`
	Code   string `json:"code"`
	Status int    `json:"status"`
}

// asError turns any error into an API error; an error that is not one is the server's fault.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return apiErr(http.StatusInternalServerError, CodeInternal, "%v", err)
}

// writeError writes err as a JSON error response.
func writeError(w http.ResponseWriter, err *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	switch err.Status {
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="framesweep"`)
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(err.Status)
	b, _ := json.Marshal(errorBody{Error: err.Message, Code: err.Code, Status: err.Status})
	w.Write(append(b, '\n'))
}
