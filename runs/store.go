package runs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/framesweep/framesweep/internal/atomicfile"
	"github.com/framesweep/framesweep/internal/bucket"
)

// Where a RUN lives. A local directory keeps the records in one append-only file (records.jsonl,
// fsynced in batches, a torn last line cut on resume) under an flock. An object store cannot append:
// there the records are immutable chunk objects, records/<session>-<seq>.<lines>.<sha256>.jsonl, each
// published whole (a PUT is atomic) and written once (IfNotExist), every ChunkRecords records or
// ChunkInterval and at the end; a crash loses at most the unpublished chunk, whose pairs the next
// --resume redoes, and a torn or partial chunk cannot exist. Readers of either kind read records.jsonl
// (when present) and then every chunk, each checked against its digest (verify.go), so a RUN copied
// between a directory and a bucket reads the same.
const (
	recordsName          = "records.jsonl"
	chunksDir            = "records"
	infoFile             = "run.json"
	bucketLock           = "lock.json"
	DefaultChunkRecords  = 64              // records per chunk object (WriterOptions.ChunkRecords)
	DefaultChunkInterval = 5 * time.Second // the longest a record waits for its chunk (WriterOptions.ChunkInterval)
)

// runStore is one RUN's storage.
type runStore interface {
	where(name string) string // a file of the RUN, for messages (a path or a URL without its query)
	readFile(ctx context.Context, name string) ([]byte, error)
	// writeFile publishes a small file whole (run.json); create: only where none exists yet.
	writeFile(ctx context.Context, name string, b []byte, create bool) error
	lock(ctx context.Context) (func(), error) // one writer at a time; the func releases
	sources(ctx context.Context) ([]string, error)
	open(ctx context.Context, name string) (io.ReadCloser, error)
	// openRecords scans every record already in the RUN (each chunk checked against man) and opens
	// this session's writer.
	openRecords(ctx context.Context, session int, ch chunking, man *manifest) (recordWriter, pairSet, int64, error)
	// mergeWriter is where a merge writes its records; commit makes them the RUN's, cleanup closes the
	// writer and removes what an uncommitted merge left behind locally.
	mergeWriter(session, chunk int) (w recordWriter, commit func() error, cleanup func(), err error)
	records() string             // where records go, for the summary
	scratchDir() (string, error) // inputs in flight without --cache (removed by the session)
	close() error
}

// recordWriter is one session's records output.
type recordWriter interface {
	writeLine(b []byte) error // one record line, newline included
	close() error
	chunks() []Chunk // the chunks published so far, for the RUN's manifest (none: records.jsonl)
}

type chunking struct {
	records  int
	interval time.Duration
}

// openRunStore opens the RUN at loc: a directory (created when create), or a blob URL (bucket.IsURL).
func openRunStore(ctx context.Context, loc string, create bool) (runStore, error) {
	if bucket.IsURL(loc) {
		b, err := bucket.Open(ctx, loc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", loc, err)
		}
		return &bucketRun{b: b}, nil
	}
	if create {
		if err := os.MkdirAll(loc, 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w", loc, err)
		}
	} else if st, err := os.Stat(loc); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a run directory", loc)
	}
	return &dirRun{dir: loc}, nil
}

// scanSource reads one records source into done, a chunk checked against man first: a complete
// source must end with a newline (a chunk, or records.jsonl on an object store); the local
// records.jsonl may have a torn tail, which openRecords cuts.
func scanSource(ctx context.Context, rs runStore, name string, done pairSet, man *manifest) error {
	want, err := man.expect(rs, name)
	if err != nil {
		return err
	}
	rc, err := openVerified(ctx, rs, name, want)
	if err != nil {
		return err
	}
	defer rc.Close()
	where := rs.where(name)
	n, good, err := scanRecordsInto(rc, where, done)
	if err != nil {
		return err
	}
	if n != good {
		return fmt.Errorf("%s: ends with %d bytes without a newline: not published whole by a sweep", where, n-good)
	}
	return nil
}

// ---- a local directory ----

type dirRun struct{ dir string }

func (d *dirRun) where(name string) string { return filepath.Join(d.dir, filepath.FromSlash(name)) }
func (d *dirRun) records() string          { return d.where(recordsName) }
func (d *dirRun) close() error             { return nil }
func (d *dirRun) lock(context.Context) (func(), error) {
	return lockRun(d.dir)
}

func (d *dirRun) readFile(_ context.Context, name string) ([]byte, error) {
	return os.ReadFile(d.where(name))
}

func (d *dirRun) writeFile(_ context.Context, name string, b []byte, _ bool) error {
	return atomicfile.Write(d.where(name), b) // the flock serialises writers
}

func (d *dirRun) open(_ context.Context, name string) (io.ReadCloser, error) {
	return os.Open(d.where(name))
}

func (d *dirRun) sources(context.Context) ([]string, error) {
	var out []string
	if _, err := os.Stat(d.where(recordsName)); err == nil {
		out = append(out, recordsName)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ents, err := os.ReadDir(d.where(chunksDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range ents { // sorted by name
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, chunksDir+"/"+e.Name())
		}
	}
	return out, nil
}

// openRecords: chunks copied in from an object store are read as they are; records.jsonl is
// repaired (torn tail cut) and opened for appending, exactly as a local RUN always was.
func (d *dirRun) openRecords(ctx context.Context, _ int, _ chunking, man *manifest) (recordWriter, pairSet, int64, error) {
	srcs, err := listSources(ctx, d, man)
	if err != nil {
		return nil, nil, 0, err
	}
	done := pairSet{}
	for _, s := range srcs {
		if s != recordsName {
			if err := scanSource(ctx, d, s, done, man); err != nil {
				return nil, nil, 0, err
			}
		}
	}
	rf, cut, err := openRecords(d.records(), done)
	if err != nil {
		return nil, nil, 0, err
	}
	return rf, done, cut, nil
}

func (d *dirRun) scratchDir() (string, error) { return d.where("scratch"), nil }

// mergeWriter: a temporary file that commit renames to records.jsonl (after one fsync: a merge writes
// many lines and needs no batch syncs), removed by cleanup unless committed, so a failed merge leaves
// nothing behind.
func (d *dirRun) mergeWriter(int, int) (recordWriter, func() error, func(), error) {
	f, err := os.CreateTemp(d.dir, ".tmp-merge-*")
	if err != nil {
		return nil, nil, nil, err
	}
	fw := &fileWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20)}
	committed := false
	commit := func() error {
		if err := os.Rename(f.Name(), d.records()); err != nil {
			return err
		}
		committed = true
		return atomicfile.SyncDir(d.dir)
	}
	cleanup := func() {
		fw.close()
		if !committed {
			os.Remove(f.Name())
		}
	}
	return fw, commit, cleanup, nil
}

// ---- an object store ----

type bucketRun struct {
	b    *bucket.Bucket
	once sync.Once
	hold *leaseHold
}

func (r *bucketRun) where(name string) string { return r.b.Where(name) }
func (r *bucketRun) records() string          { return r.where(chunksDir) + "/" }
func (r *bucketRun) close() error             { return r.b.Close() }

// notExist names a missing key as a missing file is named (fs.ErrNotExist), as a directory RUN does.
func (r *bucketRun) notExist(name string, err error) error {
	if errors.Is(err, bucket.ErrNotFound) {
		return fmt.Errorf("%s: %w", r.where(name), fs.ErrNotExist)
	}
	return err
}

func (r *bucketRun) readFile(ctx context.Context, name string) ([]byte, error) {
	b, err := r.b.ReadAll(ctx, name)
	return b, r.notExist(name, err)
}

func (r *bucketRun) writeFile(ctx context.Context, name string, b []byte, create bool) error {
	err := r.b.Write(ctx, name, bytes.NewReader(b), "application/json", create)
	if errors.Is(err, bucket.ErrExists) {
		return fmt.Errorf("%s: another sweep created it at the same time", r.where(name))
	}
	return err
}

func (r *bucketRun) open(ctx context.Context, name string) (io.ReadCloser, error) {
	rd, _, err := r.b.NewReader(ctx, name)
	return rd, r.notExist(name, err)
}

func (r *bucketRun) sources(ctx context.Context) ([]string, error) {
	var out []string
	ok, err := r.b.Exists(ctx, recordsName)
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, recordsName)
	}
	keys, err := r.b.List(ctx, chunksDir+"/")
	if err != nil {
		return nil, err
	}
	for _, k := range keys { // sorted
		if strings.HasSuffix(k, ".jsonl") && path.Dir(k) == chunksDir {
			out = append(out, k)
		}
	}
	return out, nil
}

func (r *bucketRun) openRecords(ctx context.Context, session int, ch chunking, man *manifest) (recordWriter, pairSet, int64, error) {
	srcs, err := listSources(ctx, r, man)
	if err != nil {
		return nil, nil, 0, err
	}
	done := pairSet{}
	for _, s := range srcs {
		if err := scanSource(ctx, r, s, done, man); err != nil {
			return nil, nil, 0, err
		}
	}
	if ch.records < 1 {
		ch.records = DefaultChunkRecords
	}
	if ch.interval <= 0 {
		ch.interval = DefaultChunkInterval
	}
	w := &chunkWriter{r: r, session: session, ch: ch, stop: make(chan struct{}), stopped: make(chan struct{})}
	go w.timer()
	return w, done, 0, nil
}

// scratchDir: the inputs of an object-store RUN are built in a local temporary directory named after
// the RUN, so the next session on this host clears what a killed one left (the lease keeps two
// sessions of one RUN apart).
func (r *bucketRun) scratchDir() (string, error) {
	sum := sha256.Sum256([]byte(r.b.Base()))
	return filepath.Join(os.TempDir(), "framesweep-scratch-"+hex.EncodeToString(sum[:8])), nil
}

// mergeWriter: chunk objects of the merge's session, chunk records each (4096 when 0), published as they
// fill and by cleanup's close (commit has nothing more to do).
func (r *bucketRun) mergeWriter(session, chunk int) (recordWriter, func() error, func(), error) {
	if chunk < 1 {
		chunk = 4096
	}
	cw := &chunkWriter{r: r, session: session, ch: chunking{records: chunk, interval: time.Hour}, stop: make(chan struct{}), stopped: make(chan struct{})}
	go cw.timer()
	return cw, func() error { return nil }, func() { cw.close() }, nil
}

// chunkWriter collects records and publishes them as immutable chunk objects.
type chunkWriter struct {
	r       *bucketRun
	session int
	ch      chunking

	mu      sync.Mutex
	buf     bytes.Buffer
	n       int       // records in buf
	first   time.Time // when the oldest unpublished record came
	seq     int
	sums    []Chunk // the chunks published, in order
	err     error
	closed  bool
	stop    chan struct{}
	stopped chan struct{}
}

func (w *chunkWriter) writeLine(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errClosed
	}
	if w.n == 0 {
		w.first = time.Now()
	}
	w.buf.Write(b)
	w.n++
	if w.n >= w.ch.records {
		w.publishLocked()
	}
	return w.err
}

// publishLocked uploads the buffered records as the next chunk. The upload runs under the lock:
// writers wait for one PUT every ChunkRecords records, and chunks are published in order.
func (w *chunkWriter) publishLocked() {
	if w.n == 0 || w.err != nil {
		return
	}
	if w.r.hold != nil && w.r.hold.lost.Load() {
		w.err = fmt.Errorf("%s: this sweep lost the RUN's lock to another one; its records since the last chunk are not written", w.r.where(bucketLock))
		return
	}
	c := sumChunk(w.buf.Bytes())
	name := chunkName(w.session, w.seq, c)
	c.Name = name
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := w.r.b.Write(ctx, name, bytes.NewReader(w.buf.Bytes()), "application/x-ndjson", true)
	if errors.Is(err, bucket.ErrExists) {
		err = errors.New("the chunk exists already: another sweep is writing this RUN")
	}
	if err != nil {
		w.err = fmt.Errorf("%s: %w", w.r.where(name), err)
		return
	}
	w.seq++
	w.sums = append(w.sums, c)
	w.buf.Reset()
	w.n = 0
}

// timer publishes a chunk once its oldest record has waited ChunkInterval.
func (w *chunkWriter) timer() {
	defer close(w.stopped)
	t := time.NewTicker(max(w.ch.interval/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.mu.Lock()
			if w.n > 0 && time.Since(w.first) >= w.ch.interval {
				w.publishLocked()
			}
			w.mu.Unlock()
		}
	}
}

// close publishes what is left, then lists the session's chunks: one this writer did not publish
// means another sweep wrote this session too (a chunk's name carries its digest, so two writers'
// chunks no longer collide by name); idempotent.
func (w *chunkWriter) close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.err
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.stopped
	w.mu.Lock()
	defer w.mu.Unlock()
	w.publishLocked()
	if w.err == nil {
		w.err = w.foreignChunks()
	}
	return w.err
}

// foreignChunks refuses chunks of this session that this writer did not publish.
func (w *chunkWriter) foreignChunks() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("%s/%04d-", chunksDir, w.session)
	keys, err := w.r.b.List(ctx, prefix)
	if err != nil {
		return fmt.Errorf("%s: %w", w.r.where(prefix), err)
	}
	mine := make(map[string]bool, len(w.sums))
	for _, c := range w.sums {
		mine[c.Name] = true
	}
	for _, k := range keys {
		if !mine[k] && strings.HasSuffix(k, ".jsonl") {
			return fmt.Errorf("%s: a chunk of this session that this sweep did not write: another sweep is writing this RUN", w.r.where(k))
		}
	}
	return nil
}

// chunks is what the writer published, for the RUN's manifest.
func (w *chunkWriter) chunks() []Chunk {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Chunk(nil), w.sums...)
}

// listSources lists a RUN's records sources, refusing a listing without a chunk its manifest records.
func listSources(ctx context.Context, rs runStore, man *manifest) ([]string, error) {
	srcs, err := rs.sources(ctx)
	if err != nil {
		return nil, err
	}
	return man.checkListed(ctx, rs, srcs)
}

// ---- the lock of a RUN on an object store ----

// An object store has no flock. A RUN there is taken with a lease object (lock.json: host, pid, a
// random token and a heartbeat renewed every leaseBeat): another sweep refuses the RUN while the lease
// is fresh, and takes it over once it is older than leaseTTL, or at once when it names a process of
// this host that no longer runs (a sweep killed here, or an earlier run of this container). It is a
// guard against two sweeps writing one RUN by mistake (the chunks are written IfNotExist besides), not
// a consensus protocol: the scheduler runs one task per shard.
const (
	leaseTTL  = 60 * time.Second
	leaseBeat = 10 * time.Second
)

type lease struct {
	Host      string `json:"host"`
	PID       int    `json:"pid"`
	Token     string `json:"token"`
	Heartbeat string `json:"heartbeat"`
}

type leaseHold struct {
	lost atomic.Bool
	stop chan struct{}
	done chan struct{}
}

func (r *bucketRun) lock(ctx context.Context) (func(), error) {
	host, _ := os.Hostname()
	tok := make([]byte, 8)
	rand.Read(tok)
	me := lease{Host: host, PID: os.Getpid(), Token: hex.EncodeToString(tok)}
	put := func(create bool) error {
		me.Heartbeat = time.Now().UTC().Format(time.RFC3339Nano)
		b, _ := json.Marshal(me)
		return r.b.Write(ctx, bucketLock, bytes.NewReader(b), "application/json", create)
	}
	where := r.where(bucketLock)
	b, err := r.b.ReadAll(ctx, bucketLock)
	switch {
	case errors.Is(err, bucket.ErrNotFound):
		if err := put(true); errors.Is(err, bucket.ErrExists) {
			return nil, fmt.Errorf("%s: another sweep took this RUN just now", where)
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	case err != nil:
		return nil, fmt.Errorf("%s: %w", where, err)
	default:
		var l lease
		_ = json.Unmarshal(b, &l)
		hb, perr := time.Parse(time.RFC3339Nano, l.Heartbeat)
		age := time.Since(hb)
		gone := l.Host == host && (l.PID == me.PID || !processAlive(l.PID))
		if perr == nil && age < leaseTTL && !gone {
			return nil, fmt.Errorf("%s: another sweep is running on this RUN (host %s, pid %d, heartbeat %s ago); if it is dead, wait %s or delete that object",
				where, l.Host, l.PID, age.Round(time.Second), (leaseTTL - age).Round(time.Second))
		}
		if err := put(false); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	}
	// Read back: of two sweeps taking over a stale lease at once, the later write wins.
	if got, err := r.b.ReadAll(ctx, bucketLock); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	} else if l := (lease{}); json.Unmarshal(got, &l) != nil || l.Token != me.Token {
		return nil, fmt.Errorf("%s: another sweep took this RUN just now (host %s, pid %d)", where, l.Host, l.PID)
	}
	h := &leaseHold{stop: make(chan struct{}), done: make(chan struct{})}
	r.hold = h
	go func() {
		defer close(h.done)
		t := time.NewTicker(leaseBeat)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				bctx, cancel := context.WithTimeout(context.Background(), leaseBeat)
				var l lease
				if got, err := r.b.ReadAll(bctx, bucketLock); err == nil && json.Unmarshal(got, &l) == nil && l.Token != me.Token {
					h.lost.Store(true) // taken over while this process stalled: stop writing
					cancel()
					return
				}
				me.Heartbeat = time.Now().UTC().Format(time.RFC3339Nano)
				b, _ := json.Marshal(me)
				_ = r.b.Write(bctx, bucketLock, bytes.NewReader(b), "application/json", false)
				cancel()
			}
		}
	}()
	return func() {
		r.once.Do(func() {
			close(h.stop)
			<-h.done
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var l lease
			if got, err := r.b.ReadAll(ctx, bucketLock); err == nil && json.Unmarshal(got, &l) == nil && l.Token == me.Token {
				_ = r.b.Delete(ctx, bucketLock)
			}
		})
	}, nil
}

// processAlive reports whether pid names a running process of this host (signal 0 probes it).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
