package runs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

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
	// Items is the sweep's items file, to count the pairs against ("": the path run.json names, when
	// it is there and still the sweep's: the same canonical digest).
	Items string
}

// MergedRun is one input of a merge, in its summary and in the merged run.json.
type MergedRun struct {
	Run        string `json:"run"`
	Shard      string `json:"shard,omitempty"`
	Records    int    `json:"records"`              // records taken from it
	Duplicates int    `json:"duplicates"`           // identical to a record already taken, dropped
	Superseded int    `json:"superseded,omitempty"` // error records an answer (or a later error) of their pair supersedes, dropped
	TornBytes  int64  `json:"torn_bytes,omitempty"` // an interrupted last line of its records.jsonl, not a record
}

// MergeSummary is `framesweep merge`'s JSON.
type MergeSummary struct {
	Out     string `json:"out"`
	Records string `json:"records"`
	Shards  string `json:"shards"` // the merged shard set ("" = every video)
	// Complete: every pair of the sweep (its items × its grid) has a record: every shard of N is in
	// (or an unsharded RUN), the items file is known, and no pair is missing.
	Complete       bool `json:"complete"`
	ShardsComplete bool `json:"shards_complete"` // every shard of N is in (or an unsharded RUN)
	Pairs          int  `json:"pairs_merged"`
	Failed         int  `json:"pairs_failed"` // error records among them
	Duplicates     int  `json:"duplicates"`
	Superseded     int  `json:"superseded"` // error records superseded by a record of their pair
	// Items is the items file the pairs were counted against ("" when none could be read).
	Items string `json:"items,omitempty"`
	// PairsExpected is items × configs (the first --limit items when every session used one), known
	// when the shard set is complete and the items file is known; PairsMissing is what the merged RUN
	// lacks of it (a sweep --resume of it finishes them), MissingExamples up to 10 of them.
	PairsExpected   *int        `json:"pairs_expected,omitempty"`
	PairsMissing    *int        `json:"pairs_missing,omitempty"`
	MissingExamples []string    `json:"missing_examples,omitempty"`
	Runs            []MergedRun `json:"runs"`
	Warnings        []string    `json:"warnings,omitempty"`
	// Notes name what the merge could not check: inputs' chunks written before chunk digests.
	Notes   []string `json:"notes,omitempty"`
	Seconds float64  `json:"seconds"`
}

// seenRecord is what Merge keeps of a pair already taken: a digest of its comparable fields, where
// it came from (for naming both sources of a conflict, and for writing an error record at the end),
// and for an error record when it was written (of a pair's error records the latest is kept).
type seenRecord struct {
	fp     [32]byte
	run    int32
	src    int32
	line   int32
	failed bool
	at     int64
}

// Merge joins shard RUNs into one: records of every input, a pair's identical duplicates dropped (and
// counted), two records of one pair that differ an ErrConflict naming both; inputs of another
// grid, items file, runtime, template or input options are refused (ErrRunMismatch), as are shards of
// different N. Out gets records.jsonl (a directory) or chunk objects (an object store) and, last,
// run.json: the first input's, with the merged shard set, every input's sessions (each naming its RUN)
// and the merge's own. Every input chunk is checked against its digest before a line of it is read
// (verify.go; a chunk the store returns otherwise twice is a *ChunkError, inputs without digests are
// named in Notes), and the merged RUN's chunks carry theirs. The merged RUN audits and resumes like
// any RUN; a merge that fails leaves no run.json (rerun it into an empty --out).
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
	if err := outsideInputs(o.Out, o.Runs); err != nil {
		return nil, err
	}
	if err := m.loadItems(); err != nil {
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
	w, commit, cleanup, err := out.mergeWriter(session, o.ChunkRecords)
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
	m.expected(merged)
	last := &ri.Sessions[session]
	last.Ended, last.Pairs, last.Failed = now(), m.sum.Pairs-m.sum.Failed, m.sum.Failed
	last.Chunks = w.chunks()
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
	names   [][]string     // per input, its sources
	items   map[string]int // the items file's ids and their position (nil: not known)
	order   []string       // the items file's ids in order
	seen    map[record.Pair]seenRecord
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
		notes, err := rr.Notes(ctx)
		if err != nil {
			return shard.Set{}, err
		}
		m.sum.Notes = append(m.sum.Notes, notes...)
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
	m.sum.Shards, m.sum.ShardsComplete = merged.String(), merged.Complete()
	if !m.sum.ShardsComplete {
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
			s.Chunks = nil // its RUN's objects, not the merged RUN's
			ri.Sessions = append(ri.Sessions, s)
		}
	}
	ri.Sessions = append(ri.Sessions, Session{Kind: SessionMerge, Command: m.o.Command, Started: now(), Warnings: m.sum.Warnings})
	return &ri
}

// copyRecords writes every input's records to w: each record validated (record.DecodeFull: types,
// UTF-8, the line limit, the values), its config in the grid and its item in the items file; a pair's
// answer is written when it is met, its identical duplicates counted, a differing one an ErrConflict
// naming both records. Error records wait: an answer of their pair supersedes them (a resumed sweep
// asked the pair again), and of a pair's error records only the latest is written, at the end.
func (m *merger) copyRecords(ctx context.Context, w recordWriter) error {
	configs := map[string]bool{}
	for _, c := range m.infos[0].Grid.Configs {
		configs[c] = true
	}
	m.seen = map[record.Pair]seenRecord{}
	for i, rr := range m.readers {
		m.sum.Runs = append(m.sum.Runs, MergedRun{Run: m.o.Runs[i], Shard: m.infos[i].Shard})
		srcs, err := rr.Sources(ctx)
		if err != nil {
			return err
		}
		m.names = append(m.names, srcs)
		for si, src := range srcs {
			torn, err := mergeSource(ctx, rr, src, func(line int, b []byte, f *record.Full, fp [32]byte) error {
				if !configs[f.Config] {
					return fmt.Errorf("%s:%d: config %q is not in the grid of %s", rr.Where(src), line, f.Config, m.o.Runs[0])
				}
				if _, ok := m.items[f.ItemID]; !ok && m.items != nil {
					return fmt.Errorf("%s:%d: item %q is not in the items file %s of this sweep", rr.Where(src), line, f.ItemID, m.sum.Items)
				}
				cur := seenRecord{fp: fp, run: int32(i), src: int32(si), line: int32(line), failed: f.Failed(), at: recordTime(f)}
				return m.take(ctx, w, f.Key(), cur, b)
			})
			if err != nil {
				return err
			}
			m.sum.Runs[i].TornBytes += torn
		}
	}
	if err := m.writeErrors(ctx, w); err != nil {
		return err
	}
	for _, mr := range m.sum.Runs {
		m.sum.Pairs += mr.Records
		m.sum.Duplicates += mr.Duplicates
		m.sum.Superseded += mr.Superseded
	}
	return nil
}

// take merges one record of pair k (its line b): an answer beats error records, identical records
// are duplicates, two answers that differ conflict, and of two error records the later one stays.
func (m *merger) take(ctx context.Context, w recordWriter, k record.Pair, cur seenRecord, b []byte) error {
	runs := m.sum.Runs
	prev, dup := m.seen[k]
	switch {
	case !dup:
		return m.stand(w, k, cur, b)
	case prev.fp == cur.fp:
		runs[cur.run].Duplicates++
		return nil
	case !prev.failed && !cur.failed:
		first, firstSrc := m.readers[prev.run], m.names[prev.run][prev.src]
		curSrc := m.names[cur.run][cur.src]
		return fmt.Errorf("%w: item %q config %q: %s:%d and %s:%d differ%s (records of one pair must agree but for %s)",
			ErrConflict, k.Item, k.Config, first.Where(firstSrc), prev.line, m.readers[cur.run].Where(curSrc), cur.line,
			differingFields(ctx, first, firstSrc, int(prev.line), b), strings.Join(volatileNames(), ", "))
	case cur.failed && (!prev.failed || cur.at < prev.at):
		runs[cur.run].Superseded++ // an answer, or a later error, stands
		return nil
	default: // cur is an answer, or a later error: prev (an error, not written yet) is superseded
		runs[prev.run].Superseded++
		return m.stand(w, k, cur, b)
	}
}

// stand makes cur the record of its pair: an answer is written now, an error at the end (writeErrors),
// unless an answer comes.
func (m *merger) stand(w recordWriter, k record.Pair, cur seenRecord, b []byte) error {
	m.seen[k] = cur
	if cur.failed {
		return nil
	}
	m.sum.Runs[cur.run].Records++
	return w.writeLine(b)
}

// writeErrors writes the error records that stand (no answer of their pair came), reading their
// sources again in order: they are few, and holding every error line in memory is not needed.
func (m *merger) writeErrors(ctx context.Context, w recordWriter) error {
	want := map[[2]int32]map[int32]bool{} // (run, source) → lines
	for _, sr := range m.seen {
		if sr.failed {
			key := [2]int32{sr.run, sr.src}
			if want[key] == nil {
				want[key] = map[int32]bool{}
			}
			want[key][sr.line] = true
		}
	}
	for ri, rr := range m.readers {
		for si, src := range m.names[ri] {
			lines := want[[2]int32{int32(ri), int32(si)}]
			if len(lines) == 0 {
				continue
			}
			_, err := mergeSource(ctx, rr, src, func(line int, b []byte, _ *record.Full, _ [32]byte) error {
				if !lines[int32(line)] {
					return nil
				}
				m.sum.Runs[ri].Records++
				m.sum.Failed++
				return w.writeLine(b)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// recordTime is when a record was written (its "at"), in Unix nanoseconds; 0 when it has none.
func recordTime(f *record.Full) int64 {
	if t, err := time.Parse(time.RFC3339Nano, f.At); err == nil {
		return t.UnixNano()
	}
	return 0
}

// expected sets the pairs a complete merge should hold and how many it lacks, when the shard set is
// complete and the items file is known: the items (the first --limit of them when every session used
// a limit; the largest) × the grid's configs.
func (m *merger) expected(merged shard.Set) {
	if !merged.Complete() || m.items == nil {
		return
	}
	ids := m.order
	if l := sweptLimit(m.infos); l > 0 && l < len(ids) {
		ids = ids[:l]
	}
	configs := m.infos[0].Grid.Configs
	exp, miss := len(ids)*len(configs), 0
	for _, id := range ids {
		for _, c := range configs {
			if _, ok := m.seen[record.Pair{Item: id, Config: c}]; !ok {
				miss++
				if len(m.sum.MissingExamples) < 10 {
					m.sum.MissingExamples = append(m.sum.MissingExamples, id+" "+c)
				}
			}
		}
	}
	m.sum.PairsExpected, m.sum.PairsMissing = &exp, &miss
	m.sum.Complete = miss == 0
}

// sweptLimit is the --limit the inputs' sweep sessions used: 0 when one used none (every item), else
// the largest (the first that many items were swept). Merge sessions sweep nothing.
func sweptLimit(infos []*Info) int {
	limit := 0
	for _, in := range infos {
		for _, s := range in.Sessions {
			switch {
			case s.Kind == SessionMerge:
			case s.Limit == 0:
				return 0
			default:
				limit = max(limit, s.Limit)
			}
		}
	}
	return limit
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

// mergeSource reads one records file of a RUN and hands each record line on, validated and decoded,
// with the digest of its comparable fields. A torn last line of records.jsonl (a crash) is no record:
// it is dropped and its length returned; a chunk must be whole (eachLine's rule).
func mergeSource(ctx context.Context, rr *Reader, src string, fn func(line int, b []byte, f *record.Full, fp [32]byte) error) (int64, error) {
	rc, err := rr.OpenSource(ctx, src)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	where := rr.Where(src)
	_, torn, err := eachLine(rc, where, src == recordsName, func(line int, t []byte) error {
		f, err := record.DecodeFull(t, record.Source{Path: where, Line: line})
		if err != nil {
			return fmt.Errorf("not a sweep record: %w", err)
		}
		if f.Status != record.StatusOK && f.Status != record.StatusError {
			return fmt.Errorf("%s:%d: not a sweep record (status %q)", where, line, f.Status)
		}
		fp, err := recordDigest(t)
		if err != nil {
			return fmt.Errorf("%s:%d: %v", where, line, err)
		}
		return fn(line, append(t, '\n'), f, fp)
	})
	return torn, err
}

// recordDigest is the sha256 of a record line's fields but the volatile ones, each key with its
// canonical value (record.Canonical: keys sorted, numbers by value) in key order.
func recordDigest(b []byte) ([32]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return [32]byte{}, err
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
		c, err := record.Canonical(m[k])
		if err != nil {
			return [32]byte{}, err
		}
		fmt.Fprintf(h, "%q:%d:", k, len(c))
		h.Write(c)
	}
	var fp [32]byte
	copy(fp[:], h.Sum(nil))
	return fp, nil
}

// differingFields names the comparable fields in which the record at src:line and b differ (read
// again: a conflict is rare, and keeping every record in memory is not).
func differingFields(ctx context.Context, rr *Reader, src string, line int, b []byte) string {
	rc, err := rr.OpenSource(ctx, src)
	if err != nil {
		return ""
	}
	defer rc.Close()
	var first []byte
	_, _, err = eachLine(rc, rr.Where(src), true, func(l int, t []byte) error {
		if l < line {
			return nil
		}
		first = bytes.Clone(t)
		return errStopLines
	})
	if err != nil || first == nil {
		return ""
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
		cx, _ := record.Canonical(x[k])
		cy, _ := record.Canonical(y[k])
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

// fileWriter writes lines to a temporary file; close flushes, fsyncs and closes (idempotent).
type fileWriter struct {
	f      *os.File
	bw     *bufio.Writer
	closed bool
	err    error
}

func (w *fileWriter) writeLine(b []byte) error {
	if w.closed {
		return errClosed
	}
	_, err := w.bw.Write(b)
	return err
}

func (w *fileWriter) chunks() []Chunk { return nil } // records.jsonl is no chunk

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
