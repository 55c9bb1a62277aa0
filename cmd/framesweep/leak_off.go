//go:build !leakcheck

package main

import "io"

// leakExit checks for live FFmpeg handles only in -tags leakcheck builds (leak_on.go).
func leakExit(code int, _ io.Writer) int { return code }
