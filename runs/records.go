package runs

import (
	"bufio"
	"bytes"
	"encoding/json"
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

// openRecords opens path for appending after repairing its tail: a last line without its newline
// (a write torn by a crash) is cut, so the next record starts on a line of its own. It returns the
// pairs already recorded and how many bytes of torn tail were cut. A line in the middle that is not a
// record is an error naming the line: the file is not one a sweep wrote.
//
// done holds the pairs recorded elsewhere in the RUN (chunks copied in from an object store); the
// file's pairs are added to it, and a pair recorded twice is an error.
func openRecords(path string, done map[record.Pair]bool) (*recordsFile, int64, error) {
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

// scanRecords reads every complete line of r: the pairs recorded, and the length of the part that
// ends with the last newline (the rest is a torn tail).
func scanRecords(r io.Reader, path string) (map[record.Pair]bool, int64, error) {
	done := map[record.Pair]bool{}
	_, good, err := scanRecordsInto(r, path, done)
	if err != nil {
		return nil, 0, err
	}
	return done, good, nil
}

// scanRecordsInto is scanRecords adding to done (a pair already there is an error); it also returns
// the bytes read in all, so a caller can tell a torn tail (n > good).
func scanRecordsInto(r io.Reader, path string, done map[record.Pair]bool) (n, good int64, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		n += int64(len(b))
		if err == io.EOF {
			return n, good, nil // b, if any, is the torn tail
		}
		if err != nil {
			return n, 0, fmt.Errorf("%s: %w", path, err)
		}
		good += int64(len(b))
		t := bytes.TrimSpace(b)
		if len(t) == 0 {
			continue
		}
		var k struct {
			ItemID string `json:"item_id"`
			Config string `json:"config"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(t, &k); err != nil || k.ItemID == "" || k.Config == "" || (k.Status != "ok" && k.Status != "error") {
			return n, 0, fmt.Errorf("%s:%d: not a sweep record (%.60q)", path, line, t)
		}
		p := record.Pair{Item: k.ItemID, Config: k.Config}
		if done[p] {
			return n, 0, fmt.Errorf("%s:%d: a second record of item %q config %q", path, line, k.ItemID, k.Config)
		}
		done[p] = true
	}
}

// write appends one record as one line.
func (w *recordsFile) write(r *record.Full) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return w.writeLine(append(b, '\n'))
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

// scanFull hands every record line of r to fn, decoded whole. A line that does not decode is skipped:
// it can only be the torn tail the writer cut (whole lines were validated when it opened).
func scanFull(r io.Reader, fn func(*record.Full)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var f record.Full
		if json.Unmarshal(sc.Bytes(), &f) != nil {
			continue
		}
		fn(&f)
	}
	return sc.Err()
}
