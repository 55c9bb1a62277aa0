package serve

import (
	"net"
	"net/http"
	"sync"
)

// Admission. A request that builds something (probe, plan, frames) is admitted in three steps, so that
// a client slow to send its body holds none of the slots that bound the engine's memory:
//
//  1. its client, the remote address's IP, may have at most MaxPerClient requests in progress
//     (reading a body, waiting, served); one more is a 429;
//  2. a POST body is read, within MaxBodyBytes and BodyTimeout, under a limit of its own: at most
//     MaxBodies bodies are read at once (503 beyond), each holding at most MaxBodyBytes;
//  3. only a request whose body has arrived whole takes one of the MaxInflight slots (503 beyond).
//
// Four connections that send a header and a byte of a body (a slow-loris on the body) hold body
// readers for up to BodyTimeout, never a slot (TestBodyHoldsNoSlot).

// Defaults of the admission limits (Config.MaxBodies, Config.MaxPerClient).
const (
	DefaultMaxBodies    = 64
	DefaultMaxPerClient = 16
)

// clients counts the requests in progress per client address.
type clients struct {
	mu  sync.Mutex
	n   map[string]int
	max int
}

func newClients(limit int) *clients { return &clients{n: map[string]int{}, max: limit} }

// clientOf is the client a request counts against: the IP of its remote address (a port is another
// connection of the same client).
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// enter counts a request of r's client, or refuses it (429) when the client has max in progress; the
// func returned ends the request's count.
func (c *clients) enter(r *http.Request) (func(), error) {
	k := clientOf(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[k] >= c.max {
		return nil, apiErr(http.StatusTooManyRequests, CodeTooMany, "this client (%s) has %d requests in progress, the most one client may have; retry", k, c.max)
	}
	c.n[k]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.n[k]--; c.n[k] <= 0 {
				delete(c.n, k)
			}
		})
	}, nil
}

// inProgress is the requests counted now (for the health counters).
func (c *clients) inProgress() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

// readingBody takes one of the MaxBodies body readers, or refuses the request (503) when all are
// busy; the func returned gives it back.
func (s *Server) readingBody() (func(), error) {
	select {
	case s.bodies <- struct{}{}:
		return func() { <-s.bodies }, nil
	default:
		s.stats.overloaded.Add(1)
		return nil, apiErr(http.StatusServiceUnavailable, CodeOverloaded, "all %d request bodies being read are busy; retry", cap(s.bodies))
	}
}

// admit counts the request against its client (step 1 above); the func returned ends it.
func (s *Server) admit(r *http.Request) (func(), error) { return s.clients.enter(r) }
