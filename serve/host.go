package serve

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Browsers. A web page the user visits can send requests to a server on the user's loopback: by DNS
// rebinding (its own name, re-resolved to 127.0.0.1, so the browser deems the server same-origin and
// sends Host: that name) or by cross-site requests that need no preflight (a form POST, text/plain or
// form-encoded; an <img> GET). So the server answers only requests whose Host names it, refuses
// requests a browser marks as coming from another site (Origin, Sec-Fetch-Site), and takes request
// bodies only as application/json, which no page can send to another origin without a CORS preflight
// this server never grants.

// CodeHost is the code of a 421 for a Host header that does not name this server, CodeOrigin of a 403
// for a request a browser sent from another site, CodeMediaType of a 415 for a body that is not JSON.
const (
	CodeHost      = "misdirected_host"
	CodeOrigin    = "cross_origin"
	CodeMediaType = "unsupported_media_type"
)

// hosts are the names a request's Host header may give: loopback names, the listening address, and
// Config.AllowHosts. Names are compared in lower case without a trailing dot; the port is not compared.
type hosts struct {
	mu    sync.RWMutex
	names map[string]bool
	// any: the server listens on every address (0.0.0.0, ::): an IP literal of one of this machine's
	// interfaces names it (a rebinding page sends its own name, never an IP literal).
	any   bool
	local map[string]bool
}

func newHosts(allow []string) (*hosts, error) {
	h := &hosts{names: map[string]bool{"localhost": true}, local: map[string]bool{}}
	for _, a := range allow {
		n, err := allowedName(a)
		if err != nil {
			return nil, err
		}
		h.names[n] = true
	}
	return h, nil
}

// CheckAllowHost checks a name for Config.AllowHosts (serve --allow-host): a host name or an IP
// address, with or without a port (which is not compared).
func CheckAllowHost(a string) error {
	_, err := allowedName(a)
	return err
}

func allowedName(a string) (string, error) {
	n, ok := hostName(a)
	if !ok || strings.ContainsAny(a, "/?#@ \t\r\n") {
		return "", fmt.Errorf("allowed host %q: want a host name or an IP address (a port is ignored)", a)
	}
	if ip := net.ParseIP(n); ip != nil {
		n = canonIP(ip)
	}
	return n, nil
}

// listening adds the address the server listens on.
func (h *hosts) listening(addr net.Addr) {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !ta.IP.IsUnspecified() {
		h.names[canonIP(ta.IP)] = true
		return
	}
	h.any = true
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				h.local[canonIP(ipn.IP)] = true
			}
		}
	}
}

// allowed reports whether a Host header (or an Origin's host) names this server.
func (h *hosts) allowed(host string) bool {
	n, ok := hostName(host)
	if !ok {
		return false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if ip := net.ParseIP(n); ip != nil {
		if ip.IsLoopback() {
			return true
		}
		n = canonIP(ip)
		return h.names[n] || h.any && h.local[n]
	}
	return h.names[n]
}

// hostName is the host of "host", "host:port" or "[v6]:port", in lower case without a trailing dot.
func hostName(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	} else {
		s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	}
	s = strings.TrimSuffix(strings.ToLower(s), ".")
	return s, s != ""
}

func canonIP(ip net.IP) string {
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.String()
}

// checkBrowser refuses a request whose Host does not name this server (421), or that a browser marks
// as sent by a page of another site (403).
func (s *Server) checkBrowser(r *http.Request) *Error {
	if !s.hosts.allowed(r.Host) {
		return apiErr(http.StatusMisdirectedRequest, CodeHost, "Host %q does not name this server (loopback names and the listening address are served; serve --allow-host adds names)", r.Host)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return apiErr(http.StatusForbidden, CodeOrigin, "a request from a page of another site (Sec-Fetch-Site: %s) is refused", site)
	}
	if o := r.Header.Get("Origin"); o != "" {
		host, ok := strings.CutPrefix(o, "http://")
		if !ok {
			host, ok = strings.CutPrefix(o, "https://")
		}
		if !ok || !s.hosts.allowed(host) {
			return apiErr(http.StatusForbidden, CodeOrigin, "a request from the page of origin %q is refused", o)
		}
	}
	return nil
}

// checkJSON refuses a request body that is not declared application/json (415).
func checkJSON(r *http.Request) *Error {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return nil
	}
	return apiErr(http.StatusUnsupportedMediaType, CodeMediaType, "the body must be JSON sent with Content-Type: application/json (got %q)", ct)
}
