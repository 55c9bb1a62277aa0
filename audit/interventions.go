package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/score"
)

// NoiseFloor is the churn between declared reruns of one config (METRICS.md "Noise floor").
type NoiseFloor struct {
	Config string `json:"config"`
	Runs   []int  `json:"runs"`
	Pairs  int    `json:"pairs"` // run pairs compared
	// MeanChurn is the mean over run pairs of #items whose correctness differs; MeanChurnRate the same as %
	// of the items both runs hold. Open-ended configs report MeanAbsScoreChange (points) instead.
	MeanChurn          *float64 `json:"mean_churn"`
	MeanChurnRate      *float64 `json:"mean_churn_rate"`
	MeanAbsScoreChange *float64 `json:"mean_abs_score_change"`
}

func noiseFloor(d *dataset.Dataset) []NoiseFloor {
	out := []NoiseFloor{}
	C := len(d.Configs)
	for k, c := range d.Configs {
		if len(d.Reruns[k]) == 0 {
			continue
		}
		// run → item → record
		byRun := map[int]map[int]*record.Record{}
		add := func(j int32, i int) {
			r := &d.Recs[j]
			if byRun[r.RunIndex()] == nil {
				byRun[r.RunIndex()] = map[int]*record.Record{}
			}
			byRun[r.RunIndex()][i] = r
		}
		itemOf := map[dataset.ItemKey]int{}
		for i := range d.Items {
			if j := d.Grid[i*C+k]; j >= 0 {
				add(j, i)
				itemOf[d.Key(i)] = i
			}
		}
		for _, j := range d.Reruns[k] {
			add(j, itemOf[dataset.KeyOf(&d.Recs[j])])
		}
		var runs []int
		for r := range byRun {
			runs = append(runs, r)
		}
		sort.Ints(runs)
		nf := NoiseFloor{Config: c.ID, Runs: runs}
		var sumChurn, sumRate, sumAbs float64
		for a := 0; a < len(runs); a++ {
			for b := a + 1; b < len(runs); b++ {
				ra, rb := byRun[runs[a]], byRun[runs[b]]
				both, churn := 0, 0
				abs := 0.0
				for i, x := range ra {
					y, ok := rb[i]
					if !ok {
						continue
					}
					both++
					if x.Correct != nil && *x.Correct != *y.Correct {
						churn++
					}
					if x.Score != nil {
						dd := *x.Score - *y.Score
						if dd < 0 {
							dd = -dd
						}
						abs += dd
					}
				}
				if both == 0 {
					continue // runs over disjoint items: nothing was compared, so no zero-churn pair
				}
				nf.Pairs++
				sumChurn += float64(churn)
				sumRate += 100 * float64(churn) / float64(both)
				sumAbs += 100 * abs / float64(both)
			}
		}
		if nf.Pairs > 0 {
			p := float64(nf.Pairs)
			if c.Kind == "multiple_choice" {
				mc, mr := sumChurn/p, sumRate/p
				nf.MeanChurn, nf.MeanChurnRate = &mc, &mr
			} else {
				ma := sumAbs / p
				nf.MeanAbsScoreChange = &ma
			}
		}
		out = append(out, nf)
	}
	return out
}

// SamplingRecovery: terminal regressions of the default-policy grid that an alternative policy at the same
// top cost gets right (METRICS.md "Sampling intervention").
type SamplingRecovery struct {
	DefaultPolicy       string         `json:"default_policy"`
	TopConfig           string         `json:"top_config"`
	Alternatives        []string       `json:"alternatives"`
	TerminalRegressions int            `json:"terminal_regressions"`
	Recovered           int            `json:"recovered"`
	Rate                *float64       `json:"rate"`
	ByAlternative       map[string]int `json:"by_alternative"`
}

func samplingRecovery(v *mcView, defPolicy string) (*SamplingRecovery, string) {
	if v.pt.unordered != "" {
		return nil, "" // terminal regressions need an order (Metrics.Undefined says why)
	}
	// The main grid: text-only configs and visual configs of the default policy through the raw pipeline
	// (the cached pipeline is a protocol variable, not a budget).
	var def []int
	for j, c := range v.cfgs {
		if c.TextOnly || (c.Policy == defPolicy && c.Pipeline != "cached") {
			def = append(def, j)
		}
	}
	var tops []int
	for _, j := range def {
		c := v.cfgs[j]
		if c.TextOnly || c.Cost == nil {
			continue
		}
		switch {
		case len(tops) == 0 || dataset.CostLess(v.cfgs[tops[0]], c):
			tops = []int{j}
		case !dataset.CostLess(c, v.cfgs[tops[0]]):
			tops = append(tops, j)
		}
	}
	if len(tops) == 0 {
		return nil, ""
	}
	if len(tops) > 1 {
		var ids []string
		for _, j := range tops {
			ids = append(ids, v.cfgs[j].ID)
		}
		return nil, fmt.Sprintf("sampling recovery skipped: configs %s of policy %q share the top cost", strings.Join(ids, ", "), defPolicy)
	}
	top := tops[0]
	var alts []int
	for j, c := range v.cfgs {
		if !c.TextOnly && c.Policy != "" && c.Policy != defPolicy && c.Cost != nil && *c.Cost == *v.cfgs[top].Cost {
			alts = append(alts, j)
		}
	}
	if len(alts) == 0 {
		return nil, ""
	}
	sr := &SamplingRecovery{DefaultPolicy: defPolicy, TopConfig: v.cfgs[top].ID, ByAlternative: map[string]int{}}
	for _, j := range alts {
		sr.Alternatives = append(sr.Alternatives, v.cfgs[j].ID)
	}
	for pi := range v.paired {
		if v.correct(pi, top) {
			continue
		}
		term := false
		for _, j := range def {
			if v.correct(pi, j) && dataset.CostLess(v.cfgs[j], v.cfgs[top]) {
				term = true
				break
			}
		}
		if !term {
			continue
		}
		sr.TerminalRegressions++
		rec := false
		for _, j := range alts {
			if v.correct(pi, j) {
				sr.ByAlternative[v.cfgs[j].ID]++
				rec = true
			}
		}
		if rec {
			sr.Recovered++
		}
	}
	sr.Rate = pct(sr.Recovered, sr.TerminalRegressions)
	return sr, ""
}

// IsoGroup is a set of visual configs whose pixel costs lie within 5% (METRICS.md "Iso-compute").
type IsoGroup struct {
	Configs     []string           `json:"configs"`
	Costs       []int64            `json:"costs"`
	Accuracy    map[string]float64 `json:"accuracy"`
	Oracle      float64            `json:"oracle"`
	OnlyCorrect map[string]int     `json:"only_correct"` // items this allocation alone gets right in the group
	BestFixed   float64            `json:"best_fixed"`
	OracleGain  float64            `json:"oracle_gain"` // oracle − best allocation, points
}

// isoCompute groups visual configs greedily from the cheapest: a group holds every config whose cost is at
// most 1.05 × the group's cheapest cost. Groups of one config are not reported.
func isoCompute(v *mcView) []IsoGroup {
	var vis []int
	for j, c := range v.cfgs {
		if !c.TextOnly && c.Cost != nil && *c.Cost > 0 {
			vis = append(vis, j)
		}
	}
	sort.SliceStable(vis, func(a, b int) bool { return *v.cfgs[vis[a]].Cost < *v.cfgs[vis[b]].Cost })
	out := []IsoGroup{}
	n := len(v.paired)
	for s := 0; s < len(vis); {
		e := s + 1
		base := float64(*v.cfgs[vis[s]].Cost)
		for e < len(vis) && float64(*v.cfgs[vis[e]].Cost) <= 1.05*base {
			e++
		}
		grp := vis[s:e]
		s = e
		if len(grp) < 2 || n == 0 {
			continue
		}
		g := IsoGroup{Accuracy: map[string]float64{}, OnlyCorrect: map[string]int{}}
		acc := make([]int, len(grp))
		oracle := 0
		for pi := range v.paired {
			nOK, last := 0, -1
			for gi, j := range grp {
				if v.correct(pi, j) {
					acc[gi]++
					nOK++
					last = gi
				}
			}
			if nOK > 0 {
				oracle++
			}
			if nOK == 1 {
				g.OnlyCorrect[v.cfgs[grp[last]].ID]++
			}
		}
		best := 0
		for gi, j := range grp {
			c := v.cfgs[j]
			g.Configs = append(g.Configs, c.ID)
			g.Costs = append(g.Costs, *c.Cost)
			g.Accuracy[c.ID] = 100 * float64(acc[gi]) / float64(n)
			if _, ok := g.OnlyCorrect[c.ID]; !ok {
				g.OnlyCorrect[c.ID] = 0
			}
			best = max(best, acc[gi])
		}
		g.Oracle = 100 * float64(oracle) / float64(n)
		g.BestFixed = 100 * float64(best) / float64(n)
		g.OracleGain = g.Oracle - g.BestFixed
		out = append(out, g)
	}
	return out
}

// PipelineFlip compares a raw and a cached config that agree on every other known field.
type PipelineFlip struct {
	Raw    string  `json:"raw"`
	Cached string  `json:"cached"`
	Flips  int     `json:"flips"`
	Rate   float64 `json:"rate"`        // % of paired items
	RawOK  int     `json:"raw_only"`    // correct raw, wrong cached
	CachOK int     `json:"cached_only"` // correct cached, wrong raw
}

func protocolKey(c *dataset.Config) string {
	f, s := "?", "?"
	if c.Frames != nil {
		f = fmt.Sprint(*c.Frames)
	}
	if c.Seed != nil {
		s = fmt.Sprint(*c.Seed)
	}
	return strings.Join([]string{f, c.SizeKey(), c.Policy, c.Preset, s, fmt.Sprint(c.TextOnly)}, "|")
}

func pipelineFlips(v *mcView) []PipelineFlip {
	out := []PipelineFlip{}
	raw := map[string][]int{}
	for j, c := range v.cfgs {
		if c.Pipeline == "raw" {
			raw[protocolKey(c)] = append(raw[protocolKey(c)], j)
		}
	}
	n := len(v.paired)
	for j, c := range v.cfgs {
		if c.Pipeline != "cached" || n == 0 {
			continue
		}
		for _, r := range raw[protocolKey(c)] {
			f := PipelineFlip{Raw: v.cfgs[r].ID, Cached: c.ID}
			for pi := range v.paired {
				a, b := v.correct(pi, r), v.correct(pi, j)
				if a && !b {
					f.RawOK++
				} else if b && !a {
					f.CachOK++
				}
			}
			f.Flips = f.RawOK + f.CachOK
			f.Rate = 100 * float64(f.Flips) / float64(n)
			out = append(out, f)
		}
	}
	return out
}

// LetterPrior compares the distribution of predicted option letters per config with the gold letters.
type LetterPrior struct {
	Letters []string                      `json:"letters"` // sorted; "other" = not a single option letter
	Gold    map[string]float64            `json:"gold"`    // % of paired items
	Configs map[string]map[string]float64 `json:"configs"` // config → letter → % of paired items
	// TVDistance is the total variation distance (0–100) between a config's predicted and the gold
	// distribution; a text-only config far from 0 shows the letter prior of the question alone.
	TVDistance map[string]float64 `json:"tv_distance"`
}

func letterPrior(v *mcView) *LetterPrior {
	n := len(v.paired)
	if n == 0 {
		return nil
	}
	lp := &LetterPrior{Gold: map[string]float64{}, Configs: map[string]map[string]float64{}, TVDistance: map[string]float64{}}
	letters := map[string]bool{}
	gold := map[string]int{}
	haveGold := 0
	C := len(v.d.Configs)
	for _, i := range v.paired {
		l := ""
		for _, k := range v.ks {
			if r := v.d.Recs[v.d.Grid[i*C+k]]; r.Answer != "" {
				l = score.OptionLetter(r.Answer)
				break
			}
		}
		if l == "" {
			l = "other"
		} else {
			haveGold++
		}
		gold[l]++
		letters[l] = true
	}
	if haveGold == 0 {
		return nil // no gold letters: not a lettered multiple-choice set
	}
	preds := make([]map[string]int, len(v.ks))
	for j, k := range v.ks {
		preds[j] = map[string]int{}
		for _, i := range v.paired {
			r := &v.d.Recs[v.d.Grid[i*C+k]]
			l := score.OptionLetter(r.Prediction)
			switch {
			case r.Unparsed:
				l = "unparsed" // no letter, not another letter
			case l == "":
				l = "other"
			}
			preds[j][l]++
			letters[l] = true
		}
	}
	for l := range letters {
		lp.Letters = append(lp.Letters, l)
	}
	sort.Strings(lp.Letters)
	for _, l := range lp.Letters {
		lp.Gold[l] = 100 * float64(gold[l]) / float64(n)
	}
	for j, c := range v.cfgs {
		dist := map[string]float64{}
		tv := 0.0
		for _, l := range lp.Letters {
			dist[l] = 100 * float64(preds[j][l]) / float64(n)
			d := dist[l] - lp.Gold[l]
			if d < 0 {
				d = -d
			}
			tv += d
		}
		lp.Configs[c.ID] = dist
		lp.TVDistance[c.ID] = tv / 2
	}
	return lp
}
