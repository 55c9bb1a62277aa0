package runs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/framesweep/framesweep/internal/atomicfile"
	"github.com/framesweep/framesweep/internal/shard"
	"github.com/framesweep/framesweep/record"
)

// ErrConflict marks two records of one pair that disagree.
var ErrConflict = errors.New("conflicting records")

// volatileFields are the record fields that may differ between two runs of the same pair without the
// answer differing: when the record was written, the runtime's measured time, and the path the video
// had on that machine (its content is video_sha256). Merge compares records without them.
var volatileFields = map[string]bool{"at": true, "latency_s": true, "video": true}

// MergeOptions configure Merge.
type MergeOptions struct {
	Runs    []string // the RUNs to join (directories or blob URLs), in order: the first record of a pair is kept
	Out     string   // the merged RUN: a directory or a blob URL that holds no RUN yet
	Command []string
	// ChunkRecords: records per chunk object when Out is on an object store (0: 4096).
	ChunkRecords int
}

// MergedRun is one input of a merge, in its summary and in the merged run.json.
type MergedRun struct {
	Run        string `json:"run"`
	Shard      string `json:"shard,omitempty"`
	Records    int    `json:"records"`              // records taken from it
	Duplicates int    `json:"duplicates"`           // identical to a record already taken, dropped
	TornBytes  int64  `json:"torn_bytes,omitempty"` // an interrupted last line of its records.jsonl, not a record
}

// MergeSummary is `framesweep merge`'s JSON.
type MergeSummary struct {
	Out        string `json:"out"`
	Records    string `json:"records"`
	Shards     string `json:"shards"`   // the merged shard set ("" = every video)
	Complete   bool   `json:"complete"` // every shard of N is in (or an unsharded RUN)
	Pairs      int    `json:"pairs_merged"`
	Failed     int    `json:"pairs_failed"` // error records among them
	Duplicates int    `json:"duplicates"`
	// PairsExpected is items × configs, known when the shard set is complete and no session used
	// --limit; PairsMissing is what the merged RUN lacks of it (a sweep --resume of it finishes them).
	PairsExpected *int        `json:"pairs_expected,omitempty"`
	PairsMissing  *int        `json:"pairs_missing,omitempty"`
	Runs          []MergedRun `json:"runs"`
	Warnings      []string    `json:"warnings,omitempty"`
	Seconds       float64     `json:"seconds"`
}

// seenRecord is what Merge keeps of a pair already taken: a digest of its comparable fields and where
// it came from (for naming both sources of a conflict).
type seenRecord struct {
	fp   [32]byte
	run  int32
	src  int32
	line int32
}

// Merge joins shard RUNs into one: records of every input, a pair's identical duplicates dropped (and
// counted), two records of one pair that differ an ErrConflict naming both; inputs of another
// grid, items file, runtime, template or input options are refused (ErrRunMismatch), as are shards of
// different N. Out gets records.jsonl (a directory) or chunk objects (an object store) and, last,
// run.json: the first input's, with the merged shard set, every input's sessions (each naming its RUN)
// and the merge's own. The merged RUN audits and resumes like any RUN; a merge that fails leaves no
// run.json (rerun it into an empty --out).
func Merge(ctx context.Context, o MergeOptions) (*MergeSummary, error) {
	start := time.Now()
	if len(o.Runs) == 0 {
		return nil, errors.New("merge: no RUN to merge")
	}
	m := &merger{o: o, sum: &MergeSummary{Out: o.Out, Runs: []MergedRun{}}}
	defer m.closeInputs()
	merged, err := m.openInputs(ctx)
	if err != nil {
		return nil, err
	}
	out, unlock, err := openMergeOutput(ctx, o.Out)
	if err != nil {
		return nil, err
	}
	defer out.close()
	defer unlock()
	m.sum.Records = out.records()
	ri := m.mergedInfo()
	session := len(ri.Sessions) - 1
	w, commit, cleanup, err := mergeWriter(out, session, o.ChunkRecords)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if err := m.copyRecords(ctx, w); err != nil {
		return nil, err
	}
	if err := w.close(); err != nil {
		return nil, err
	}
	if err := commit(); err != nil {
		return nil, err
	}
	m.expected(ri, merged)
	last := &ri.Sessions[session]
	last.Ended, last.Pairs, last.Failed = now(), m.sum.Pairs-m.sum.Failed, m.sum.Failed
	ri.Merged = m.sum.Runs
	if err := writeInfo(ctx, out, ri, true); err != nil {
		return nil, err
	}
	m.sum.Seconds = math.Round(time.Since(start).Seconds()*1000) / 1000
	return m.sum, nil
}

// merger is one Merge in progress.
type merger struct {
	o       MergeOptions
	sum     *MergeSummary
	readers []*Reader
	infos   []*Info
}

func (m *merger) closeInputs() {
	for _, r := range m.readers {
		if r != nil {
			r.Close()
		}
	}
}

// openInputs opens every input RUN and checks that they are shards of one sweep; it returns the
// union of their shard sets.
func (m *merger) openInputs(ctx context.Context) (shard.Set, error) {
	m.readers = make([]*Reader, len(m.o.Runs))
	m.infos = make([]*Info, len(m.o.Runs))
	var sets []shard.Set
	for i, loc := range m.o.Runs {
		rr, err := Open(ctx, loc)
		if err != nil {
			return shard.Set{}, err
		}
		m.readers[i] = rr
		ri, err := rr.Info(ctx)
		if errors.Is(err, os.ErrNotExist) {
			return shard.Set{}, fmt.Errorf("%s: no run.json: not a sweep's RUN", loc)
		}
		if err != nil {
			return shard.Set{}, err
		}
		m.infos[i] = ri
		set, err := shard.ParseSet(ri.Shard)
		if err != nil {
			return shard.Set{}, fmt.Errorf("%s: %v", rr.Where(infoFile), err)
		}
		sets = append(sets, set)
		if i == 0 {
			continue
		}
		cmp := *ri
		cmp.Shard = m.infos[0].Shard // shards of one sweep differ only there
		if err := SameSweep(m.infos[0], &cmp); err != nil {
			return shard.Set{}, fmt.Errorf("%s is not the sweep %s is: %w", loc, m.o.Runs[0], err)
		}
		for _, w := range LibraryWarnings(m.infos[0].Libraries, ri.Libraries) {
			m.sum.Warnings = append(m.sum.Warnings, fmt.Sprintf("%s: %s (in %s)", loc, w, m.o.Runs[0]))
		}
	}
	merged, err := unionShards(sets, m.o.Runs)
	if err != nil {
		return shard.Set{}, err
	}
	m.sum.Shards, m.sum.Complete = merged.String(), merged.Complete()
	if !m.sum.Complete {
		m.sum.Warnings = append(m.sum.Warnings, fmt.Sprintf("shards %s: not every shard of %d is merged", m.sum.Shards, merged.N))
	}
	return merged, nil
}

// openMergeOutput opens and locks the merged RUN, which must hold no RUN nor records yet.
func openMergeOutput(ctx context.Context, loc string) (runStore, func(), error) {
	out, err := openRunStore(ctx, loc, true)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := out.lock(ctx)
	if err != nil {
		out.close()
		return nil, nil, err
	}
	fail := func(err error) (runStore, func(), error) {
		unlock()
		out.close()
		return nil, nil, err
	}
	if _, err := out.readFile(ctx, infoFile); err == nil {
		return fail(fmt.Errorf("%s already holds a RUN (run.json): merge writes a new one; give another --out", loc))
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	if srcs, err := out.sources(ctx); err != nil {
		return fail(err)
	} else if len(srcs) > 0 {
		return fail(fmt.Errorf("%s holds records without run.json (a merge that failed?): give an empty --out", out.where(srcs[0])))
	}
	return out, unlock, nil
}

// mergedInfo is the merged RUN's run.json: the first input's, with the merged shard set, every
// input's sessions (each naming its RUN) and the merge's own session last.
func (m *merger) mergedInfo() *Info {
	ri := *m.infos[0]
	ri.Shard = m.sum.Shards
	ri.Sessions = nil
	for i, in := range m.infos {
		for _, s := range in.Sessions {
			if s.Run == "" {
				s.Run = m.o.Runs[i]
			}
			ri.Sessions = append(ri.Sessions, s)
		}
	}
	ri.Sessions = append(ri.Sessions, Session{Command: m.o.Command, Started: now(), Warnings: m.sum.Warnings})
	return &ri
}

// copyRecords writes every input's records to w: a pair's first record is kept, its identical
// duplicates counted, a differing one an ErrConflict naming both records.
func (m *merger) copyRecords(ctx context.Context, w recordWriter) error {
	configs := map[string]bool{}
	for _, c := range m.infos[0].Grid.Configs {
		configs[c] = true
	}
	seen := map[record.Pair]seenRecord{}
	var names [][]string // per input, its sources
	for i, rr := range m.readers {
		mr := MergedRun{Run: m.o.Runs[i], Shard: m.infos[i].Shard}
		srcs, err := rr.Sources(ctx)
		if err != nil {
			return err
		}
		names = append(names, srcs)
		for si, src := range srcs {
			torn, err := mergeSource(ctx, rr, src, func(line int, b []byte, k record.Pair, fp [32]byte, failed bool) error {
				if !configs[k.Config] {
					return fmt.Errorf("%s:%d: config %q is not in the grid of %s", rr.Where(src), line, k.Config, m.o.Runs[0])
				}
				prev, dup := seen[k]
				if !dup {
					seen[k] = seenRecord{fp: fp, run: int32(i), src: int32(si), line: int32(line)}
					mr.Records++
					if failed {
						m.sum.Failed++
					}
					return w.writeLine(b)
				}
				if prev.fp == fp {
					mr.Duplicates++
					return nil
				}
				first := m.readers[prev.run]
				firstSrc := names[prev.run][prev.src]
				return fmt.Errorf("%w: item %q config %q: %s:%d and %s:%d differ%s (records of one pair must agree but for %s)",
					ErrConflict, k.Item, k.Config, first.Where(firstSrc), prev.line, rr.Where(src), line,
					differingFields(ctx, first, firstSrc, int(prev.line), b), strings.Join(volatileNames(), ", "))
			})
			if err != nil {
				return err
			}
			mr.TornBytes += torn
		}
		m.sum.Pairs += mr.Records
		m.sum.Duplicates += mr.Duplicates
		m.sum.Runs = append(m.sum.Runs, mr)
	}
	return nil
}

// expected sets the pairs a complete merge should hold (items × configs) and how many it lacks,
// when the shard set is complete and no session used --limit.
func (m *merger) expected(ri *Info, merged shard.Set) {
	if !merged.Complete() {
		return
	}
	for _, s := range ri.Sessions {
		if s.Limit > 0 {
			return
		}
	}
	exp := ri.Items.Count * len(ri.Grid.Configs)
	miss := exp - m.sum.Pairs
	m.sum.PairsExpected, m.sum.PairsMissing = &exp, &miss
}

func volatileNames() []string {
	out := make([]string, 0, len(volatileFields))
	for k := range volatileFields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unionShards joins the inputs' shard sets: every set of one N (an unsharded RUN covers all).
func unionShards(sets []shard.Set, runs []string) (shard.Set, error) {
	var u shard.Set
	has := map[int]bool{}
	for i, s := range sets {
		if s.Complete() {
			return shard.Set{N: 1, I: []int{0}}, nil
		}
		if u.N == 0 {
			u.N = s.N
		} else if s.N != u.N {
			return shard.Set{}, fmt.Errorf("%s is a shard of %d, %s of %d: a video's shard depends on N, so shards of different N do not join",
				runs[i], s.N, runs[0], u.N)
		}
		for _, x := range s.I {
			has[x] = true
		}
	}
	for x := range has {
		u.I = append(u.I, x)
	}
	sort.Ints(u.I)
	return u, nil
}

// mergeSource reads one records file of a RUN and hands each record line on with its pair and the
// digest of its comparable fields. A torn last line of records.jsonl (a crash) is no record: it is
// dropped and its length returned; a chunk must be whole.
func mergeSource(ctx context.Context, rr *Reader, src string, fn func(line int, b []byte, k record.Pair, fp [32]byte, failed bool) error) (int64, error) {
	rc, err := rr.OpenSource(ctx, src)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	where := rr.Where(src)
	br := bufio.NewReaderSize(rc, 1<<16)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err == io.EOF {
			if len(b) > 0 && src != recordsName {
				return 0, fmt.Errorf("%s: ends with %d bytes without a newline: not published whole by a sweep", where, len(b))
			}
			return int64(len(b)), nil
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %w", where, err)
		}
		t := bytes.TrimSpace(b)
		if len(t) == 0 {
			continue
		}
		k, fp, status, err := recordDigest(t)
		if err != nil {
			return 0, fmt.Errorf("%s:%d: not a sweep record (%.60q)", where, line, t)
		}
		if err := fn(line, append(t, '\n'), k, fp, status == "error"); err != nil {
			return 0, err
		}
	}
}

// recordDigest parses a record line: its pair, status, and the sha256 of its fields but the volatile
// ones, each key with its compacted value in key order.
func recordDigest(b []byte) (record.Pair, [32]byte, string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return record.Pair{}, [32]byte{}, "", err
	}
	var item, config, status string
	if json.Unmarshal(m["item_id"], &item) != nil || json.Unmarshal(m["config"], &config) != nil || json.Unmarshal(m["status"], &status) != nil ||
		item == "" || config == "" || (status != "ok" && status != "error") {
		return record.Pair{}, [32]byte{}, "", errors.New("no item_id, config and status")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !volatileFields[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		c, err := canonical(m[k])
		if err != nil {
			return record.Pair{}, [32]byte{}, "", err
		}
		fmt.Fprintf(h, "%q:%d:", k, len(c))
		h.Write(c)
	}
	var fp [32]byte
	copy(fp[:], h.Sum(nil))
	return record.Pair{Item: item, Config: config}, fp, status, nil
}

// canonical re-encodes a JSON value with object keys sorted and numbers as written, so two encoders'
// key orders do not make two records differ.
func canonical(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// differingFields names the comparable fields in which the record at src:line and b differ (read
// again: a conflict is rare, and keeping every record in memory is not).
func differingFields(ctx context.Context, rr *Reader, src string, line int, b []byte) string {
	rc, err := rr.OpenSource(ctx, src)
	if err != nil {
		return ""
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 1<<16)
	var first []byte
	for l := 1; l <= line; l++ {
		if first, err = br.ReadBytes('\n'); err != nil && l < line {
			return ""
		}
	}
	var x, y map[string]json.RawMessage
	if json.Unmarshal(first, &x) != nil || json.Unmarshal(b, &y) != nil {
		return ""
	}
	var diff []string
	for k := range x {
		if volatileFields[k] {
			continue
		}
		cx, _ := canonical(x[k])
		cy, _ := canonical(y[k])
		if !bytes.Equal(cx, cy) {
			diff = append(diff, k)
		}
	}
	for k := range y {
		if _, ok := x[k]; !ok && !volatileFields[k] {
			diff = append(diff, k)
		}
	}
	if len(diff) == 0 {
		return ""
	}
	sort.Strings(diff)
	return " in " + strings.Join(diff, ", ")
}

// mergeWriter is where a merge writes its records: in a directory, a temporary file that commit
// renames to records.jsonl (after one fsync: a merge writes many lines and needs no batch syncs); on
// an object store, chunk objects of the merge's session (commit does nothing more). cleanup closes the
// writer and removes an uncommitted temporary file, so a failed merge leaves nothing behind locally.
func mergeWriter(rs runStore, session, chunk int) (w recordWriter, commit func() error, cleanup func(), err error) {
	switch r := rs.(type) {
	case *dirRun:
		f, err := os.CreateTemp(r.dir, ".tmp-merge-*")
		if err != nil {
			return nil, nil, nil, err
		}
		fw := &fileWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20)}
		committed := false
		commit := func() error {
			if err := os.Rename(f.Name(), r.records()); err != nil {
				return err
			}
			committed = true
			return atomicfile.SyncDir(r.dir)
		}
		cleanup := func() {
			fw.close()
			if !committed {
				os.Remove(f.Name())
			}
		}
		return fw, commit, cleanup, nil
	case *bucketRun:
		if chunk < 1 {
			chunk = 4096
		}
		cw := &chunkWriter{r: r, session: session, ch: chunking{records: chunk, interval: time.Hour}, stop: make(chan struct{}), stopped: make(chan struct{})}
		go cw.timer()
		return cw, func() error { return nil }, func() { cw.close() }, nil
	}
	return nil, nil, nil, fmt.Errorf("merge: unknown RUN store %T", rs)
}

// fileWriter writes lines to a temporary file; close flushes, fsyncs and closes (idempotent).
type fileWriter struct {
	f      *os.File
	bw     *bufio.Writer
	closed bool
	err    error
}

func (w *fileWriter) write(r *record.Full) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return w.writeLine(append(b, '\n'))
}

func (w *fileWriter) writeLine(b []byte) error {
	if w.closed {
		return errClosed
	}
	_, err := w.bw.Write(b)
	return err
}

func (w *fileWriter) close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	w.err = w.bw.Flush()
	if err := w.f.Sync(); w.err == nil {
		w.err = err
	}
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	return w.err
}
