package record

import (
	"encoding/json"
	"fmt"
)

// CheckSize refuses a record whose line, as Write encodes it, would be over MaxLineBytes (which every
// reader refuses): an importer checks each record before it emits any, so a refused import writes
// nothing rather than stopping at the long record with part of its output written.
func (r *Record) CheckSize() error {
	var n countWriter
	enc := json.NewEncoder(&n)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return &Error{Path: r.Source.Path, Line: r.Source.Line, Op: "write", Err: err}
	}
	if n-1 > MaxLineBytes { // the newline is not part of the line
		return &Error{Path: r.Source.Path, Line: r.Source.Line, Op: "write",
			Err: fmt.Errorf("item %q config %q: %w: its record line would be %d bytes, over %d", r.ItemID, r.Config, ErrTooLong, n-1, MaxLineBytes)}
	}
	return nil
}

// countWriter counts the bytes written to it.
type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
