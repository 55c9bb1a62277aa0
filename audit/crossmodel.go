package audit

import (
	"sort"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

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
	Confused map[string]int `json:"confused"` // per model; null when undefined
	// ConfusedInK[k] counts the items confused in exactly k of the models (k = 0…M); null when some
	// model's confusion is undefined (its configs have no order).
	ConfusedInK []KCount `json:"confused_in_k"`
	// Pairs compares every two models: the confusion tag's agreement (null when undefined) and the
	// trajectories'.
	Pairs       []ModelPair `json:"pairs"`
	MeanJaccard *float64    `json:"mean_jaccard"`
	MeanKappa   *float64    `json:"mean_kappa"`
	// Undefined says why the null values above are null (key → reason): confused, confused_in_k,
	// mean_jaccard, mean_kappa and pairs[].confused when the configs have no order.
	Undefined map[string]string `json:"undefined,omitempty"`
}

// KCount is the number of items confused in exactly K models.
type KCount struct {
	K     int      `json:"k"`
	Items int      `json:"items"`
	Rate  *float64 `json:"rate"`
}

// ModelPair compares two models item by item.
type ModelPair struct {
	A        string          `json:"a"`
	B        string          `json:"b"`
	Confused *LabelAgreement `json:"confused"` // null when confusion is undefined (CrossModel.Undefined)
	// IdenticalTrajectories counts the items whose verdict is the same in every config;
	// VerdictAgreement is the % of (item, config) verdicts the two models share.
	IdenticalTrajectories int      `json:"identical_trajectories"`
	IdenticalRate         *float64 `json:"identical_rate"`
	VerdictAgreement      *float64 `json:"verdict_agreement"`
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
	why := ""
	for _, ts := range sets {
		if w, undef := ts.Undefined["confused"]; undef && why == "" {
			why = w
		}
	}
	if why != "" {
		// Never "confused in 0 of N models": without an order no item is known to be confused.
		cm.Confused, cm.ConfusedInK = nil, nil
		cm.Undefined = map[string]string{}
		for _, k := range []string{"confused", "confused_in_k", "mean_jaccard", "mean_kappa", "pairs.confused"} {
			cm.Undefined[k] = why
		}
	}
	conf := make([][]bool, len(models))
	inK := make([]int, len(models)+1)
	for i, m := range models {
		conf[i] = make([]bool, len(common))
		for j, id := range common {
			conf[i][j] = idx[i][id].Tags.Confused
			if why == "" {
				cm.Confused[m] += b2i(conf[i][j])
			}
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
		if why == "" {
			cm.ConfusedInK = append(cm.ConfusedInK, KCount{K: k, Items: n, Rate: pct(n, len(common))})
		}
	}
	var js, ks []float64
	for a := 0; a < len(models); a++ {
		for b := a + 1; b < len(models); b++ {
			mp := modelPair(models[a], models[b], sets[a], sets[b], idx[a], idx[b], common)
			if why == "" {
				la := labelAgreement(conf[a], conf[b])
				mp.Confused = &la
				if j := la.Jaccard; j != nil {
					js = append(js, *j)
				}
				if k := la.Kappa; k != nil {
					ks = append(ks, *k)
				}
			}
			cm.Pairs = append(cm.Pairs, mp)
		}
	}
	cm.MeanJaccard, cm.MeanKappa = mean(js), mean(ks)
	return cm, nil
}

// commonPaired indexes every set's paired items by (task, id) and lists those paired in all of them
// (the matched grid makes them one set), in the first set's order.
func commonPaired(sets []*TrajectorySet) ([]map[dataset.ItemKey]*Trajectory, []dataset.ItemKey) {
	idx := make([]map[dataset.ItemKey]*Trajectory, len(sets))
	for i, ts := range sets {
		idx[i] = map[dataset.ItemKey]*Trajectory{}
		for j := range ts.Items {
			if t := &ts.Items[j]; t.Paired {
				idx[i][t.Key()] = t
			}
		}
	}
	var common []dataset.ItemKey
	for _, t := range sets[0].Items {
		in := t.Paired
		for i := range sets {
			in = in && idx[i][t.Key()] != nil
		}
		if in {
			common = append(common, t.Key())
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
func modelPair(a, b string, sa, sb *TrajectorySet, ia, ib map[dataset.ItemKey]*Trajectory, items []dataset.ItemKey) ModelPair {
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
