package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/framesweep/framesweep/internal/bucket"
	"github.com/framesweep/framesweep/record"
)

// Reader reads a RUN written by a sweep or a merge: run.json and every record, from a local
// directory or an object store (records.jsonl, then the chunks under records/, each checked against
// its digest: verify.go). It writes nothing.
type Reader struct {
	loc string
	rs  runStore
	man *manifest // run.json's chunks, read once
}

// Open opens the RUN at loc (a directory or a blob URL) for reading.
func Open(ctx context.Context, loc string) (*Reader, error) {
	rs, err := openRunStore(ctx, loc, false)
	if err != nil {
		return nil, err
	}
	return &Reader{loc: loc, rs: rs}, nil
}

// Location is the RUN as given to Open.
func (r *Reader) Location() string { return r.loc }

// Info reads run.json (an error wrapping fs.ErrNotExist when the RUN has none).
func (r *Reader) Info(ctx context.Context) (*Info, error) {
	b, err := r.rs.readFile(ctx, infoFile)
	if err != nil {
		return nil, err
	}
	return parseInfo(b, r.rs.where(infoFile))
}

// manifest is the chunks run.json records (none when the RUN has no run.json).
func (r *Reader) manifest(ctx context.Context) (*manifest, error) {
	if r.man != nil {
		return r.man, nil
	}
	ri, err := r.Info(ctx)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	r.man = newManifest(ri)
	return r.man, nil
}

// Sources lists the records files, in reading order. A chunk run.json records that the store does not
// list is an error wrapping ErrChunkDigest.
func (r *Reader) Sources(ctx context.Context) ([]string, error) {
	man, err := r.manifest(ctx)
	if err != nil {
		return nil, err
	}
	return listSources(ctx, r.rs, man)
}

// OpenSource reads one records file of Sources. A chunk with a digest is read whole and checked before
// a byte of it is returned (a mismatch is read once more, then a *ChunkError).
func (r *Reader) OpenSource(ctx context.Context, name string) (io.ReadCloser, error) {
	man, err := r.manifest(ctx)
	if err != nil {
		return nil, err
	}
	want, err := man.expect(r.rs, name)
	if err != nil {
		return nil, err
	}
	return openVerified(ctx, r.rs, name, want)
}

// Notes name what a reader of the RUN cannot check: chunks written before chunk digests.
func (r *Reader) Notes(ctx context.Context) ([]string, error) {
	man, err := r.manifest(ctx)
	if err != nil {
		return nil, err
	}
	srcs, err := r.rs.sources(ctx)
	if err != nil {
		return nil, err
	}
	if n := man.unverifiedNote(r.rs, srcs); n != "" {
		return []string{n}, nil
	}
	return nil, nil
}

// Notes are the notes of the RUNs among paths a RUN reader reads (ReadAll's rule): chunks read
// unverified. Paths it cannot open are left to the reading to report.
func Notes(ctx context.Context, paths []string) []string {
	var out []string
	for _, p := range paths {
		if !isStoreRun(p) {
			continue
		}
		rr, err := Open(ctx, p)
		if err != nil {
			continue
		}
		n, _ := rr.Notes(ctx)
		rr.Close()
		out = append(out, n...)
	}
	return out
}

// Where names a file of the RUN for messages.
func (r *Reader) Where(name string) string { return r.rs.where(name) }

// Close releases the bucket; idempotent.
func (r *Reader) Close() error { return r.rs.close() }

// Records reads and validates every record of the RUN (record.Read: file and line in every error),
// records.jsonl first, then the chunks; error records an answer of their pair supersedes (a pair a
// resumed sweep asked again) are dropped (record.Supersede). A RUN without records is an error.
func (r *Reader) Records(ctx context.Context) ([]record.Record, error) {
	srcs, err := r.Sources(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.loc, err)
	}
	var out []record.Record
	for _, s := range srcs {
		rc, err := r.OpenSource(ctx, s)
		if err != nil {
			return nil, err
		}
		recs, err := record.Read(rc, r.Where(s))
		rc.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the RUN holds no records", r.loc)
	}
	out, _ = record.Supersede(out)
	return out, nil
}

// ReadAll reads the inputs of the audit and the cascade: records files and run directories as
// record.ReadPaths reads them, and RUNs only a RUN reader knows: a RUN on an object store (a blob
// URL), or a directory holding chunk objects under records/ (a RUN copied from one). The order of
// the paths is kept, except that the error records come after every answer (each kind in its order).
func ReadAll(ctx context.Context, paths []string) ([]record.Record, error) {
	var all []record.Record
	var plain []string
	flush := func() error {
		if len(plain) == 0 {
			return nil
		}
		recs, err := record.ReadPaths(plain)
		all, plain = appendRecords(all, recs), nil
		return err
	}
	for _, p := range paths {
		if !isStoreRun(p) {
			plain = append(plain, p)
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		rr, err := Open(ctx, p)
		if err != nil {
			return nil, err
		}
		recs, err := rr.Records(ctx)
		rr.Close()
		if err != nil {
			return nil, err
		}
		all = appendRecords(all, recs)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	all, _ = record.Supersede(all) // across the inputs too: a RUN given beside its retried copy
	return errorsLast(all), nil
}

// errorsLast moves the error records after the answers, each in its order (in place; only the error
// records are copied aside): the audit leaves them out of every metric, and takes the answers as the
// prefix they then are instead of copying them (a million records are 280 MB).
func errorsLast(recs []record.Record) []record.Record {
	var errs []record.Record
	k := 0
	for i := range recs {
		if recs[i].Failed() {
			errs = append(errs, recs[i])
			continue
		}
		if k != i {
			recs[k] = recs[i]
		}
		k++
	}
	copy(recs[k:], errs)
	return recs
}

// appendRecords is append(all, recs...) that takes recs itself when all is empty: the records of
// one input are not copied (a million of them are 280 MB).
func appendRecords(all, recs []record.Record) []record.Record {
	if len(all) == 0 {
		return recs
	}
	return append(all, recs...)
}

// isStoreRun reports whether p needs a RUN reader: a blob URL, or a directory with chunk objects.
func isStoreRun(p string) bool {
	if bucket.IsURL(p) {
		return true
	}
	st, err := os.Stat(filepath.Join(p, chunksDir))
	return err == nil && st.IsDir()
}

// ErrNoRecord marks a pair the RUN holds no record of (Find).
var ErrNoRecord = errors.New("no record of the pair")

// Find reads the RUN's record of one (item, config) pair, provenance and all: its answer, or, when the
// pair only failed, its last error record (record.Supersede's rule). Every line is read for its
// item_id and config; the pair's lines are held to the record validator.
func (r *Reader) Find(ctx context.Context, item, config string) (*record.Full, error) {
	srcs, err := r.Sources(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.loc, err)
	}
	var found *record.Full
	for _, s := range srcs {
		rc, err := r.OpenSource(ctx, s)
		if err != nil {
			return nil, err
		}
		found, err = findIn(rc, r.Where(s), s == recordsName, item, config, found)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%s: %w: item %q, config %q", r.loc, ErrNoRecord, item, config)
	}
	return found, nil
}

// findIn scans one records source for the pair, keeping an answer over an error record (prev: what
// earlier sources gave). tornOK: the source is records.jsonl, whose torn last line is no record
// (eachLine's rule, as resume and merge read it).
func findIn(rd io.Reader, where string, tornOK bool, item, config string, prev *record.Full) (*record.Full, error) {
	_, _, err := eachLine(rd, where, tornOK, func(line int, t []byte) error {
		var key struct {
			ItemID string `json:"item_id"`
			Config string `json:"config"`
		}
		if derr := json.Unmarshal(t, &key); derr != nil {
			return record.Errorf(where, line, "parse", record.ErrSyntax, "%v", derr)
		}
		if key.ItemID != item || key.Config != config {
			return nil
		}
		f := &record.Full{}
		if derr := json.Unmarshal(t, f); derr != nil {
			return record.Errorf(where, line, "parse", record.ErrSyntax, "%v", derr)
		}
		f.Source = record.Source{Path: where, Line: line}
		if verr := f.Validate(); verr != nil {
			return verr
		}
		if prev == nil || prev.Failed() || !f.Failed() {
			prev = f
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return prev, nil
}
