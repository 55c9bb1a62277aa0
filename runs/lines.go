package runs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/framesweep/framesweep/record"
)

// eachLine is the line reader of a RUN's records sources (records.jsonl and the chunks): every reader
// of them in this package (resume, merge, Find, Writer.Scan) goes through it, and it through
// record.ReadLine. Its rule for what is not a whole line:
//
//   - a line over record.MaxLineBytes is an error naming where:line and the limit (no more than that
//     is held in memory for it);
//   - a last line without its newline (a write a crash tore) is handed to no one: its length is
//     returned as torn when tornOK (records.jsonl, appended in place: resume cuts it, merge drops and
//     counts it), and is an error naming where when not (a chunk is published whole, so one that ends
//     without a newline is not a sweep's);
//   - white space alone is no line (fn is not called; the line numbers count it), and a UTF-8 BOM at
//     the start is skipped, as record.Read skips it;
//   - every other line, trimmed of white space, goes to fn, which decodes it: an undecodable line is
//     fn's error, which ends the read and is returned as is. No line is skipped in silence.
//
// fn may return errStopLines to end the read early (nothing more is read; no error). b is valid only
// during the call. read is the number of bytes read in all (torn included).
func eachLine(r io.Reader, where string, tornOK bool, fn func(line int, b []byte) error) (read, torn int64, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	for line := 1; ; line++ {
		b, err := record.ReadLine(br, record.MaxLineBytes)
		read += int64(len(b))
		switch {
		case errors.Is(err, record.ErrTooLong):
			return read, 0, record.Errorf(where, line, "read", record.ErrTooLong, "over %d bytes", record.MaxLineBytes)
		case err == io.EOF && len(b) > 0 && !tornOK:
			return read, 0, fmt.Errorf("%s: ends with %d bytes without a newline: not published whole by a sweep", where, len(b))
		case err == io.EOF:
			return read, int64(len(b)), nil
		case err != nil:
			return read, 0, &record.Error{Path: where, Line: line, Op: "read", Err: err}
		}
		if line == 1 {
			b = record.TrimBOM(b)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			if err := fn(line, t); err == errStopLines {
				return read, 0, nil
			} else if err != nil {
				return read, 0, err
			}
		}
	}
}

// errStopLines ends eachLine early, without an error.
var errStopLines = errors.New("stop reading lines")
