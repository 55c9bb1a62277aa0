package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/portable"
	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// runInfo is what this invocation would write to run.json: a resume must find the same.
func (o *Options) runInfo() *runs.Info {
	gd, ids := gridDigest(o.Grid)
	digests := modelDigests(o.Spec)
	ri := &runs.Info{
		Format: runs.Format, Engine: version.Engine,
		Grid:      runs.Grid{Path: o.GridPath, SHA256: gd, Configs: ids},
		Items:     runs.Items{Path: absPath(o.Items.Path), SHA256: o.Items.SHA256, Count: len(o.Items.Items)},
		Template:  o.Template,
		Decoding:  o.decoding(),
		VideoRoot: absPath(o.VideoRoot),
		Inputs: runs.Inputs{Kernel: kernelOf(o.Input), Stream: o.Input.Stream, OnDamaged: damagedOf(o.Input),
			Autorot: !o.Input.NoAutorotate},
		Libraries: o.Libraries,
		// The model files by name (their digests beside them), never by this machine's paths.
		Runtime: runs.Runtime{Spec: portable.Spec(o.Spec.Raw, digests), Engine: o.Spec.Engine, ModelSHA256: digests},
		Cascade: o.Cascade,
	}
	if o.Cache != nil {
		ri.Inputs.Cache = o.Cache.Location()
	}
	if o.Shard.N > 1 {
		ri.Shard = o.Shard.String()
	}
	return ri
}

// decoding is the sampling settings every request of the sweep carries (the generation bound made
// explicit): run.json's and each record's.
func (o *Options) decoding() *record.Decoding {
	r := llm.Request{MaxTokens: o.MaxTokens}
	return &record.Decoding{Temperature: o.Temperature, Seed: o.Seed, MaxTokens: r.MaxTok()}
}

// absPath is p made absolute, so that a merge run elsewhere finds the items file run.json names (p
// as given when it cannot be).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil && p != "" {
		return a
	}
	return p
}

// gridDigest identifies a grid by its expanded configs (so formatting does not matter), with their ids.
func gridDigest(g *grid.Grid) (string, []string) {
	b, _ := json.Marshal(g.Configs)
	s := sha256.Sum256(b)
	ids := make([]string, len(g.Configs))
	for i, c := range g.Configs {
		ids[i] = c.ID
	}
	return hex.EncodeToString(s[:]), ids
}

func kernelOf(p pipeline.Options) string {
	if p.Kernel == "" {
		return "pil-bicubic"
	}
	return p.Kernel
}

func damagedOf(p pipeline.Options) string {
	if p.OnDamaged == "" {
		return "fail"
	}
	return string(p.OnDamaged)
}

// modelDigests are the sha256 of every file a spec names (model=, mmproj=, …): the model is part of
// what a record means.
func modelDigests(sp llm.Spec) map[string]string {
	out := map[string]string{}
	keys := make([]string, 0, len(sp.Params))
	for k := range sp.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := sp.Params[k]
		if st, err := os.Stat(v); err == nil && st.Mode().IsRegular() {
			if d, err := cache.FileSHA256(v); err == nil {
				out[k] = d
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
