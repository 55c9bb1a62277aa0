package runs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// Chunk digests. An object store (or a proxy, a disk, a connection) may return bytes other than those
// a sweep published, and plausible wrong bytes parse. So every chunk a session publishes carries the
// sha256 of its bytes and its line count twice: in its own name (records/<session>-<seq>.<lines>.<sha256>
// .jsonl, published in the same PUT, so a session killed before it ends leaves none unrecorded) and in
// the RUN's manifest, run.json's session entry (Session.Chunks, written when the session ends), which
// also names a chunk the store lost. Every reader of a RUN reads a chunk whole, checks it, reads it once
// more on a mismatch, and only then hands on its lines; a second mismatch is a *ChunkError. Chunks of
// RUNs written before digests (records/<session>-<seq>.jsonl, in no manifest) are read as before, with
// a note (Reader.Notes). The local records.jsonl, appended in place under an flock, is no chunk and
// carries none.

// Chunk is a records chunk as the RUN's manifest records it.
type Chunk struct {
	Name   string `json:"name"` // the object, relative to the RUN: records/…
	Lines  int    `json:"lines"`
	SHA256 string `json:"sha256"`
}

// ErrChunkDigest marks a chunk whose bytes are not what its name and the RUN's manifest record (read
// twice), or a chunk the manifest lists and the store does not hold.
var ErrChunkDigest = errors.New("records chunk does not match the RUN's manifest")

// ChunkError is a chunk read twice with bytes other than the manifest records.
type ChunkError struct {
	Object string // where it was read (a path, or a URL without its query)
	Want   Chunk  // what the manifest records
	Got    Chunk  // what the second read returned
	Over   int64  // > 0: the read was stopped after this many bytes, more than Want.Lines lines can hold
}

func (e *ChunkError) Error() string {
	got := fmt.Sprintf("sha256 %s (%d lines)", e.Got.SHA256, e.Got.Lines)
	if e.Over > 0 {
		got = fmt.Sprintf("over %d bytes (more than %d lines hold)", e.Over, e.Want.Lines)
	}
	return fmt.Sprintf("%s: %v: expected sha256 %s (%d lines), received %s; read twice: the store returns other bytes than the sweep wrote",
		e.Object, ErrChunkDigest, e.Want.SHA256, e.Want.Lines, got)
}

func (e *ChunkError) Unwrap() error { return ErrChunkDigest }

// chunkName is records/<session>-<seq>.<lines>.<sha256>.jsonl: names sort in the order they were
// written, and carry what the chunk must read as.
func chunkName(session, seq int, c Chunk) string {
	return fmt.Sprintf("%s/%04d-%06d.%d.%s.jsonl", chunksDir, session, seq, c.Lines, c.SHA256)
}

var digestName = regexp.MustCompile(`^records/[0-9]{4,}-[0-9]{6,}\.([0-9]{1,12})\.([0-9a-f]{64})\.jsonl$`)

// nameChunk is what a chunk's name records of it (false: a name without digest, an older chunk).
func nameChunk(name string) (Chunk, bool) {
	m := digestName.FindStringSubmatch(name)
	if m == nil {
		return Chunk{}, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return Chunk{}, false
	}
	return Chunk{Name: name, Lines: n, SHA256: m[2]}, true
}

// sumChunk is the Chunk of b, published as name.
func sumChunk(b []byte) Chunk {
	s := sha256.Sum256(b)
	return Chunk{Lines: bytes.Count(b, []byte{'\n'}), SHA256: hex.EncodeToString(s[:])}
}

// manifest is what a RUN's run.json records of its chunks (every session's).
type manifest struct {
	chunks map[string]Chunk
	order  []string
}

func newManifest(ri *Info) *manifest {
	m := &manifest{chunks: map[string]Chunk{}}
	if ri == nil {
		return m
	}
	for _, s := range ri.Sessions {
		for _, c := range s.Chunks {
			if _, dup := m.chunks[c.Name]; !dup {
				m.order = append(m.order, c.Name)
			}
			m.chunks[c.Name] = c
		}
	}
	return m
}

// expect is what the chunk name must read as: the manifest's entry, else its name's; nil for
// records.jsonl and for a chunk of a RUN written before digests. A name and an entry that disagree are
// an error.
func (m *manifest) expect(rs runStore, name string) (*Chunk, error) {
	byName, named := nameChunk(name)
	listed, ok := m.chunks[name]
	switch {
	case ok && named && (listed.Lines != byName.Lines || listed.SHA256 != byName.SHA256):
		return nil, fmt.Errorf("%s: %w: run.json records sha256 %s (%d lines), the object's name sha256 %s (%d lines)",
			rs.where(name), ErrChunkDigest, listed.SHA256, listed.Lines, byName.SHA256, byName.Lines)
	case ok:
		return &listed, nil
	case named:
		return &byName, nil
	}
	return nil, nil
}

// checkListed refuses a listing that lacks a chunk the manifest records: listed once more (a listing
// may lag a store's writes), then an error naming the first lost chunk.
func (m *manifest) checkListed(ctx context.Context, rs runStore, srcs []string) ([]string, error) {
	for try := 0; ; try++ {
		have := make(map[string]bool, len(srcs))
		for _, s := range srcs {
			have[s] = true
		}
		var lost []string
		for _, n := range m.order {
			if !have[n] {
				lost = append(lost, n)
			}
		}
		if len(lost) == 0 {
			return srcs, nil
		}
		if try == 1 {
			c := m.chunks[lost[0]]
			return nil, fmt.Errorf("%s: %w: run.json records this chunk (sha256 %s, %d lines) and the store does not hold it (%d such chunk(s)): records are lost",
				rs.where(lost[0]), ErrChunkDigest, c.SHA256, c.Lines, len(lost))
		}
		var err error
		if srcs, err = rs.sources(ctx); err != nil {
			return nil, err
		}
	}
}

// unverifiedNote is the note on a RUN some of whose chunks carry no digest ("" when none).
func (m *manifest) unverifiedNote(rs runStore, srcs []string) string {
	var old, all int
	for _, s := range srcs {
		if s == recordsName {
			continue
		}
		all++
		if c, _ := m.expect(rs, s); c == nil {
			old++
		}
	}
	if old == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d of %d records chunks carry no sha256 (written before framesweep recorded chunk digests): read unverified",
		rs.where(chunksDir), old, all)
}

// openVerified opens the records source name; a chunk with a digest (want) is read whole and checked
// first, once more on a mismatch or a failed read, so no line of it goes on unless all of it is what
// was published.
func openVerified(ctx context.Context, rs runStore, name string, want *Chunk) (io.ReadCloser, error) {
	if want == nil {
		return rs.open(ctx, name)
	}
	// A line is at most record.MaxLineBytes and its newline: more bytes than that cannot be the chunk.
	limit := int64(math.MaxInt64)
	if per := int64(record.MaxLineBytes + 1); int64(want.Lines) < limit/per {
		limit = int64(want.Lines) * per
	}
	var last error
	for try := 0; try < 2; try++ {
		rc, err := rs.open(ctx, name)
		if err != nil {
			return nil, err
		}
		sp, got, over, err := spoolChunk(rc, limit)
		rc.Close()
		if err != nil { // a read cut short (or a client's own checksum refusing the bytes): read again
			last = fmt.Errorf("%s: %w", rs.where(name), err)
			continue
		}
		if over == 0 && got.Lines == want.Lines && got.SHA256 == want.SHA256 {
			return sp, nil
		}
		sp.Close()
		got.Name = name
		last = &ChunkError{Object: rs.where(name), Want: *want, Got: got, Over: over}
	}
	return nil, last
}

// spoolMemory is how much of a chunk is held in memory; the rest goes to an unlinked temporary file.
const spoolMemory = 32 << 20

// spool is a chunk read whole: in memory, or in a temporary file already unlinked.
type spool struct {
	r io.Reader
	f *os.File
}

func (s *spool) Read(p []byte) (int, error) { return s.r.Read(p) }

// Close releases the temporary file; idempotent.
func (s *spool) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// spoolChunk reads r to its end (at most limit bytes: over is the count read when it holds more), with
// its digest and newline count.
func spoolChunk(r io.Reader, limit int64) (sp *spool, got Chunk, over int64, err error) {
	h := sha256.New()
	var mem bytes.Buffer
	var f *os.File
	fail := func(e error) (*spool, Chunk, int64, error) {
		if f != nil {
			f.Close()
		}
		return nil, Chunk{}, 0, e
	}
	buf := make([]byte, 256<<10)
	var n int64
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			b := buf[:k]
			if n += int64(k); n > limit {
				if f != nil {
					f.Close()
				}
				return &spool{r: strings.NewReader("")}, Chunk{}, n, nil
			}
			h.Write(b)
			got.Lines += bytes.Count(b, []byte{'\n'})
			if f == nil && mem.Len()+k > spoolMemory {
				if f, err = os.CreateTemp("", "framesweep-chunk-*"); err != nil {
					return fail(err)
				}
				os.Remove(f.Name()) // the descriptor keeps it until Close
				if _, err := f.Write(mem.Bytes()); err != nil {
					return fail(err)
				}
				mem = bytes.Buffer{}
			}
			if f != nil {
				if _, err := f.Write(b); err != nil {
					return fail(err)
				}
			} else {
				mem.Write(b)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fail(rerr)
		}
	}
	got.SHA256 = hex.EncodeToString(h.Sum(nil))
	if f == nil {
		return &spool{r: bytes.NewReader(mem.Bytes())}, got, 0, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return &spool{r: f, f: f}, got, 0, nil
}
