//go:build !leakcheck

package decode

// LeakCheck reports whether this build counts live FFmpeg handles (-tags leakcheck).
const LeakCheck = false

func track(any)   {}
func untrack(any) {}

// LiveHandles is the number of FFmpeg objects allocated by this package and not freed; it is counted
// only in -tags leakcheck builds (leak_on.go) and is always 0 here.
func LiveHandles() int { return 0 }
