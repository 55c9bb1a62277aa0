package worker

import "errors"

// remoteCodes names the sentinels whose identity survives the process boundary: the worker sends the
// code of the first one its error matches (errors.Is), and the parent's RemoteError.Is maps it back.
// The codes are part of the protocol; keep them stable.
var remoteCodes = []struct {
	code string
	err  error
}{
	{"unknown_op", errUnknownOp},
}

// errorCode returns the code of the first sentinel err matches, or "".
func errorCode(err error) string {
	for _, c := range remoteCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// codeSentinel returns the sentinel for a code.
func codeSentinel(code string) (error, bool) {
	for _, c := range remoteCodes {
		if c.code == code && code != "" {
			return c.err, true
		}
	}
	return nil, false
}
