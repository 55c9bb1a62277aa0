package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/internal/atomicfile"
	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/record"
)

// The export's files.
const (
	RecordsJSONL      = "records.jsonl"
	RecordsParquet    = "records.parquet"
	TrajectoriesJSONL = "trajectories.jsonl"
	TrajParquet       = "trajectories.parquet"
	AuditJSON         = "audit.json"
	Datasheet         = "README.md"
)

// Input is what an export holds.
type Input struct {
	Rows    []record.Full             // every record of the inputs, in input order
	Sources []Source                  // Read's sources (their row ranges index Rows)
	Sets    []audit.ModelTrajectories // every model's trajectories as its audit counts them
	Audit   []byte                    // the audit as `framesweep audit --json` prints it
	Options AuditOptions
	Notes   []string // what the export changed on the way (local names cut: Inputs.Notes)
}

// Write writes the export into dir, which must not exist or be empty. Nothing is ever overwritten:
// each file is created whole under a name that must be free (atomicfile.WriteNew), records.jsonl
// first, so of two exports racing into one directory the one that creates it first goes on and the
// other fails at once, having written nothing. export.json is written last, so a directory without it
// is not an export.
func Write(dir string, in Input) (*Manifest, error) {
	if err := emptyDir(dir); err != nil {
		return nil, err
	}
	m := &Manifest{Format: Format, Engine: version.Engine, Created: time.Now().UTC().Format(time.RFC3339), Audit: in.Options,
		Sources: in.Sources, Files: []File{}, Parquet: parquetAvailable, Notes: in.Notes}
	if !parquetAvailable {
		m.Note = "built with -tags noparquet: JSON Lines only (records.jsonl, trajectories.jsonl)"
	}
	for _, s := range in.Sets {
		m.Models = append(m.Models, modelGrid(s))
	}
	put := func(name string, b []byte, rows int) error {
		if err := writeFile(filepath.Join(dir, name), b); err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m.Files = append(m.Files, File{Name: name, Rows: rows, Bytes: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
		return nil
	}
	recLines, err := jsonLines(len(in.Rows), func(i int) any { return &in.Rows[i] })
	if err != nil {
		return nil, err
	}
	trows := trajectoryRows(in.Sets)
	trajLines, err := jsonLines(len(trows), func(i int) any { return &trows[i] })
	if err != nil {
		return nil, err
	}
	if err := put(RecordsJSONL, recLines, len(in.Rows)); err != nil {
		return nil, err
	}
	if err := put(TrajectoriesJSONL, trajLines, len(trows)); err != nil {
		return nil, err
	}
	if parquetAvailable {
		rrows := make([]RecordRow, len(in.Rows))
		for si, s := range in.Sources {
			for i := s.Rows[0]; i < s.Rows[1]; i++ {
				rrows[i] = recordRow(&in.Rows[i], si)
			}
		}
		for _, f := range []struct {
			name string
			enc  func() ([]byte, error)
			n    int
		}{{RecordsParquet, func() ([]byte, error) { return parquetBytes(rrows) }, len(rrows)}, {TrajParquet, func() ([]byte, error) { return parquetBytes(trows) }, len(trows)}} {
			b, err := f.enc()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(dir, f.name), err)
			}
			if err := put(f.name, b, f.n); err != nil {
				return nil, err
			}
		}
	}
	if err := put(AuditJSON, in.Audit, 0); err != nil {
		return nil, err
	}
	if err := put(Datasheet, datasheet(m, in), 0); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, ManifestName), append(b, '\n')); err != nil {
		return nil, err
	}
	return m, nil
}

// writeFile creates one file of the release whole, readable by all (it is meant to be published); a
// file of that name already there (another export writing into the directory) is an error.
func writeFile(path string, b []byte) error {
	err := atomicfile.WriteNew(path, b, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: another export claimed this directory first (%s exists); an export never overwrites", filepath.Dir(path), filepath.Base(path))
	}
	return err
}

// emptyDir makes dir (its parents as needed), or accepts it when it exists and is empty.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case err == nil && len(ents) > 0:
		return fmt.Errorf("%s: the export directory is not empty (an export never overwrites files)", dir)
	case err == nil:
		return nil
	case os.IsNotExist(err):
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return err
		}
		// Created by whichever export comes first, then accepted as empty by the other: the claim
		// is records.jsonl, created without replacing (writeFile).
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	default:
		return err
	}
}

// jsonLines encodes n values as JSON Lines (no HTML escaping, as the sweep writes records).
func jsonLines(n int, at func(int) any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := 0; i < n; i++ {
		if err := enc.Encode(at(i)); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

func modelGrid(s audit.ModelTrajectories) ModelGrid {
	g := ModelGrid{Name: s.Model, Task: s.Task, MCConfigs: []string{}, OEConfigs: []string{}, Transitions: []Transition{}}
	for _, c := range s.Set.MC {
		g.MCConfigs = append(g.MCConfigs, c.ID)
	}
	for _, c := range s.Set.OE {
		g.OEConfigs = append(g.OEConfigs, c.ID)
	}
	for i, t := range s.Set.Transitions {
		g.Transitions = append(g.Transitions, Transition{Index: i, From: t.From, To: t.To, Ordered: t.Ordered})
	}
	return g
}
