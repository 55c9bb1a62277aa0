package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/cascade"
)

// Format names the export layout in export.json.
const Format = "framesweep.export/1"

// ManifestName is the export's manifest; a directory holding one is an export.
const ManifestName = "export.json"

// Manifest is export.json: what the export holds and how the audit was run, so that `framesweep
// audit DIR` gives the same audit.
type Manifest struct {
	Format  string       `json:"format"`
	Engine  string       `json:"engine"` // framesweep's version
	Created string       `json:"created"`
	Audit   AuditOptions `json:"audit_options"`
	Models  []ModelGrid  `json:"models"`
	Sources []Source     `json:"sources"`
	Files   []File       `json:"files"`
	// Parquet says whether the .parquet files were written (a -tags noparquet build writes JSON
	// Lines only).
	Parquet bool   `json:"parquet"`
	Note    string `json:"note,omitempty"`
	// Notes say what the export changed on the way: the local names it cut (without --keep-paths).
	Notes []string `json:"notes,omitempty"`
}

// AuditOptions are the audit's options as the export records them.
type AuditOptions struct {
	Seed          uint64         `json:"seed"`
	Resamples     int            `json:"resamples"`
	Epsilon       float64        `json:"epsilon"`
	DefaultPolicy string         `json:"default_policy"`
	Ceilings      map[string]int `json:"ceilings,omitempty"`
	Budgets       []int          `json:"budgets,omitempty"`
	Policy        string         `json:"policy,omitempty"`
	Width         int            `json:"width,omitempty"`
	Height        int            `json:"height,omitempty"`
	Reference     int            `json:"reference,omitempty"`
	Folds         int            `json:"folds,omitempty"`
	// Cluster is the bootstrap's resampling unit asked for ("" before it existed: auto).
	Cluster string `json:"cluster,omitempty"`
	// AllowDrop: tasks with no grid were let go (--allow-drop).
	AllowDrop bool `json:"allow_drop,omitempty"`
}

// Options turns the recorded options back into the audit's.
func (a AuditOptions) Options() audit.ModelsOptions {
	o := audit.DefaultOptions()
	o.Seed, o.Resamples, o.Epsilon, o.DefaultPolicy, o.Cluster = a.Seed, a.Resamples, a.Epsilon, a.DefaultPolicy, a.Cluster
	o.Cascade = cascade.Options{Budgets: a.Budgets, Policy: a.Policy, Width: a.Width, Height: a.Height, Reference: a.Reference, Folds: a.Folds}
	return audit.ModelsOptions{Options: o, Ceilings: a.Ceilings, AllowDrop: a.AllowDrop}
}

// RecordOptions is the inverse of AuditOptions.Options.
func RecordOptions(o audit.ModelsOptions) AuditOptions {
	c := o.Cascade
	cluster := o.Cluster
	if cluster == audit.ClusterAuto {
		cluster = "" // the default: exports written before --cluster read the same
	}
	return AuditOptions{Seed: o.Seed, Resamples: o.Resamples, Epsilon: o.Epsilon, DefaultPolicy: o.DefaultPolicy, Ceilings: o.Ceilings,
		Budgets: c.Budgets, Policy: c.Policy, Width: c.Width, Height: c.Height, Reference: c.Reference, Folds: c.Folds,
		Cluster: cluster, AllowDrop: o.AllowDrop}
}

// ModelGrid is one model's grid in the export: the configs its trajectories run over and the
// transitions its rows' rescued/harmed lists index.
type ModelGrid struct {
	Name string `json:"name"`
	// Task is the task whose grid this is, when the records are of several tasks (each is audited
	// on its own grid); "" otherwise.
	Task        string       `json:"task,omitempty"`
	MCConfigs   []string     `json:"mc_configs"` // trajectory characters, in this order
	OEConfigs   []string     `json:"oe_configs"` // scores, in this order
	Transitions []Transition `json:"transitions"`
}

// Transition is one consecutive pair of a model's multiple-choice configs.
type Transition struct {
	Index   int    `json:"index"`
	From    string `json:"from"`
	To      string `json:"to"`
	Ordered bool   `json:"ordered"` // From is strictly cheaper than To (else an equal-cost neighbour)
}

// File is one file of the export.
type File struct {
	Name   string `json:"name"`
	Rows   int    `json:"rows,omitempty"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// LoadManifest reads DIR/export.json and verifies the export against it (Verify; the recorded options
// within their ranges); ok is false (and err nil) when DIR holds none.
func LoadManifest(dir string) (m *Manifest, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
		return nil, false, nil
	}
	if err != nil {
		// A file positional (not a directory) has no manifest beside it either.
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return nil, false, nil
		}
		return nil, false, err
	}
	m = &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, false, fmt.Errorf("%s: not an export manifest: %v", filepath.Join(dir, ManifestName), err)
	}
	if m.Format != Format {
		return nil, false, fmt.Errorf("%s: format %q (this framesweep reads %q)", filepath.Join(dir, ManifestName), m.Format, Format)
	}
	if err := m.Audit.check(); err != nil {
		return nil, false, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestName), err)
	}
	if err := m.Verify(dir); err != nil {
		return nil, false, err
	}
	return m, true, nil
}
