package runs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/framesweep/framesweep/record"
)

// recordsFile is RUN/records.jsonl opened for appending: one write per line, fsynced every
// syncEvery lines or syncAfter, and on Close.
type recordsFile struct {
	mu       sync.Mutex
	f        *os.File
	path     string
	unsynced int
	last     time.Time
	err      error
	closeErr error
}

const (
	syncEvery = 16
	syncAfter = time.Second
)

// PairState is what a RUN holds of a pair: its answer, or only error records (the latest of them
// transient or not). An answer supersedes error records of its pair; a second answer is an error.
type PairState uint8

const (
	Unrecorded      PairState = iota
	Answered                  // a record with status ok
	Failed                    // error records only, the latest not transient
	FailedTransient           // error records only, the latest transient (ErrorTransient)
)

// pairRec is a pair's state while a RUN is scanned: the state and, for a failed pair, when its latest
// error record was written (error records of one pair are ordered by their "at", as chunks and
// records.jsonl are not read in the order they were written in every layout).
type pairRec struct {
	state PairState
	at    int64
}

// pairSet is the pairs a scan found.
type pairSet map[record.Pair]pairRec

// add takes one more record of p: an answer beats errors, a later error beats an earlier one, a
// second answer is an error.
func (ps pairSet) add(p record.Pair, f *record.Full) error {
	prev, seen := ps[p]
	cur := pairRec{state: Answered}
	if f.Failed() {
		cur.state = Failed
		if f.Transient() {
			cur.state = FailedTransient
		}
		if t, err := time.Parse(time.RFC3339Nano, f.At); err == nil {
			cur.at = t.UnixNano()
		}
	}
	switch {
	case !seen:
		ps[p] = cur
	case prev.state == Answered && cur.state == Answered:
		return fmt.Errorf("a second record of item %q config %q", p.Item, p.Config)
	case prev.state == Answered:
	case cur.state == Answered || cur.at >= prev.at:
		ps[p] = cur
	}
	return nil
}

// openRecords opens path for appending after repairing its tail: a last line without its newline
// (a write torn by a crash) is cut, so the next record starts on a line of its own. It returns how
// many bytes of torn tail were cut. A line in the middle that is not a record is an error naming
// the line: the file is not one a sweep wrote.
//
// done holds the pairs recorded elsewhere in the RUN (chunks copied in from an object store); the
// file's pairs are added to it (pairSet.add: a second answer of a pair is an error).
func openRecords(path string, done pairSet) (*recordsFile, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, err
	}
	_, good, err := scanRecordsInto(f, path, done)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	cut := st.Size() - good
	if cut > 0 {
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, 0, err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, 0, err
		}
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, 0, err
	}
	return &recordsFile{f: f, path: path, last: time.Now()}, cut, nil
}

// scanRecordsInto reads every complete line of r into done (the pairs recorded): it returns the bytes
// read in all and the length of the part that ends with the last newline, so a caller can tell a torn
// tail (n > good; eachLine's rule). Every line is held to the record validator (record.DecodeFull),
// as the audit and merge hold it: a RUN they would refuse is not resumed either.
func scanRecordsInto(r io.Reader, path string, done pairSet) (n, good int64, err error) {
	n, torn, err := eachLine(r, path, true, func(line int, t []byte) error {
		f, err := record.DecodeFull(t, record.Source{Path: path, Line: line})
		if err != nil {
			return fmt.Errorf("not a sweep record: %w", err)
		}
		if f.Status != record.StatusOK && f.Status != record.StatusError {
			return fmt.Errorf("%s:%d: not a sweep record (status %q)", path, line, f.Status)
		}
		if err := done.add(f.Key(), f); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		return nil
	})
	if err != nil {
		return n, 0, err
	}
	return n, n - torn, nil
}

// writeLine appends one line (newline included) with one write.
func (w *recordsFile) writeLine(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := w.f.Write(b); err != nil {
		w.err = fmt.Errorf("%s: %w", w.path, err)
		return w.err
	}
	w.unsynced++
	if w.unsynced >= syncEvery || time.Since(w.last) >= syncAfter {
		w.syncLocked()
	}
	return w.err
}

func (w *recordsFile) syncLocked() {
	if w.unsynced == 0 || w.err != nil {
		return
	}
	if err := w.f.Sync(); err != nil {
		w.err = fmt.Errorf("%s: %w", w.path, err)
	}
	w.unsynced, w.last = 0, time.Now()
}

func (w *recordsFile) chunks() []Chunk { return nil } // appended in place: no chunk

// close syncs and closes; idempotent (a second call returns the first's result).
func (w *recordsFile) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.closeErr
	}
	w.syncLocked()
	err := w.err
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f, w.closeErr = nil, err
	if w.err == nil {
		w.err = errClosed // later writes fail
	}
	return err
}

var errClosed = errors.New("records file closed")

// lockRun takes an exclusive lock on RUN/.lock so two sweeps never append to one records file.
func lockRun(dir string) (func(), error) {
	path := filepath.Join(dir, ".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: another sweep is running on this directory (%v)", dir, err)
	}
	return func() { f.Close() }, nil
}

// scanFull hands every record of one RUN source to fn, decoded whole and validated (record.DecodeFull).
// Its lines were validated when the writer opened, which cut a torn tail of records.jsonl (tornOK);
// eachLine's rule holds all the same: a line that does not decode is an error, never skipped.
func scanFull(r io.Reader, where string, tornOK bool, fn func(*record.Full)) error {
	_, _, err := eachLine(r, where, tornOK, func(line int, t []byte) error {
		f, err := record.DecodeFull(t, record.Source{Path: where, Line: line})
		if err != nil {
			return err
		}
		fn(f)
		return nil
	})
	return err
}
