package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

// ModelsOptions steer AnalyzeModels.
type ModelsOptions struct {
	Options
	// Ceilings are frame ceilings by model (--ceiling MODEL=FRAMES): a config with more frames is
	// beyond that model's context ceiling.
	Ceilings map[string]int
}

// ModelsResult is the audit of several models (`framesweep audit --json` when the records name more
// than one): the matched grid, every model's audit over it side by side, the paper's table per split
// and duration group, and the cross-model structure of the item labels.
type ModelsResult struct {
	Models      []string              `json:"models"`
	ModelInfo   map[string]*ModelInfo `json:"model_info"`
	MatchedGrid *MatchedGrid          `json:"matched_grid"`
	// PerModel is each model's full audit (Result) over the matched grid and the matched items.
	PerModel map[string]*Result `json:"per_model"`
	// Accuracy is config → model → accuracy (points) over the matched grid.
	Accuracy map[string]map[string]float64 `json:"accuracy"`
	// Table is the study's table: per model, split (the records' task; "all" pools them) and
	// duration group ("all" for every duration), the core metrics.
	Table []TableRow `json:"table"`
	// Churn is every adjacent transition of the matched grid with each model's flows.
	Churn      []ChurnRow  `json:"churn"`
	CrossModel *CrossModel `json:"cross_model"`
	// Warnings are every model's warnings (Result.Warnings), each naming its model.
	Warnings []string `json:"warnings"`
	Notes    []string `json:"notes"`
}

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
}

// TableRow is one model's metrics over one split and duration group.
type TableRow struct {
	Model                          string    `json:"model"`
	Split                          string    `json:"split"`
	Duration                       string    `json:"duration"`
	Kind                           string    `json:"kind"` // multiple_choice or open_ended
	Items                          int       `json:"items"`
	BestFixed                      *float64  `json:"best_fixed"`
	BestFixedConfig                string    `json:"best_fixed_config,omitempty"`
	Oracle                         *float64  `json:"oracle"`
	OracleHeadroom                 *float64  `json:"oracle_headroom"` // open-ended: the oracle gap
	OracleHeadroomCI               *Interval `json:"oracle_headroom_ci"`
	VisualConfusionRate            *float64  `json:"visual_confusion_rate"`
	TextOverwriteRate              *float64  `json:"text_overwrite_rate"`
	TextOverwriteRateOfTextCorrect *float64  `json:"text_overwrite_rate_of_text_correct"`
	TerminalRegressionRate         *float64  `json:"terminal_regression_rate"`
	UnstableRate                   *float64  `json:"unstable_rate"`
	// Churn sums rescued + harmed over the adjacent transitions; StateChangeRate is their mean
	// state_change_rate.
	Churn           *int     `json:"churn"`
	StateChangeRate *float64 `json:"state_change_rate"`
}

// ChurnRow is one adjacent transition of the matched grid, per model.
type ChurnRow struct {
	From   string          `json:"from"`
	To     string          `json:"to"`
	Models map[string]Pair `json:"models"`
}

// CrossModel is the structure of the item labels across models, over the matched items (multiple
// choice): which items each model finds confusing, and how far the models agree.
type CrossModel struct {
	Items    int            `json:"items"`
	Confused map[string]int `json:"confused"` // per model
	// ConfusedInK[k] counts the items confused in exactly k of the models (k = 0…M).
	ConfusedInK []KCount `json:"confused_in_k"`
	// Pairs compares every two models: the confusion tag's agreement and the trajectories'.
	Pairs       []ModelPair `json:"pairs"`
	MeanJaccard *float64    `json:"mean_jaccard"`
	MeanKappa   *float64    `json:"mean_kappa"`
}

// KCount is the number of items confused in exactly K models.
type KCount struct {
	K     int      `json:"k"`
	Items int      `json:"items"`
	Rate  *float64 `json:"rate"`
}

// ModelPair compares two models item by item.
type ModelPair struct {
	A        string         `json:"a"`
	B        string         `json:"b"`
	Confused LabelAgreement `json:"confused"`
	// IdenticalTrajectories counts the items whose verdict is the same in every config;
	// VerdictAgreement is the % of (item, config) verdicts the two models share.
	IdenticalTrajectories int      `json:"identical_trajectories"`
	IdenticalRate         *float64 `json:"identical_rate"`
	VerdictAgreement      *float64 `json:"verdict_agreement"`
}

// AnalyzeModels audits the records of several models (SplitModels) on their matched grid.
func AnalyzeModels(recs []record.Record, opt ModelsOptions) (*ModelsResult, error) {
	ms, err := SplitModels(recs)
	if err != nil {
		return nil, err
	}
	for m := range opt.Ceilings {
		if !containsModel(ms, m) {
			return nil, record.Errorf(dataset.SourcePaths(recs), 0, "models", ErrBadArgs, "--ceiling names model %q, which no record names (models: %s)", m, modelNames(ms))
		}
	}
	mg, filtered, err := matchGrid(ms, opt.Ceilings)
	if err != nil {
		return nil, err
	}
	res := &ModelsResult{ModelInfo: map[string]*ModelInfo{}, MatchedGrid: mg, PerModel: map[string]*Result{},
		Accuracy: map[string]map[string]float64{}, Table: []TableRow{}, Churn: []ChurnRow{}, Warnings: []string{}, Notes: []string{}}
	for _, m := range ms {
		res.Models = append(res.Models, m.Name)
		var ceil *int
		if c, ok := opt.Ceilings[m.Name]; ok {
			ceil = &c
		}
		res.ModelInfo[m.Name] = modelInfo(m, ceil)
	}
	if len(mg.Configs) == 0 || mg.Items == 0 {
		res.Notes = append(res.Notes, "the models share no config with an item every model answered: nothing to compare")
		return res, nil
	}
	for _, m := range ms {
		r, err := Analyze(filtered[m.Name], opt.Options)
		if err != nil {
			return nil, err
		}
		res.PerModel[m.Name] = r
		for _, w := range r.Warnings {
			res.Warnings = append(res.Warnings, fmt.Sprintf("model %q: %s", m.Name, w))
		}
		for c, a := range r.Accuracy {
			if res.Accuracy[c] == nil {
				res.Accuracy[c] = map[string]float64{}
			}
			res.Accuracy[c][m.Name] = a
		}
		rows, err := tableRows(m.Name, filtered[m.Name], r, opt.Options)
		if err != nil {
			return nil, err
		}
		res.Table = append(res.Table, rows...)
	}
	res.Churn = churnRows(res)
	if res.CrossModel, err = crossModel(res.Models, filtered, opt.DefaultPolicy); err != nil {
		return nil, err
	}
	if len(mg.Differs) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d matched config(s) have config_meta that differs between models (compared by id): %s", len(mg.Differs), strings.Join(mg.Differs, "; ")))
	}
	if mg.Dropped > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d of %d items lack an answer of some model in some matched config and are left out of every model's audit (examples: %s)",
			mg.Dropped, mg.TotalItems, strings.Join(mg.Examples, ", ")))
	}
	return res, nil
}

func containsModel(ms []ModelRecords, name string) bool {
	for _, m := range ms {
		if m.Name == name {
			return true
		}
	}
	return false
}

func modelNames(ms []ModelRecords) string {
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%q", m.Name))
	}
	return strings.Join(s, ", ")
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
		g.c.FinishCost()
	}
	return out, nil
}

// matchGrid finds the matched grid and returns each model's records restricted to it (answered
// records of the matched configs and items).
func matchGrid(ms []ModelRecords, ceilings map[string]int) (*MatchedGrid, map[string][]record.Record, error) {
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
		if len(lo.Missing)+len(lo.OverCeiling) > 0 {
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
	need := map[string]map[string]bool{} // item → configs it needs (the matched configs of its kinds)
	has := make([]map[string]map[string]bool, len(ms))
	for mi, m := range ms {
		has[mi] = map[string]map[string]bool{}
		for i := range m.Records {
			r := &m.Records[i]
			if r.Failed() || kinds[r.Config] == "" {
				continue
			}
			if has[mi][r.ItemID] == nil {
				has[mi][r.ItemID] = map[string]bool{}
			}
			has[mi][r.ItemID][r.Config] = true
			if need[r.ItemID] == nil {
				need[r.ItemID] = map[string]bool{}
			}
		}
	}
	kindOf := map[string]map[string]bool{} // item → kinds
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
	var ids []string
	for it := range need {
		ids = append(ids, it)
	}
	sort.Strings(ids)
	keep := map[string]bool{}
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
				mg.Examples = append(mg.Examples, it)
			}
		}
	}
	out := map[string][]record.Record{}
	for _, m := range ms {
		var rs []record.Record
		for i := range m.Records {
			r := &m.Records[i]
			if !r.Failed() && kinds[r.Config] != "" && keep[r.ItemID] {
				rs = append(rs, *r)
			}
		}
		out[m.Name] = rs
	}
	return out
}

// tableRows are one model's rows of the study's table: all items, then each split (the records'
// task, when there are several), each with its duration groups.
func tableRows(model string, recs []record.Record, all *Result, opt Options) ([]TableRow, error) {
	rows := resultRows(model, "all", all)
	splits := map[string][]record.Record{}
	for i := range recs {
		if t := recs[i].Task; t != "" {
			splits[t] = append(splits[t], recs[i])
		}
	}
	if len(splits) < 2 {
		return rows, nil
	}
	sopt := opt
	sopt.NoCascade, sopt.Cascade = true, cascade.Options{}
	for _, s := range keysSorted(splits) {
		r, err := Analyze(splits[s], sopt)
		if err != nil {
			return nil, err
		}
		rows = append(rows, resultRows(model, s, r)...)
	}
	return rows, nil
}

// resultRows turns one Result into rows: all its items, then each duration group (multiple
// choice), and the open-ended summary when it has one.
func resultRows(model, split string, r *Result) []TableRow {
	var rows []TableRow
	if len(r.MCConfigs) > 0 {
		rows = append(rows, metricsRow(model, split, "all", &r.Metrics))
		for _, du := range keysSorted(r.Durations) {
			rows = append(rows, metricsRow(model, split, du, r.Durations[du]))
		}
	}
	if oe := r.OpenEnded; oe != nil && oe.Items > 0 {
		rows = append(rows, oeRow(model, split, "all", oe.Items, oe.BestFixed, oe.BestConfig, oe.OracleMean, oe.OracleGap))
		for _, du := range keysSorted(oe.Durations) {
			g := oe.Durations[du]
			rows = append(rows, oeRow(model, split, du, g.Items, g.BestFixed, g.BestConfig, g.OracleMean, g.OracleGap))
		}
	}
	return rows
}

func metricsRow(model, split, dur string, m *Metrics) TableRow {
	row := TableRow{Model: model, Split: split, Duration: dur, Kind: "multiple_choice", Items: m.Items, BestFixed: m.BestFixed,
		BestFixedConfig: m.BestFixedConfig, Oracle: m.OracleAccuracy, OracleHeadroom: m.OracleHeadroom, OracleHeadroomCI: m.OracleHeadroomCI,
		VisualConfusionRate: m.VisualConfusionRate, TextOverwriteRate: m.TextOverwriteRate, TextOverwriteRateOfTextCorrect: m.TextOverwriteRateOfTextCorrect,
		TerminalRegressionRate: m.TerminalRegressionRate, UnstableRate: m.UnstableRate}
	churn, n, sum := 0, 0, 0.0
	for _, p := range m.Pairs {
		if p.Adjacent {
			churn += p.Churn
			sum += p.StateChangeRate
			n++
		}
	}
	if n > 0 {
		mean := sum / float64(n)
		row.Churn, row.StateChangeRate = &churn, &mean
	}
	return row
}

func oeRow(model, split, dur string, items int, best float64, bestCfg string, oracle, gap float64) TableRow {
	return TableRow{Model: model, Split: split, Duration: dur, Kind: "open_ended", Items: items, BestFixed: &best, BestFixedConfig: bestCfg,
		Oracle: &oracle, OracleHeadroom: &gap}
}

func keysSorted[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// churnRows lines up every model's adjacent pairs of the matched grid.
func churnRows(res *ModelsResult) []ChurnRow {
	var out []ChurnRow
	at := map[[2]string]int{}
	for _, m := range res.Models {
		for _, p := range res.PerModel[m].Pairs {
			if !p.Adjacent {
				continue
			}
			k := [2]string{p.From, p.To}
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, ChurnRow{From: p.From, To: p.To, Models: map[string]Pair{}})
			}
			out[i].Models[m] = p
		}
	}
	if out == nil {
		out = []ChurnRow{}
	}
	return out
}

// crossModel compares the models' trajectories over the matched multiple-choice items.
func crossModel(models []string, filtered map[string][]record.Record, defPolicy string) (*CrossModel, error) {
	sets := make([]*TrajectorySet, len(models))
	for i, m := range models {
		ts, err := Trajectories(filtered[m], defPolicy)
		if err != nil {
			return nil, err
		}
		sets[i] = ts
	}
	idx, common := commonPaired(sets)
	cm := &CrossModel{Items: len(common), Confused: map[string]int{}, ConfusedInK: []KCount{}, Pairs: []ModelPair{}}
	if len(common) == 0 {
		return cm, nil
	}
	conf := make([][]bool, len(models))
	inK := make([]int, len(models)+1)
	for i, m := range models {
		conf[i] = make([]bool, len(common))
		for j, id := range common {
			conf[i][j] = idx[i][id].Tags.Confused
			cm.Confused[m] += b2i(conf[i][j])
		}
	}
	for j := range common {
		k := 0
		for i := range models {
			k += b2i(conf[i][j])
		}
		inK[k]++
	}
	for k, n := range inK {
		cm.ConfusedInK = append(cm.ConfusedInK, KCount{K: k, Items: n, Rate: pct(n, len(common))})
	}
	var js, ks []float64
	for a := 0; a < len(models); a++ {
		for b := a + 1; b < len(models); b++ {
			mp := modelPair(models[a], models[b], sets[a], sets[b], idx[a], idx[b], common)
			mp.Confused = labelAgreement(conf[a], conf[b])
			if j := mp.Confused.Jaccard; j != nil {
				js = append(js, *j)
			}
			if k := mp.Confused.Kappa; k != nil {
				ks = append(ks, *k)
			}
			cm.Pairs = append(cm.Pairs, mp)
		}
	}
	cm.MeanJaccard, cm.MeanKappa = mean(js), mean(ks)
	return cm, nil
}

// commonPaired indexes every set's paired items by id and lists the ids paired in all of them (the
// matched grid makes them one set), in the first set's order.
func commonPaired(sets []*TrajectorySet) ([]map[string]*Trajectory, []string) {
	idx := make([]map[string]*Trajectory, len(sets))
	for i, ts := range sets {
		idx[i] = map[string]*Trajectory{}
		for j := range ts.Items {
			if t := &ts.Items[j]; t.Paired {
				idx[i][t.ItemID] = t
			}
		}
	}
	var common []string
	for _, t := range sets[0].Items {
		in := t.Paired
		for i := range sets {
			in = in && idx[i][t.ItemID] != nil
		}
		if in {
			common = append(common, t.ItemID)
		}
	}
	return idx, common
}

// mean is the mean of xs; nil for none.
func mean(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	v := s / float64(len(xs))
	return &v
}

// modelPair compares two models' verdicts item by item over the configs both trajectory sets hold.
func modelPair(a, b string, sa, sb *TrajectorySet, ia, ib map[string]*Trajectory, items []string) ModelPair {
	mp := ModelPair{A: a, B: b}
	// Config positions by id: the two models' display orders may differ when their costs do.
	posB := map[string]int{}
	for j, c := range sb.MC {
		posB[c.ID] = j
	}
	agree, total := 0, 0
	for _, id := range items {
		ta, tb := ia[id], ib[id]
		same := true
		for j, c := range sa.MC {
			k, ok := posB[c.ID]
			if !ok {
				continue
			}
			eq := *ta.Correct[j] == *tb.Correct[k]
			agree += b2i(eq)
			total++
			same = same && eq
		}
		mp.IdenticalTrajectories += b2i(same)
	}
	mp.IdenticalRate = pct(mp.IdenticalTrajectories, len(items))
	mp.VerdictAgreement = pct(agree, total)
	return mp
}
