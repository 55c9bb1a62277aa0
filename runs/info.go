package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/framesweep/framesweep/internal/portable"
	"github.com/framesweep/framesweep/record"
)

// Format names the run-directory format in run.json.
const Format = "framesweep.run/1"

// ErrMismatch marks a RUN that belongs to another sweep (other grid, items or runtime).
var ErrMismatch = errors.New("the run directory belongs to another sweep")

// Info is RUN/run.json: what the sweep is, so a resume can refuse another one, and when it ran.
type Info struct {
	Format   string  `json:"format"`
	Engine   string  `json:"engine"`
	Grid     Grid    `json:"grid"`
	Items    Items   `json:"items"`
	Runtime  Runtime `json:"runtime"`
	Template string  `json:"template"`
	// Decoding is the sampling settings of every answer (nil in a run.json written before they were
	// recorded: a resume then cannot check them, and says so).
	Decoding *record.Decoding `json:"decoding,omitempty"`
	Inputs   Inputs           `json:"inputs"`
	// VideoRoot is the directory records name their videos relative to (absolute, this machine's:
	// sweep --video-root, by default the items file's directory); "" in RUNs written before it
	// existed, whose records name videos as the items file resolved them. Not part of what makes two
	// sweeps the same: shards on other machines have other roots and the same relative names.
	VideoRoot string   `json:"video_root,omitempty"`
	Shard     string   `json:"shard,omitempty"` // i/N
	Cascade   *Cascade `json:"cascade,omitempty"`
	// Libraries are the linked library versions of the first run (later sessions must match them for
	// the records to be one experiment; a mismatch is a warning, not a refusal: it names what changed).
	Libraries map[string]string `json:"libraries"`
	Sessions  []Session         `json:"sessions"`
	// Merged lists the RUNs a `framesweep merge` joined into this one (their sessions are in Sessions).
	Merged []MergedRun `json:"merged,omitempty"`
}

// Grid identifies the grid by its expanded configs, so formatting does not matter.
type Grid struct {
	Path    string   `json:"path"`
	SHA256  string   `json:"sha256"` // of the expanded configs (JSON)
	Configs []string `json:"configs"`
}

// Items identifies the items file by its canonical content.
type Items struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Count  int    `json:"count"`
}

// Runtime is the runtime spec and the digests of the model files it names.
type Runtime struct {
	Spec        string            `json:"spec"`
	Engine      string            `json:"engine"`
	ModelSHA256 map[string]string `json:"model_sha256,omitempty"`
}

// Inputs are the options that decide the inputs' bytes.
type Inputs struct {
	Kernel    string `json:"kernel"`
	Stream    *int   `json:"stream,omitempty"`
	OnDamaged string `json:"on_damaged"`
	Autorot   bool   `json:"autorotate"`
	Cache     string `json:"cache,omitempty"`
}

// Session is one invocation on this RUN.
type Session struct {
	Kind     string   `json:"kind,omitempty"` // SessionMerge for a merge's; "" for a sweep's
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
	// Chunks is the RUN's manifest of the records chunks this session published on an object store
	// (name, lines, sha256), written when the session ends; readers check every chunk against it
	// (verify.go). None for records.jsonl, and in run.json written before chunk digests.
	Chunks []Chunk `json:"chunks,omitempty"`
}

// SessionMerge is the Kind of the session a merge adds to the merged RUN's run.json.
const SessionMerge = "merge"

// SameSweep reports why prev (a RUN's run.json) is not the sweep cur describes; nil when it is.
func SameSweep(prev, cur *Info) error {
	var diffs []string
	if prev.Format != Format {
		diffs = append(diffs, fmt.Sprintf("format %q", prev.Format))
	}
	if prev.Grid.SHA256 != cur.Grid.SHA256 {
		diffs = append(diffs, fmt.Sprintf("grid %s (%d configs) vs %s (%d configs)", prev.Grid.Path, len(prev.Grid.Configs), cur.Grid.Path, len(cur.Grid.Configs)))
	}
	if prev.Items.SHA256 != cur.Items.SHA256 {
		diffs = append(diffs, fmt.Sprintf("items %s (%d) vs %s (%d)", prev.Items.Path, prev.Items.Count, cur.Items.Path, cur.Items.Count))
	}
	// The model files are compared by name here and by digest below: the same files elsewhere are
	// the same runtime (run.json written before names replaced paths holds paths: compared by name).
	if ps, cs := portable.Spec(prev.Runtime.Spec, prev.Runtime.ModelSHA256), portable.Spec(cur.Runtime.Spec, cur.Runtime.ModelSHA256); ps != cs {
		diffs = append(diffs, fmt.Sprintf("runtime %q vs %q", ps, cs))
	}
	for k, v := range prev.Runtime.ModelSHA256 {
		if cur.Runtime.ModelSHA256[k] != v {
			diffs = append(diffs, fmt.Sprintf("model file %s changed (sha256 %.12s… vs %.12s…)", k, v, cur.Runtime.ModelSHA256[k]))
		}
	}
	if prev.Template != cur.Template {
		diffs = append(diffs, fmt.Sprintf("template %q vs %q", prev.Template, cur.Template))
	}
	diffs = append(diffs, decodingDiffs(prev.Decoding, cur.Decoding)...)
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
		return fmt.Errorf("%w: %s", ErrMismatch, strings.Join(diffs, "; "))
	}
	return nil
}

// decodingDiffs names the sampling flags whose values differ, as "--flag RUN's vs this one's"; none
// when either side does not record them (a run.json of an older framesweep).
func decodingDiffs(prev, cur *record.Decoding) []string {
	if prev == nil || cur == nil {
		return nil
	}
	var out []string
	if prev.Temperature != cur.Temperature {
		out = append(out, fmt.Sprintf("--temperature %v vs %v", prev.Temperature, cur.Temperature))
	}
	if prev.Seed != cur.Seed {
		out = append(out, fmt.Sprintf("--llm-seed %d vs %d", prev.Seed, cur.Seed))
	}
	if prev.MaxTokens != cur.MaxTokens {
		out = append(out, fmt.Sprintf("--max-tokens %d vs %d", prev.MaxTokens, cur.MaxTokens))
	}
	return out
}

// DecodingWarning is the warning of a session that resumes a RUN whose run.json records no
// sampling settings ("" when it records them, or this session has none to compare).
func DecodingWarning(prev, cur *Info) string {
	if prev.Decoding != nil || cur.Decoding == nil {
		return ""
	}
	d := cur.Decoding
	return fmt.Sprintf("run.json records no sampling settings (written before framesweep recorded them): this session's (--temperature %v --llm-seed %d --max-tokens %d) cannot be checked against the earlier sessions'; each record now carries its own", d.Temperature, d.Seed, d.MaxTokens)
}

func intp(p *int) string {
	if p == nil {
		return "best"
	}
	return fmt.Sprint(*p)
}

// LibraryWarnings names the libraries whose versions differ between two sessions.
func LibraryWarnings(prev, cur map[string]string) []string {
	var out []string
	for k, v := range cur {
		if p, ok := prev[k]; ok && p != v {
			out = append(out, fmt.Sprintf("%s %s in the first session, %s now", k, p, v))
		}
	}
	return out
}

func parseInfo(b []byte, path string) (*Info, error) {
	var ri Info
	if err := json.Unmarshal(b, &ri); err != nil {
		return nil, fmt.Errorf("%s: not a run.json: %v", path, err)
	}
	return &ri, nil
}

// writeInfo publishes run.json whole: in a directory atomically (temp file, fsync, rename, fsync
// of the directory), on an object store as one PUT (create: only if the RUN has none yet).
func writeInfo(ctx context.Context, rs runStore, ri *Info, create bool) error {
	b, err := json.MarshalIndent(ri, "", "  ")
	if err != nil {
		return err
	}
	return rs.writeFile(ctx, infoFile, append(b, '\n'), create)
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// Cascade is an online confidence cascade (METRICS.md "Confidence cascade", run live) as run.json
// records it: each item is asked at the lowest budget and escalates to the next while its confidence
// (the largest option probability) is below Threshold, stopping at the top budget.
type Cascade struct {
	Budgets   []int   `json:"budgets"`
	Threshold float64 `json:"threshold"`
	// From names where the threshold was chosen (a previous full RUN), for run.json.
	From string `json:"threshold_from,omitempty"`
}

func cascadeString(c *Cascade) string {
	if c == nil {
		return "none (a full sweep)"
	}
	return fmt.Sprintf("%v at threshold %v", c.Budgets, c.Threshold)
}
