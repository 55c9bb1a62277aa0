package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

// MatchedGrid is the grid every model is compared on: the configs every model answered, less those
// beyond some model's ceiling, and the items every model answered in each of them.
type MatchedGrid struct {
	Configs     []string        `json:"configs"` // display order (cost, then id)
	OverCeiling []CeilingMark   `json:"over_ceiling"`
	LeftOut     []LeftOutConfig `json:"left_out"`
	Items       int             `json:"items"`
	TotalItems  int             `json:"total_items"`
	Dropped     int             `json:"dropped_items"`
	// DroppedByModel counts the items a model lacks a record of in some matched config.
	DroppedByModel map[string]int `json:"dropped_by_model"`
	Examples       []string       `json:"examples"`
	// Differs lists matched configs whose config_meta differs between models (compared by id anyway).
	Differs []string `json:"config_meta_differs"`
}

// CeilingMark is a config beyond a model's context ceiling: marked and left out of the matched grid,
// never an error.
type CeilingMark struct {
	Model  string `json:"model"`
	Config string `json:"config"`
	Frames *int   `json:"frames"`
	// Source is "ceiling" (--ceiling MODEL=FRAMES; Limit is that frame count) or "context" (the
	// runtime refused the config's prompts as longer than its context; Limit is the context size in
	// tokens when the records carry it).
	Source string `json:"source"`
	Limit  *int   `json:"limit"`
}

// LeftOutConfig is a config outside the matched grid and why: the models that lack it, and those
// whose ceiling it is beyond.
type LeftOutConfig struct {
	Config      string   `json:"config"`
	Missing     []string `json:"missing_from"`
	OverCeiling []string `json:"over_ceiling"`
	// NotPooled: the config is in some task's matched grid but not in every one, so a pooled audit of
	// several tasks leaves it out (Pool.LeftOut names the tasks that lack it).
	NotPooled bool `json:"not_pooled,omitempty"`
}

// gridConfigs merges the config_meta of a model's records (error records too: a config the runtime
// refused every time still has a budget) and notes which configs have answers, and of which kind.
type gridConfig struct {
	c        *dataset.Config
	answered bool
	over     bool // some record was refused as over the context
	context  *int
}

func gridConfigs(m ModelRecords) (map[string]*gridConfig, error) {
	out := map[string]*gridConfig{}
	for i := range m.Records {
		r := &m.Records[i]
		g := out[r.Config]
		if g == nil {
			g = &gridConfig{c: &dataset.Config{ID: r.Config}}
			out[r.Config] = g
		}
		if r.ConfigMeta != nil {
			if err := g.c.Merge(r.ConfigMeta, r.Source); err != nil {
				return nil, err
			}
		}
		if r.ContextTokens != nil {
			g.context = r.ContextTokens
		}
		if r.Failed() {
			g.over = g.over || r.OverContext
			continue
		}
		g.answered = true
		kind := "multiple_choice"
		if r.Score != nil {
			kind = "open_ended"
		}
		if g.c.Kind != "" && g.c.Kind != kind {
			return nil, record.Errorf(r.Source.Path, r.Source.Line, "models", record.ErrInvalid, "model %q config %q mixes correct and score records", m.Name, r.Config)
		}
		g.c.Kind = kind
	}
	for _, g := range out {
		if err := g.c.FinishCost(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// matchGrid finds the matched grid, of the configs in pool (nil: any), and returns each model's
// records restricted to it (answered records of the matched configs and items).
func matchGrid(ms []ModelRecords, ceilings map[string]int, pool map[string]bool) (*MatchedGrid, map[string][]record.Record, error) {
	grids := make([]map[string]*gridConfig, len(ms))
	all := map[string]*dataset.Config{}
	var order []*dataset.Config
	for mi, m := range ms {
		g, err := gridConfigs(m)
		if err != nil {
			return nil, nil, err
		}
		grids[mi] = g
		for id, gc := range g {
			if all[id] == nil {
				all[id] = gc.c
				order = append(order, gc.c)
			}
		}
	}
	dataset.SortConfigs(order)
	mg := &MatchedGrid{Configs: []string{}, OverCeiling: []CeilingMark{}, LeftOut: []LeftOutConfig{}, DroppedByModel: map[string]int{}, Examples: []string{}, Differs: []string{}}
	kinds := map[string]string{}
	for _, c := range order {
		lo := LeftOutConfig{Config: c.ID, Missing: []string{}, OverCeiling: []string{}}
		for mi, m := range ms {
			gc := grids[mi][c.ID]
			if mark, over := ceilingMark(m.Name, c.ID, gc, all[c.ID], ceilings); over {
				mg.OverCeiling = append(mg.OverCeiling, mark)
				lo.OverCeiling = append(lo.OverCeiling, m.Name)
			} else if gc == nil || !gc.answered {
				lo.Missing = append(lo.Missing, m.Name)
			}
		}
		lo.NotPooled = pool != nil && !pool[c.ID]
		if len(lo.Missing)+len(lo.OverCeiling) > 0 || lo.NotPooled {
			mg.LeftOut = append(mg.LeftOut, lo)
			continue
		}
		for mi, m := range ms {
			gc := grids[mi][c.ID]
			if k, ok := kinds[c.ID]; ok && k != gc.c.Kind {
				return nil, nil, record.Errorf(dataset.SourcePaths(m.Records), 0, "models", record.ErrInvalid, "config %q is %s for one model and %s for model %q", c.ID, k, gc.c.Kind, m.Name)
			}
			kinds[c.ID] = gc.c.Kind
			if d := metaDiff(grids[0][c.ID].c, gc.c); d != "" && mi > 0 {
				mg.Differs = append(mg.Differs, fmt.Sprintf("%s: %s for %q, %s for %q", c.ID, d, ms[0].Name, metaDiff(gc.c, grids[0][c.ID].c), m.Name))
			}
		}
		mg.Configs = append(mg.Configs, c.ID)
	}
	filtered := matchItems(ms, mg, kinds)
	return mg, filtered, nil
}

// ceilingMark decides whether config id is beyond model's ceiling: frames over its --ceiling, or
// prompts the runtime refused as over its context.
func ceilingMark(model, id string, gc *gridConfig, c *dataset.Config, ceilings map[string]int) (CeilingMark, bool) {
	mark := CeilingMark{Model: model, Config: id, Frames: c.Frames}
	if gc != nil && gc.c.Frames != nil {
		mark.Frames = gc.c.Frames
	}
	if lim, ok := ceilings[model]; ok && mark.Frames != nil && *mark.Frames > lim {
		mark.Source, mark.Limit = "ceiling", &lim
		return mark, true
	}
	if gc != nil && gc.over {
		mark.Source, mark.Limit = "context", gc.context
		return mark, true
	}
	return mark, false
}

// metaDiff describes how a's config_meta differs from b's ("" when it does not).
func metaDiff(a, b *dataset.Config) string {
	var d []string
	if intStr(a.Frames) != intStr(b.Frames) {
		d = append(d, "frames "+intStr(a.Frames))
	}
	if a.SizeKey() != b.SizeKey() {
		d = append(d, "size "+a.SizeKey())
	}
	if a.TextOnly != b.TextOnly {
		d = append(d, fmt.Sprintf("text_only %v", a.TextOnly))
	}
	for _, f := range [][3]string{{"policy", a.Policy, b.Policy}, {"preset", a.Preset, b.Preset}, {"pipeline", a.Pipeline, b.Pipeline}} {
		if f[1] != f[2] {
			d = append(d, f[0]+" "+f[1])
		}
	}
	return strings.Join(d, ", ")
}

func intStr(p *int) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}

// matchItems keeps the items every model answered in every matched config of the item's kind(s),
// and returns each model's answered records of those items and configs.
func matchItems(ms []ModelRecords, mg *MatchedGrid, kinds map[string]string) map[string][]record.Record {
	type item = dataset.ItemKey
	has := make([]map[item]map[string]bool, len(ms)) // per model: item → configs answered
	need := map[item]bool{}
	for mi, m := range ms {
		has[mi] = map[item]map[string]bool{}
		for i := range m.Records {
			r := &m.Records[i]
			if r.Failed() || kinds[r.Config] == "" {
				continue
			}
			k := dataset.KeyOf(r)
			if has[mi][k] == nil {
				has[mi][k] = map[string]bool{}
			}
			has[mi][k][r.Config] = true
			need[k] = true
		}
	}
	kindOf := map[item]map[string]bool{} // item → kinds
	for mi := range ms {
		for it, cs := range has[mi] {
			if kindOf[it] == nil {
				kindOf[it] = map[string]bool{}
			}
			for c := range cs {
				kindOf[it][kinds[c]] = true
			}
		}
	}
	ids := make([]item, 0, len(need))
	for it := range need {
		ids = append(ids, it)
	}
	sort.Slice(ids, func(a, b int) bool {
		if ids[a].ID != ids[b].ID {
			return ids[a].ID < ids[b].ID
		}
		return ids[a].Task < ids[b].Task
	})
	keep := map[item]bool{}
	multiTask := false
	for _, it := range ids {
		multiTask = multiTask || it.Task != ids[0].Task
	}
	for _, it := range ids {
		ok := true
		for mi, m := range ms {
			for _, c := range mg.Configs {
				if kindOf[it][kinds[c]] && !has[mi][it][c] {
					ok = false
					mg.DroppedByModel[m.Name]++
					break
				}
			}
		}
		mg.TotalItems++
		if ok {
			keep[it] = true
			mg.Items++
		} else {
			mg.Dropped++
			if len(mg.Examples) < 10 {
				name := it.ID
				if multiTask {
					name = it.String()
				}
				mg.Examples = append(mg.Examples, name)
			}
		}
	}
	out := map[string][]record.Record{}
	for _, m := range ms {
		var rs []record.Record
		for i := range m.Records {
			r := &m.Records[i]
			if !r.Failed() && kinds[r.Config] != "" && keep[dataset.KeyOf(r)] {
				rs = append(rs, *r)
			}
		}
		out[m.Name] = rs
	}
	return out
}
