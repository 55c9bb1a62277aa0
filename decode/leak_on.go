//go:build leakcheck

package decode

import "runtime/pprof"

// LeakCheck reports whether this build counts live FFmpeg handles (-tags leakcheck).
const LeakCheck = true

// handles holds every FFmpeg object this package allocated and has not freed yet, with the stack
// that allocated it (STYLE.md B6: a pprof profile, not finalizers): go tool pprof shows a leak's origin.
var handles = pprof.NewProfile("framesweep/decode.handles")

func track(p any)   { handles.Add(p, 2) }
func untrack(p any) { handles.Remove(p) }

// LiveHandles is the number of FFmpeg objects (format and codec contexts, packets, frames, filter
// graphs) allocated by this package and not freed. It is 0 when every Video is closed and no Read is
// running; without -tags leakcheck it is always 0.
func LiveHandles() int { return handles.Count() }
