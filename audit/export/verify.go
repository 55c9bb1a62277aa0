package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/internal/num"
)

// ErrTampered marks an export whose files are not what its manifest records.
var ErrTampered = errors.New("the export differs from what its manifest records")

// fileNames are the files an export may hold besides its manifest.
var fileNames = map[string]bool{RecordsJSONL: true, RecordsParquet: true, TrajectoriesJSONL: true, TrajParquet: true, AuditJSON: true, Datasheet: true}

// check refuses recorded options whose size sets the audit's work out of their ranges, naming the
// field: an audit of the export adopts them, so a hostile "resamples": 1000000000 would otherwise
// grow memory by the gigabyte. (Budgets, ceilings, the reference and the size go through their
// flags' own checks when adopted.)
func (a AuditOptions) check() error {
	if err := num.In(0, audit.MaxResamples).Int("audit_options.resamples", int64(a.Resamples)); err != nil {
		return err
	}
	if err := num.In(0, cascade.MaxFolds).Int("audit_options.folds", int64(a.Folds)); err != nil {
		return err
	}
	if a.Cluster != "" && !slices.Contains(audit.Clusters, a.Cluster) {
		return fmt.Errorf("audit_options.cluster %q (want one of %s)", a.Cluster, strings.Join(audit.Clusters, ", "))
	}
	return num.In(0, 1).Float("audit_options.epsilon", a.Epsilon)
}

// Verify checks the export in dir against its manifest m before anything reads it: every file the
// manifest lists is a file of an export, listed once, present as a regular file of the recorded size
// and sha256, and a JSON Lines file holds the recorded rows; records.jsonl is listed and the sources'
// row ranges cover it exactly; and no *.jsonl the manifest does not list lies beside them (the audit
// of a directory reads its records*.jsonl). The first difference is an error naming the file
// (ErrTampered): a flipped verdict or a deleted row is refused, not audited as if true.
func (m *Manifest) Verify(dir string) error {
	man := filepath.Join(dir, ManifestName)
	listed := map[string]File{}
	for _, f := range m.Files {
		if !fileNames[f.Name] {
			return fmt.Errorf("%s: lists %q, which is no file of an export: %w", man, f.Name, ErrTampered)
		}
		if _, dup := listed[f.Name]; dup {
			return fmt.Errorf("%s: lists %s twice: %w", man, f.Name, ErrTampered)
		}
		listed[f.Name] = f
		if err := verifyFile(filepath.Join(dir, f.Name), f); err != nil {
			return err
		}
	}
	rec, ok := listed[RecordsJSONL]
	if !ok {
		return fmt.Errorf("%s: lists no %s: %w", man, RecordsJSONL, ErrTampered)
	}
	next := 0
	for _, s := range m.Sources {
		if s.Rows[0] != next || s.Rows[1] < s.Rows[0] {
			return fmt.Errorf("%s: source %s: rows %v do not follow row %d: %w", man, s.Path, s.Rows, next, ErrTampered)
		}
		next = s.Rows[1]
	}
	if next != rec.Rows {
		return fmt.Errorf("%s: its sources cover %d rows, %s holds %d: %w", man, next, RecordsJSONL, rec.Rows, ErrTampered)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if _, ok := listed[e.Name()]; !ok && strings.HasSuffix(e.Name(), ".jsonl") {
			return fmt.Errorf("%s: not in %s (an export holds only the files its manifest lists; an audit of the directory would read it): %w",
				filepath.Join(dir, e.Name()), ManifestName, ErrTampered)
		}
	}
	return nil
}

// verifyFile checks one file against its manifest entry: a regular file (not a link to elsewhere) of
// the recorded size and sha256, and for JSON Lines the recorded number of rows.
func verifyFile(path string, f File) error {
	st, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("%s: listed in %s: %w (%w)", path, ManifestName, err, ErrTampered)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s): %w", path, st.Mode().Type(), ErrTampered)
	}
	if st.Size() != f.Bytes {
		return fmt.Errorf("%s: %d bytes, %s records %d (changed since the export): %w", path, st.Size(), ManifestName, f.Bytes, ErrTampered)
	}
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	h := sha256.New()
	var lines lineCounter
	var w io.Writer = h
	if strings.HasSuffix(f.Name, ".jsonl") {
		w = io.MultiWriter(h, &lines)
	}
	if _, err := io.Copy(w, fh); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
		return fmt.Errorf("%s: sha256 %s, %s records %s (changed since the export): %w", path, sum, ManifestName, f.SHA256, ErrTampered)
	}
	if strings.HasSuffix(f.Name, ".jsonl") && int(lines) != f.Rows {
		return fmt.Errorf("%s: %d rows, %s records %d: %w", path, lines, ManifestName, f.Rows, ErrTampered)
	}
	return nil
}

// lineCounter counts newlines: an export's JSON Lines end every row with one.
type lineCounter int

func (c *lineCounter) Write(p []byte) (int, error) {
	*c += lineCounter(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}
