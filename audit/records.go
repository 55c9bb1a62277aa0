package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	gojson "github.com/goccy/go-json"
)

// MaxLineBytes bounds one JSONL line, so a corrupt file cannot make a reader hold unbounded memory.
const MaxLineBytes = 16 << 20

// Record is one model answer for one item under one configuration (METRICS.md "Records").
// Pointer fields are optional: nil means unknown, never zero.
type Record struct {
	ItemID     string      `json:"item_id"`
	Config     string      `json:"config"`
	Run        *int        `json:"run,omitempty"`
	Correct    *bool       `json:"correct,omitempty"`
	Score      *float64    `json:"score,omitempty"`
	Prediction string      `json:"prediction,omitempty"`
	Answer     string      `json:"answer,omitempty"`
	Confidence *float64    `json:"confidence,omitempty"`
	Category   string      `json:"category,omitempty"`
	Duration   string      `json:"duration,omitempty"`
	QuestionID string      `json:"question_id,omitempty"`
	Task       string      `json:"task,omitempty"`
	DocHash    string      `json:"doc_hash,omitempty"` // the harness's hash of the item's document (drift check)
	ConfigMeta *ConfigMeta `json:"config_meta,omitempty"`
	LatencyS   *float64    `json:"latency_s,omitempty"`
	Harness    *Harness    `json:"harness,omitempty"` // imported logs: the harness's own aggregate (harness.go)
	// Status is "error" for a pair a sweep could not answer (Error says why); such records carry no
	// verdict and are counted, reported and left out of every metric. "" or "ok" otherwise.
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Cascade is an online cascade's step (`framesweep sweep --cascade`); nil otherwise (online.go).
	Cascade *OnlineStep `json:"cascade,omitempty"`

	// Source locates the record for error messages (file:line); it is not serialised.
	Source Source `json:"-"`
}

// Source is where a record was read from.
type Source struct {
	Path string
	Line int
}

// ConfigMeta describes a configuration. Any record of the config may carry it; missing fields are
// unknown. Indices (the frame indices fed for this record's video) is per record, used for the cascade's
// shared frame cost; every other field must agree across the records of one config.
type ConfigMeta struct {
	Frames   *int   `json:"frames,omitempty"`
	TextOnly *bool  `json:"text_only,omitempty"`
	Width    *int   `json:"width,omitempty"`
	Height   *int   `json:"height,omitempty"`
	Policy   string `json:"policy,omitempty"`
	Preset   string `json:"preset,omitempty"`
	Seed     *int64 `json:"seed,omitempty"`
	Pipeline string `json:"pipeline,omitempty"`
	Indices  []int  `json:"indices,omitempty"`
}

// Record statuses.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Failed reports whether r is an error record (a pair that got no answer).
func (r *Record) Failed() bool { return r.Status == StatusError }

// RunIndex is the record's run number (0 when the field is absent).
func (r *Record) RunIndex() int {
	if r.Run == nil {
		return 0
	}
	return *r.Run
}

// Validate checks one record against METRICS.md "Records".
func (r *Record) Validate() error {
	p, l := r.Source.Path, r.Source.Line
	switch {
	case r.ItemID == "":
		return Errorf(p, l, "validate", ErrInvalid, "missing item_id")
	case r.Config == "":
		return Errorf(p, l, "validate", ErrInvalid, "item %q: missing config", r.ItemID)
	case r.Status != "" && r.Status != StatusOK && r.Status != StatusError:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: status %q (want ok or error)", r.ItemID, r.Config, r.Status)
	case r.Status == StatusError:
		if r.Correct != nil || r.Score != nil {
			return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: an error record has a verdict", r.ItemID, r.Config)
		}
		return nil
	case r.Correct == nil && r.Score == nil:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: needs correct (multiple choice) or score (open-ended)", r.ItemID, r.Config)
	case r.Correct != nil && r.Score != nil:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: has both correct and score", r.ItemID, r.Config)
	}
	if r.Score != nil && !(*r.Score >= 0 && *r.Score <= 1) {
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: score %v outside [0,1]", r.ItemID, r.Config, *r.Score)
	}
	if r.Confidence != nil && !(*r.Confidence >= 0 && *r.Confidence <= 1) {
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: confidence %v outside [0,1]", r.ItemID, r.Config, *r.Confidence)
	}
	if r.LatencyS != nil && !(*r.LatencyS >= 0 && !math.IsInf(*r.LatencyS, 1)) {
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: latency_s %v is negative", r.ItemID, r.Config, *r.LatencyS)
	}
	if r.Run != nil && *r.Run < 0 {
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: run %d is negative", r.ItemID, r.Config, *r.Run)
	}
	if m := r.ConfigMeta; m != nil {
		if m.Frames != nil && *m.Frames < 0 {
			return Errorf(p, l, "validate", ErrInvalid, "config %q: frames %d is negative", r.Config, *m.Frames)
		}
		if (m.Width != nil && *m.Width <= 0) || (m.Height != nil && *m.Height <= 0) {
			return Errorf(p, l, "validate", ErrInvalid, "config %q: width and height must be positive", r.Config)
		}
		for _, ix := range m.Indices {
			if ix < 0 {
				return Errorf(p, l, "validate", ErrInvalid, "config %q: negative frame index %d", r.Config, ix)
			}
		}
		if m.TextOnly != nil && *m.TextOnly && m.Frames != nil && *m.Frames != 0 {
			return Errorf(p, l, "validate", ErrInvalid, "config %q: text_only with frames %d", r.Config, *m.Frames)
		}
	}
	return r.validateHarness()
}

// utf8BOM starts the text files some Windows tools write (harness logs among them); every reader of a
// user's file skips it, as the YAML decoder does for grids.
var utf8BOM = []byte("\xef\xbb\xbf")

// TrimBOM returns b without a leading UTF-8 byte order mark.
func TrimBOM(b []byte) []byte { return bytes.TrimPrefix(b, utf8BOM) }

// ReadRecords reads canonical JSONL from r; path names the source in errors. Blank lines and a leading
// UTF-8 byte order mark are skipped.
// Every record is validated; the first error in line order (naming file and line) stops the read. Lines
// are decoded in parallel batches, so the result does not depend on the number of workers. Records may
// share pointer targets (one true, one false) and strings: treat pointer fields as read-only and assign
// a new pointer to change one.
func ReadRecords(r io.Reader, path string) ([]Record, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	var out []Record
	line := 0
	const batch = 4096
	lines := make([][]byte, 0, batch)
	nums := make([]int, 0, batch)
	for {
		b, err := readLine(br)
		if len(b) > 0 || err == nil {
			line++
		}
		if errors.Is(err, ErrTooLong) {
			return nil, Errorf(path, line, "read", ErrTooLong, "over %d bytes", MaxLineBytes)
		}
		if err != nil && err != io.EOF {
			return nil, &Error{Path: path, Line: line, Op: "read", Err: err}
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			lines = append(lines, t)
			nums = append(nums, line)
		}
		if len(lines) == batch || (err == io.EOF && len(lines) > 0) {
			base := len(out)
			out = slices.Grow(out, len(lines))[:base+len(lines)]
			if derr := decodeBatch(out[base:], lines, nums, path); derr != nil {
				return nil, derr
			}
			lines, nums = lines[:0], nums[:0]
		}
		if err == io.EOF {
			return out, nil
		}
	}
}

// decodeBatch parses and validates lines concurrently and returns the first error in line order.
func decodeBatch(recs []Record, lines [][]byte, nums []int, path string) error {
	errs := make([]error, len(lines))
	workers := min(runtime.GOMAXPROCS(0), (len(lines)+255)/256)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(lines); i += workers {
				if err := decodeRecord(lines[i], &recs[i]); err != nil {
					errs[i] = Errorf(path, nums[i], "parse", ErrSyntax, "%v", err)
					continue
				}
				recs[i].Source = Source{Path: path, Line: nums[i]}
				errs[i] = recs[i].Validate()
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeRecord parses one record line with goccy/go-json: on the record schema it decodes about 5×
// faster than encoding/json and 1.7× faster than the hand-written scanner it replaced (docs/audit.md,
// BenchmarkDecodeRecord), and FuzzDecodeRecord holds it to encoding/json's results.
func decodeRecord(b []byte, r *Record) error {
	*r = Record{}
	return gojson.Unmarshal(b, r)
}

// readLine returns one line without its terminator, or ErrTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLineBytes {
			return nil, ErrTooLong
		}
		buf = append(buf, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return buf, err
		}
		return buf[:len(buf)-1], nil
	}
}

// ReadFile reads one records file.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Path: path, Op: "open", Err: err}
	}
	defer f.Close()
	return ReadRecords(f, path)
}

// ExpandPaths turns the CLI's positionals into record files: a file stays itself; a directory (a sweep run
// directory) contributes its records*.jsonl files, or, when it has none, all of its *.jsonl files (sorted).
func ExpandPaths(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, &Error{Path: p, Op: "open", Err: err}
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, &Error{Path: p, Op: "open", Err: err}
		}
		// Names are matched here rather than with filepath.Glob, which would read '[', '*' or '?' in the
		// directory's own path as a pattern (a run directory "exp[1]" would match nothing).
		var records, all []string
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			all = append(all, filepath.Join(p, name))
			if strings.HasPrefix(name, "records") {
				records = append(records, filepath.Join(p, name))
			}
		}
		found := records
		if len(found) == 0 {
			found = all
		}
		if len(found) == 0 {
			return nil, Errorf(p, 0, "open", ErrEmpty, "directory holds no *.jsonl records files")
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// ReadPaths reads every file ExpandPaths finds, in order.
func ReadPaths(paths []string) ([]Record, error) {
	files, err := ExpandPaths(paths)
	if err != nil {
		return nil, err
	}
	var all []Record
	for _, f := range files {
		recs, err := ReadFile(f)
		if err != nil {
			return nil, err
		}
		all = append(all, recs...)
	}
	if len(all) == 0 {
		return nil, Errorf(strings.Join(files, ","), 0, "read", ErrEmpty, "the input holds only blank lines")
	}
	return all, nil
}

// WriteRecords writes records as canonical JSONL: one object per line, fields in the order of Record,
// optional fields omitted when unknown, no HTML escaping.
func WriteRecords(w io.Writer, recs []Record) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}
