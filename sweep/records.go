package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/framesweep/framesweep/record"
)

// Record is one line of RUN/records.jsonl: the canonical audit record (the fields `framesweep audit`
// reads, METRICS.md "Records") and the provenance of the pair.
type Record struct {
	ItemID     string             `json:"item_id"`
	Config     string             `json:"config"`
	Status     string             `json:"status"` // ok | error
	Correct    *bool              `json:"correct,omitempty"`
	Score      *float64           `json:"score,omitempty"` // open-ended: Token-F1 of the response against the answer
	Prediction string             `json:"prediction,omitempty"`
	Answer     string             `json:"answer"`
	Confidence *float64           `json:"confidence,omitempty"` // the largest option probability
	Category   string             `json:"category,omitempty"`
	Duration   string             `json:"duration,omitempty"`
	Task       string             `json:"task,omitempty"`
	ConfigMeta *record.ConfigMeta `json:"config_meta,omitempty"`
	LatencyS   *float64           `json:"latency_s,omitempty"` // the runtime's own time for this answer
	Error      string             `json:"error,omitempty"`

	// Provenance of the input.
	Video       string    `json:"video"`
	VideoSHA256 string    `json:"video_sha256,omitempty"`
	StreamIndex *int      `json:"stream_index,omitempty"`
	TimestampsS []float64 `json:"timestamps_s,omitempty"`
	Geometry    string    `json:"geometry,omitempty"`
	Kernel      string    `json:"kernel,omitempty"`
	Images      int       `json:"images_per_frame,omitempty"`
	Width       int       `json:"width,omitempty"` // each image fed (this video's layout)
	Height      int       `json:"height,omitempty"`
	FramesFed   int       `json:"frames_fed,omitempty"`   // plan positions fed (an fps mode's count for this video)
	InputKey    string    `json:"input_key,omitempty"`    // the cache key of the input object
	InputSHA256 string    `json:"input_sha256,omitempty"` // sha256 of the uint8 RGB frames tensor fed
	Damaged     []int     `json:"damaged,omitempty"`      // frames the decoder concealed, fed under --on-damaged keep

	// Provenance of the answer.
	Runtime          string             `json:"runtime"`
	ModelSHA256      map[string]string  `json:"model_sha256,omitempty"` // spec key → file digest
	Template         string             `json:"template,omitempty"`
	PromptSHA256     string             `json:"prompt_sha256,omitempty"`
	Response         string             `json:"response,omitempty"`
	Probs            map[string]float64 `json:"probs,omitempty"`
	PromptTokens     int                `json:"prompt_tokens,omitempty"`
	CompletionTokens int                `json:"completion_tokens,omitempty"`
	RequestSHA256    string             `json:"request_sha256,omitempty"`
	ImageFormat      string             `json:"image_format,omitempty"`
	At               string             `json:"at"` // UTC time the record was written
	// Cascade: an online cascade's step (cascade.go); nil in a full sweep.
	Cascade *CascadeStep `json:"cascade,omitempty"`
}

// pairKey identifies one (item, config) pair.
type pairKey struct{ item, config string }

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
func openRecords(path string, done map[pairKey]bool) (*recordsFile, int64, error) {
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
func scanRecords(r io.Reader, path string) (map[pairKey]bool, int64, error) {
	done := map[pairKey]bool{}
	_, good, err := scanRecordsInto(r, path, done)
	if err != nil {
		return nil, 0, err
	}
	return done, good, nil
}

// scanRecordsInto is scanRecords adding to done (a pair already there is an error); it also returns
// the bytes read in all, so a caller can tell a torn tail (n > good).
func scanRecordsInto(r io.Reader, path string, done map[pairKey]bool) (n, good int64, err error) {
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
		p := pairKey{k.ItemID, k.Config}
		if done[p] {
			return n, 0, fmt.Errorf("%s:%d: a second record of item %q config %q", path, line, k.ItemID, k.Config)
		}
		done[p] = true
	}
}

// write appends one record as one line.
func (w *recordsFile) write(r *Record) error {
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
