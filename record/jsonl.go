package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// utf8BOM starts the text files some Windows tools write (harness logs among them); every reader of a
// user's file skips it, as the YAML decoder does for grids.
var utf8BOM = []byte("\xef\xbb\xbf")

// TrimBOM returns b without a leading UTF-8 byte order mark.
func TrimBOM(b []byte) []byte { return bytes.TrimPrefix(b, utf8BOM) }

// Read reads canonical JSONL from r; path names the source in errors. Blank lines and a leading
// UTF-8 byte order mark are skipped.
// Every record is validated; the first error in line order (naming file and line) stops the read. Lines
// are decoded in parallel batches, so the result does not depend on the number of workers. Records
// share the values many of them repeat (compact.go): treat pointer fields as read-only and assign a
// new pointer to change one.
func Read(r io.Reader, path string) ([]Record, error) {
	return newReading().read(r, path, nil)
}

// batchBytes bounds the lines one batch holds (long lines make short batches).
const batchBytes = 32 << 20

// reading is one read of records, over one or more files: the shared copies of their repeated values
// (one compactor per decoding worker) and the buffer lines are read into.
type reading struct {
	cs    []*compactor
	arena []byte
}

func newReading() *reading {
	rd := &reading{}
	for range runtime.GOMAXPROCS(0) {
		rd.cs = append(rd.cs, newCompactor())
	}
	return rd
}

// read appends r's records to out (which it grows only when its capacity does not suffice).
func (rd *reading) read(r io.Reader, path string, out []Record) ([]Record, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	line := 0
	const batch = 4096
	lines := make([][]byte, 0, batch)
	nums := make([]int, 0, batch)
	var offs [][2]int
	rd.arena = rd.arena[:0]
	for {
		b, err := ReadLine(br, MaxLineBytes)
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
			// The batch's lines are copied into one buffer used again by the next batch: no
			// allocation per line.
			offs = append(offs, [2]int{len(rd.arena), len(rd.arena) + len(t)})
			rd.arena = append(rd.arena, t...)
			nums = append(nums, line)
		}
		if len(offs) == batch || len(rd.arena) >= batchBytes || (err == io.EOF && len(offs) > 0) {
			lines = lines[:0]
			for _, o := range offs {
				lines = append(lines, rd.arena[o[0]:o[1]])
			}
			base := len(out)
			out = slices.Grow(out, len(lines))[:base+len(lines)]
			if derr := decodeBatch(out[base:], lines, nums, path, rd.cs); derr != nil {
				return nil, derr
			}
			offs, nums, rd.arena = offs[:0], nums[:0], rd.arena[:0]
		}
		if err == io.EOF {
			return out, nil
		}
	}
}

// decodeBatch parses and validates lines concurrently and returns the first error in line order.
// Worker w makes its records compact with cs[w].
func decodeBatch(recs []Record, lines [][]byte, nums []int, path string, cs []*compactor) error {
	errs := make([]error, len(lines))
	workers := min(len(cs), (len(lines)+255)/256)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := cs[w]
			spans := make([]span, len(sharedKeys))
			for i := w; i < len(lines); i += workers {
				clear(spans)
				if err := checkLine(lines[i], sharedKeys, spans); err != nil {
					errs[i] = &Error{Path: path, Line: nums[i], Op: "parse", Err: err}
					continue
				}
				f := &c.full
				if err := c.decode(lines[i], spans, f); err != nil {
					errs[i] = Errorf(path, nums[i], "parse", ErrSyntax, "%v", err)
					continue
				}
				f.Source = Source{Path: path, Line: nums[i]}
				if errs[i] = f.Validate(); errs[i] == nil {
					recs[i] = f.Record
					recs[i].VideoKey = c.str(f.VideoIdentity())
					c.record(&recs[i])
					c.keep(lines[i], spans, &recs[i])
				}
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

// decodeFull parses one record line, the canonical record and a sweep's provenance, with
// goccy/go-json: on the record schema it decodes about 5× faster than encoding/json and 1.7× faster
// than the hand-written scanner it replaced (docs/audit.md, BenchmarkDecodeRecord), and
// FuzzDecodeRecord holds it to encoding/json's results. The provenance is decoded (and validated) so
// that every reader refuses what a sweep's reader refuses, though the audit keeps only the record.
func decodeFull(b []byte, f *Full) error {
	*f = Full{}
	if err := gojson.Unmarshal(b, f); err != nil {
		return err
	}
	f.Upgrade()
	return nil
}

// ReadLine reads one line of a JSON Lines file, its newline included: at the end of the input, what
// is left (maybe nothing) and io.EOF. A line of more than max bytes, its newline not counted, is
// ErrTooLong, and no more than max bytes and one buffer of br are held for it, so a corrupt file cannot
// make a reader hold unbounded memory. The line is a view of br's buffer when it fits there (valid
// until the next read from br), else a copy: a caller that keeps it copies it.
//
// Every reader that streams a JSON Lines file reads through it: records files (Read), items, the
// export's files, a RUN's records sources (runs), lmms-eval sample logs (ingest) and extract manifests
// (bench); the importers that take a whole file into memory first (a JSON lines table) bound the file
// instead (ingest.MaxFileBytes). The rule they share: a line over the limit and a line that does not decode are
// errors naming file and line, never skipped; blank lines are no lines; a last line without its newline
// is read as a line, except in a RUN, where it is the torn tail of an interrupted write: resume cuts
// it, merge drops and counts it, and a chunk (published whole) that has one is refused.
func ReadLine(br *bufio.Reader, max int) ([]byte, error) {
	frag, err := br.ReadSlice('\n')
	line := frag
	if err == bufio.ErrBufferFull {
		line = append([]byte(nil), frag...)
		for err == bufio.ErrBufferFull && len(line) <= max {
			frag, err = br.ReadSlice('\n')
			line = append(line, frag...)
		}
	}
	n := len(line)
	if err == nil {
		n-- // the newline
	}
	if n > max {
		return nil, ErrTooLong
	}
	return line, err
}

// ReadFile reads one records file.
func ReadFile(path string) ([]Record, error) {
	return newReading().readFile(path, nil)
}

func (rd *reading) readFile(path string, out []Record) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Path: path, Op: "open", Err: err}
	}
	defer f.Close()
	return rd.read(f, path, out)
}

// countLines is CountLines of the file at path.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, &Error{Path: path, Op: "open", Err: err}
	}
	defer f.Close()
	n, err := CountLines(f)
	if err != nil {
		return 0, &Error{Path: path, Op: "read", Err: err}
	}
	return n, nil
}

// CountLines is the number of newline-ended or final lines r holds: an upper bound of its records, so
// a slice that holds every record of a read can be made once, at its size. Growing it by copying
// would hold the old and the new array at once, and the pages of every array it outgrew stay in the
// process's memory for a while after they are freed: a read of 10⁶ records then peaks at several
// times the records' size.
func CountLines(r io.Reader) (int, error) {
	buf := make([]byte, 1<<20)
	n, last := 0, byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
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

// ReadPaths reads every file ExpandPaths finds, in order; error records an answer of their pair
// supersedes are dropped (Supersede).
func ReadPaths(paths []string) ([]Record, error) {
	files, err := ExpandPaths(paths)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, f := range files {
		n, err := countLines(f)
		if err != nil {
			return nil, err
		}
		total += n
	}
	rd := newReading()
	all := make([]Record, 0, total)
	for _, f := range files {
		if all, err = rd.readFile(f, all); err != nil {
			return nil, err
		}
	}
	if len(all) == 0 {
		return nil, Errorf(strings.Join(files, ","), 0, "read", ErrEmpty, "the input holds only blank lines")
	}
	all, _ = Supersede(all)
	return all, nil
}

// Write writes records as canonical JSONL: one object per line, fields in the order of Record,
// optional fields omitted when unknown, no HTML escaping. Every record is held to what a reader
// accepts (Validate, CheckLine) before it is written: what Write writes, Read reads.
func Write(w io.Writer, recs []Record) error {
	lw := NewLineWriter(w)
	for i := range recs {
		if err := lw.Write(&recs[i]); err != nil {
			return err
		}
	}
	return lw.Flush()
}

// LineWriter is Write one record at a time (buffered: Flush at the end).
type LineWriter struct {
	bw   *bufio.Writer
	line bytes.Buffer
	enc  *json.Encoder
}

// NewLineWriter writes records to w.
func NewLineWriter(w io.Writer) *LineWriter {
	lw := &LineWriter{bw: bufio.NewWriter(w)}
	lw.enc = json.NewEncoder(&lw.line)
	lw.enc.SetEscapeHTML(false)
	return lw
}

// Write validates r and writes it as one line.
func (lw *LineWriter) Write(r *Record) error {
	lw.line.Reset()
	if err := r.Validate(); err != nil {
		return err
	}
	if err := lw.enc.Encode(r); err != nil {
		return err
	}
	if err := CheckLine(bytes.TrimSuffix(lw.line.Bytes(), []byte("\n"))); err != nil {
		return &Error{Path: r.Source.Path, Line: r.Source.Line, Op: "write", Err: fmt.Errorf("item %q config %q: %w", r.ItemID, r.Config, err)}
	}
	_, err := lw.bw.Write(lw.line.Bytes())
	return err
}

// Flush writes what is buffered.
func (lw *LineWriter) Flush() error { return lw.bw.Flush() }
