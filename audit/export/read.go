package export

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	gojson "github.com/goccy/go-json"

	"github.com/framesweep/framesweep/internal/bucket"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// Source is one input of an export: where its rows came from, which rows of records.jsonl they are
// ([Rows[0], Rows[1]), 0-based), and what its RUN says about the run (nil for a plain records file).
type Source struct {
	Path string    `json:"path"`
	Rows [2]int    `json:"rows"`
	Run  *RunProof `json:"run,omitempty"`
}

// RunProof is what a RUN's run.json says about how its records were made.
type RunProof struct {
	Engine      string            `json:"engine"`
	Runtime     string            `json:"runtime"`
	ModelSHA256 map[string]string `json:"model_sha256,omitempty"`
	GridSHA256  string            `json:"grid_sha256"`
	ItemsSHA256 string            `json:"items_sha256"`
	Template    string            `json:"template,omitempty"`
	Libraries   map[string]string `json:"libraries"`
	Sessions    int               `json:"sessions"`
}

// Read reads the audit's inputs as full records (canonical fields and provenance), in the order and
// with the rules of runs.ReadAll: records files, run directories, RUNs on an object store.
func Read(ctx context.Context, paths []string) ([]record.Full, []Source, error) {
	var rows []record.Full
	var srcs []Source
	for _, p := range paths {
		start := len(rows)
		got, proof, err := readInput(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, got...)
		srcs = append(srcs, Source{Path: p, Rows: [2]int{start, len(rows)}, Run: proof})
	}
	if len(rows) == 0 {
		return nil, nil, record.Errorf("", 0, "read", record.ErrEmpty, "the inputs hold no records")
	}
	return rows, srcs, nil
}

// readInput reads one positional: a RUN a RUN reader must read (a blob URL, a directory of chunk
// objects), else the files record.ExpandPaths finds; a RUN's run.json, when it has one.
func readInput(ctx context.Context, p string) ([]record.Full, *RunProof, error) {
	st, statErr := os.Stat(p)
	isDir := statErr == nil && st.IsDir()
	var proof *RunProof
	if bucket.IsURL(p) || isDir {
		rr, err := runs.Open(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		defer rr.Close()
		if info, err := rr.Info(ctx); err == nil {
			proof = &RunProof{Engine: info.Engine, Runtime: info.Runtime.Spec, ModelSHA256: info.Runtime.ModelSHA256, GridSHA256: info.Grid.SHA256,
				ItemsSHA256: info.Items.SHA256, Template: info.Template, Libraries: info.Libraries, Sessions: len(info.Sessions)}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if bucket.IsURL(p) || hasChunks(p) {
			srcs, err := rr.Sources(ctx)
			if err != nil {
				return nil, nil, err
			}
			var out []record.Full
			for _, s := range srcs {
				rc, err := rr.OpenSource(ctx, s)
				if err != nil {
					return nil, nil, err
				}
				got, err := readFull(rc, rr.Where(s))
				rc.Close()
				if err != nil {
					return nil, nil, err
				}
				out = append(out, got...)
			}
			return out, proof, nil
		}
	}
	files, err := record.ExpandPaths([]string{p})
	if err != nil {
		return nil, nil, err
	}
	var out []record.Full
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, nil, &record.Error{Path: f, Op: "open", Err: err}
		}
		got, err := readFull(fh, f)
		fh.Close()
		if err != nil {
			return nil, nil, err
		}
		out = append(out, got...)
	}
	return out, proof, nil
}

// hasChunks reports whether dir holds a RUN's chunk objects (records/), as a RUN copied from an object
// store does.
func hasChunks(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "records"))
	return err == nil && st.IsDir()
}

// readFull reads JSON Lines of full records with record.Read's rules: a UTF-8 byte order mark and
// blank lines skipped, lines of at most record.MaxLineBytes, every record validated, file:line in
// every error.
func readFull(r io.Reader, path string) ([]record.Full, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var out []record.Full
	for line := 1; ; line++ {
		b, err := record.ReadLine(br, record.MaxLineBytes)
		if errors.Is(err, record.ErrTooLong) {
			return nil, record.Errorf(path, line, "read", record.ErrTooLong, "over %d bytes", record.MaxLineBytes)
		}
		if err != nil && err != io.EOF {
			return nil, &record.Error{Path: path, Line: line, Op: "read", Err: err}
		}
		if line == 1 {
			b = record.TrimBOM(b)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			var f record.Full
			if derr := gojson.Unmarshal(t, &f); derr != nil {
				return nil, record.Errorf(path, line, "parse", record.ErrSyntax, "%v", derr)
			}
			f.Source = record.Source{Path: path, Line: line}
			f.Upgrade()
			if verr := f.Validate(); verr != nil {
				return nil, verr
			}
			out = append(out, f)
		}
		if err == io.EOF {
			return out, nil
		}
	}
}
