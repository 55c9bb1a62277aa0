package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/framesweep/framesweep/internal/bucket"
	"github.com/framesweep/framesweep/record"
)

// WriterOptions open a sweep session on a RUN.
type WriterOptions struct {
	Loc    string // the RUN: a directory (created), or a blob URL
	Info   *Info  // what this sweep is: run.json of a new RUN, the RUN's must match on resume
	Resume bool   // continue the sweep the RUN holds (without it an existing RUN is refused)
	// Session is this invocation (command, start, limit); OpenWriter appends it to run.json, setting
	// Resumed, Warnings and Started (when empty).
	Session Session
	// ChunkRecords and ChunkInterval: on an object store, a chunk of records is published every
	// ChunkRecords records or once its oldest record has waited ChunkInterval, and at the end
	// (0: DefaultChunkRecords, DefaultChunkInterval). A local RUN ignores them.
	ChunkRecords  int
	ChunkInterval time.Duration
}

// Writer is one sweep session's hold on a RUN: the lock, run.json with this session in it, and the
// records writer. Write is safe for concurrent use; Close ends the session.
type Writer struct {
	rs       runStore
	unlock   func()
	rf       recordWriter
	info     *Info
	created  bool
	recorded pairSet
	man      *manifest // the chunks the earlier sessions published
	cut      int64
	warnings []string
	closed   bool
}

// OpenWriter takes the RUN at o.Loc for a session: it locks it, reads or creates run.json (an
// existing RUN needs o.Resume and must be the sweep o.Info describes: ErrMismatch names what
// differs; other library versions are only warnings), publishes run.json with the new session, scans
// every record already there (a torn last line of records.jsonl is cut) and opens the session's
// records writer.
func OpenWriter(ctx context.Context, o WriterOptions) (_ *Writer, err error) {
	rs, err := openRunStore(ctx, o.Loc, true)
	if err != nil {
		return nil, err
	}
	w := &Writer{rs: rs}
	defer func() {
		if err != nil {
			w.release()
		}
	}()
	if w.unlock, err = rs.lock(ctx); err != nil {
		return nil, err
	}
	if w.info, w.warnings, err = openInfo(ctx, rs, o); err != nil {
		return nil, err
	}
	w.created = len(w.info.Sessions) == 0
	sess := o.Session
	if sess.Started == "" {
		sess.Started = now()
	}
	sess.Resumed = o.Resume && !w.created
	sess.Warnings = w.warnings
	w.info.Sessions = append(w.info.Sessions, sess)
	if err := writeInfo(ctx, rs, w.info, w.created); err != nil {
		return nil, err
	}
	w.man = newManifest(w.info)
	w.rf, w.recorded, w.cut, err = rs.openRecords(ctx, len(w.info.Sessions)-1, chunking{o.ChunkRecords, o.ChunkInterval}, w.man)
	if err != nil {
		return nil, err
	}
	if srcs, err := rs.sources(ctx); err == nil {
		if note := w.man.unverifiedNote(rs, srcs); note != "" {
			w.warnings = append(w.warnings, note)
			w.info.Sessions[len(w.info.Sessions)-1].Warnings = w.warnings
		}
	}
	return w, nil
}

// CheckNew refuses, as OpenWriter would and before anything costly (loading a model) is done, a
// location that already holds a sweep or records when the session is not a resume: the same error,
// read only (nothing is created or locked). A resume is checked by OpenWriter itself.
func CheckNew(ctx context.Context, loc string) error {
	if !bucket.IsURL(loc) {
		if _, err := os.Stat(loc); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	rs, err := openRunStore(ctx, loc, false)
	if err != nil {
		return err
	}
	defer rs.close()
	_, _, err = openInfo(ctx, rs, WriterOptions{Loc: loc})
	return err
}

// openInfo reads or makes run.json: a new RUN gets o.Info; an existing one must be the same sweep
// and needs Resume.
func openInfo(ctx context.Context, rs runStore, o WriterOptions) (*Info, []string, error) {
	b, err := rs.readFile(ctx, infoFile)
	var prev *Info
	if err == nil {
		prev, err = parseInfo(b, rs.where(infoFile))
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		srcs, serr := rs.sources(ctx)
		if serr != nil {
			return nil, nil, serr
		}
		for _, src := range srcs {
			if _, local := rs.(*dirRun); local && src == recordsName {
				if st, serr := os.Stat(rs.where(src)); serr == nil && st.Size() == 0 {
					continue // an empty records.jsonl holds nothing
				}
			}
			return nil, nil, fmt.Errorf("%s: records without run.json: not a sweep directory; give another --out", o.Loc)
		}
		return o.Info, nil, nil
	case err != nil:
		return nil, nil, err
	case !o.Resume:
		return nil, nil, fmt.Errorf("%s already holds a sweep (run.json): pass --resume to continue it, or give another --out", o.Loc)
	}
	if err := SameSweep(prev, o.Info); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", o.Loc, err)
	}
	warnings := LibraryWarnings(prev.Libraries, o.Info.Libraries)
	if w := DecodingWarning(prev, o.Info); w != "" {
		warnings = append(warnings, w)
	}
	if prev.VideoRoot != "" && prev.VideoRoot != o.Info.VideoRoot {
		// The videos are elsewhere now (another machine, a moved tree): records keep naming them
		// relative to the root, and run.json says where the root is now.
		warnings = append(warnings, fmt.Sprintf("video root %s in the previous session, %s now", prev.VideoRoot, o.Info.VideoRoot))
		prev.VideoRoot = o.Info.VideoRoot
	}
	return prev, warnings, nil
}

// Info is run.json as this session wrote it (the RUN's, with this session last).
func (w *Writer) Info() *Info { return w.info }

// Warnings name the libraries whose versions differ from the RUN's first session, sampling settings
// a run.json of an older framesweep does not record (DecodingWarning), and chunks of one that carry no
// digest (read unverified).
func (w *Writer) Warnings() []string { return w.warnings }

// State is what the RUN held of pair p when the session began (Unrecorded, Answered, Failed,
// FailedTransient).
func (w *Writer) State(p record.Pair) PairState { return w.recorded[p].state }

// TornBytes is the interrupted last line cut from records.jsonl (0: none).
func (w *Writer) TornBytes() int64 { return w.cut }

// Records names where the records go (records.jsonl, or the chunks' prefix), for summaries.
func (w *Writer) Records() string { return w.rs.records() }

// Write appends one record: one line of one write (local) or of the next chunk (object store). The
// line is held to the record validator first (record.CheckLine, Full.Validate): a record any reader would
// refuse is not written, and the error wraps record.ErrInvalid, ErrTooLong or ErrSyntax.
func (w *Writer) Write(r *record.Full) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := record.CheckLine(b); err != nil {
		return &record.Error{Path: w.rs.records(), Op: "write", Err: fmt.Errorf("item %q config %q: %w", r.ItemID, r.Config, err)}
	}
	if err := r.Validate(); err != nil {
		return err
	}
	return w.rf.writeLine(append(b, '\n'))
}

// ScratchDir is where inputs in flight may be kept during the session (RUN/scratch, or a local
// directory named after an object-store RUN); the caller creates and removes it.
func (w *Writer) ScratchDir() (string, error) { return w.rs.scratchDir() }

// Scan hands every record the RUN held when the session began to fn, in reading order (a resume
// rebuilding its state), decoded and validated. The lines were validated when the writer opened; the
// torn tail it cut is gone (a last line of records.jsonl without its newline would be a write in
// flight, no record; in a chunk it is an error, as every line that does not decode).
func (w *Writer) Scan(ctx context.Context, fn func(r *record.Full)) error {
	names, err := w.rs.sources(ctx)
	if err != nil {
		return err
	}
	for _, name := range names {
		want, err := w.man.expect(w.rs, name)
		if err != nil {
			return err
		}
		rc, err := openVerified(ctx, w.rs, name, want)
		if err != nil {
			return err
		}
		err = scanFull(rc, w.rs.where(name), name == recordsName, fn)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// SessionEnd is how a session ended, for run.json.
type SessionEnd struct {
	Pairs, Failed int
	Stopped       string // why it ended early ("signal"), "" when it ran out of work
}

// Close ends the session: the records are closed (the last chunk published), run.json records the
// end, and the lock is released. The first error is returned; a second Close does nothing.
func (w *Writer) Close(ctx context.Context, end SessionEnd) error {
	if w.closed {
		return nil
	}
	err := w.rf.close()
	last := &w.info.Sessions[len(w.info.Sessions)-1]
	last.Ended, last.Pairs, last.Failed, last.Stopped = now(), end.Pairs, end.Failed, end.Stopped
	last.Chunks = w.rf.chunks()
	if werr := writeInfo(ctx, w.rs, w.info, false); err == nil {
		err = werr
	}
	w.release()
	return err
}

// release unlocks and closes the store; idempotent.
func (w *Writer) release() {
	if w.closed {
		return
	}
	w.closed = true
	if w.rf != nil {
		w.rf.close()
	}
	if w.unlock != nil {
		w.unlock()
	}
	w.rs.close()
}
