package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/sampler"
)

// RunFormat names the run-directory format in run.json.
const RunFormat = "framesweep.run/1"

// ErrRunMismatch marks a RUN that belongs to another sweep (other grid, items or runtime).
var ErrRunMismatch = errors.New("the run directory belongs to another sweep")

// RunInfo is RUN/run.json: what the sweep is, so a resume can refuse another one, and when it ran.
type RunInfo struct {
	Format   string      `json:"format"`
	Engine   string      `json:"engine"`
	Grid     GridInfo    `json:"grid"`
	Items    ItemsInfo   `json:"items"`
	Runtime  RuntimeInfo `json:"runtime"`
	Template string      `json:"template"`
	Inputs   InputsInfo  `json:"inputs"`
	Shard    string      `json:"shard,omitempty"` // i/N
	Cascade  *Cascade    `json:"cascade,omitempty"`
	// Libraries are the linked library versions of the first run (later sessions must match them for
	// the records to be one experiment; a mismatch is a warning, not a refusal: it names what changed).
	Libraries map[string]string `json:"libraries"`
	Sessions  []Session         `json:"sessions"`
	// Merged lists the RUNs a `framesweep merge` joined into this one (their sessions are in Sessions).
	Merged []MergedRun `json:"merged,omitempty"`
}

// GridInfo identifies the grid by its expanded configs, so formatting does not matter.
type GridInfo struct {
	Path    string   `json:"path"`
	SHA256  string   `json:"sha256"` // of the expanded configs (JSON)
	Configs []string `json:"configs"`
}

// ItemsInfo identifies the items file by its canonical content.
type ItemsInfo struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Count  int    `json:"count"`
}

// RuntimeInfo is the runtime spec and the digests of the model files it names.
type RuntimeInfo struct {
	Spec        string            `json:"spec"`
	Engine      string            `json:"engine"`
	ModelSHA256 map[string]string `json:"model_sha256,omitempty"`
}

// InputsInfo are the options that decide the inputs' bytes.
type InputsInfo struct {
	Kernel    string `json:"kernel"`
	Stream    *int   `json:"stream,omitempty"`
	OnDamaged string `json:"on_damaged"`
	Autorot   bool   `json:"autorotate"`
	Cache     string `json:"cache,omitempty"`
}

// Session is one invocation on this RUN.
type Session struct {
	Command  []string `json:"command"`
	Started  string   `json:"started"`
	Ended    string   `json:"ended,omitempty"`
	Pairs    int      `json:"pairs_done,omitempty"`
	Failed   int      `json:"pairs_failed,omitempty"`
	Stopped  string   `json:"stopped,omitempty"` // why it ended early (a signal)
	Limit    int      `json:"limit,omitempty"`
	Resumed  bool     `json:"resumed"`
	Warnings []string `json:"warnings,omitempty"`
	Run      string   `json:"run,omitempty"` // in a merged RUN: the RUN the session wrote
}

func gridDigest(g *sampler.Grid) (string, []string) {
	b, _ := json.Marshal(g.Configs)
	s := sha256.Sum256(b)
	ids := make([]string, len(g.Configs))
	for i, c := range g.Configs {
		ids[i] = c.ID
	}
	return hex.EncodeToString(s[:]), ids
}

// sameSweep reports why prev (a RUN's run.json) is not the sweep cur describes; nil when it is.
func sameSweep(prev, cur *RunInfo) error {
	var diffs []string
	if prev.Format != RunFormat {
		diffs = append(diffs, fmt.Sprintf("format %q", prev.Format))
	}
	if prev.Grid.SHA256 != cur.Grid.SHA256 {
		diffs = append(diffs, fmt.Sprintf("grid %s (%d configs) vs %s (%d configs)", prev.Grid.Path, len(prev.Grid.Configs), cur.Grid.Path, len(cur.Grid.Configs)))
	}
	if prev.Items.SHA256 != cur.Items.SHA256 {
		diffs = append(diffs, fmt.Sprintf("items %s (%d) vs %s (%d)", prev.Items.Path, prev.Items.Count, cur.Items.Path, cur.Items.Count))
	}
	if prev.Runtime.Spec != cur.Runtime.Spec {
		diffs = append(diffs, fmt.Sprintf("runtime %q vs %q", prev.Runtime.Spec, cur.Runtime.Spec))
	}
	for k, v := range prev.Runtime.ModelSHA256 {
		if cur.Runtime.ModelSHA256[k] != v {
			diffs = append(diffs, fmt.Sprintf("model file %s changed (sha256 %.12s… vs %.12s…)", k, v, cur.Runtime.ModelSHA256[k]))
		}
	}
	if prev.Template != cur.Template {
		diffs = append(diffs, fmt.Sprintf("template %q vs %q", prev.Template, cur.Template))
	}
	if pi, ci := prev.Inputs, cur.Inputs; pi.Kernel != ci.Kernel || pi.OnDamaged != ci.OnDamaged || pi.Autorot != ci.Autorot || intp(pi.Stream) != intp(ci.Stream) {
		diffs = append(diffs, fmt.Sprintf("input options %+v vs %+v", pi, ci))
	}
	if pc, cc := cascadeString(prev.Cascade), cascadeString(cur.Cascade); pc != cc {
		diffs = append(diffs, fmt.Sprintf("cascade %s vs %s", pc, cc))
	}
	if prev.Shard != cur.Shard {
		diffs = append(diffs, fmt.Sprintf("shard %q vs %q", prev.Shard, cur.Shard))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: %s", ErrRunMismatch, strings.Join(diffs, "; "))
	}
	return nil
}

func intp(p *int) string {
	if p == nil {
		return "best"
	}
	return fmt.Sprint(*p)
}

// libraryWarnings names the libraries whose versions differ between two sessions.
func libraryWarnings(prev, cur map[string]string) []string {
	var out []string
	for k, v := range cur {
		if p, ok := prev[k]; ok && p != v {
			out = append(out, fmt.Sprintf("%s %s in the first session, %s now", k, p, v))
		}
	}
	return out
}

func parseRunInfo(b []byte, path string) (*RunInfo, error) {
	var ri RunInfo
	if err := json.Unmarshal(b, &ri); err != nil {
		return nil, fmt.Errorf("%s: not a run.json: %v", path, err)
	}
	return &ri, nil
}

// writeRunInfo publishes run.json whole: in a directory atomically (temp file, fsync, rename, fsync
// of the directory), on an object store as one PUT (create: only if the RUN has none yet).
func writeRunInfo(ctx context.Context, rs runStore, ri *RunInfo, create bool) error {
	b, err := json.MarshalIndent(ri, "", "  ")
	if err != nil {
		return err
	}
	return rs.writeFile(ctx, runInfoFile, append(b, '\n'), create)
}

func writeFileAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-run-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

var _ = version.Engine

func cascadeString(c *Cascade) string {
	if c == nil {
		return "none (a full sweep)"
	}
	return fmt.Sprintf("%v at threshold %v", c.Budgets, c.Threshold)
}
