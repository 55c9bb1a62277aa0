package audit

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// threeModels builds the records of three models over text, f8 (alpha only), f16, f32, f64 and
// f128 at 448², 60 items in two tasks and two duration groups. beta's f128 prompts were refused as
// over its context (error records marked over_context); gamma answered f128 but is given a 64-frame
// ceiling. beta lacks it07 at f32 and alpha's it11 at f16 is an error record: both items drop out.
// The verdicts come from a hash, so every model has its own confused items.
func threeModels() []record.Record {
	type cfg struct {
		id     string
		frames int
	}
	cfgs := []cfg{{"text", 0}, {"f8", 8}, {"f16", 16}, {"f32", 32}, {"f64", 64}, {"f128", 128}}
	var out []record.Record
	line := 0
	for _, m := range []string{"alpha", "beta", "gamma"} {
		for i := 0; i < 60; i++ {
			it := fmt.Sprintf("it%02d", i)
			task, dur := "videomme", "short"
			if i%2 == 1 {
				task = "mlvu"
			}
			if i%3 == 0 {
				dur = "long"
			}
			for _, c := range cfgs {
				if (c.id == "f8" && m != "alpha") || (m == "beta" && it == "it07" && c.id == "f32") {
					continue
				}
				line++
				meta := &record.ConfigMeta{Frames: ip(c.frames), Width: ip(448), Height: ip(448), Policy: "uniform"}
				if c.frames == 0 {
					meta = &record.ConfigMeta{Frames: ip(0), TextOnly: bp(true)}
				}
				r := record.Record{ItemID: it, Config: c.id, Model: m, Task: task, Duration: dur, ConfigMeta: meta,
					Source: record.Source{Path: m + ".jsonl", Line: line}}
				switch {
				case m == "beta" && c.id == "f128":
					r.Status, r.Error, r.OverContext, r.ContextTokens = record.StatusError, "prompt longer than the context", true, ip(8192)
				case m == "alpha" && it == "it11" && c.id == "f16":
					r.Status, r.Error = record.StatusError, "video could not be read"
				default:
					r.Correct = bp(verdict(m, i, c.frames))
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// verdict: correct more often with more frames, differently per model and item.
func verdict(model string, item, frames int) bool {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d/%d", model, item, frames)
	p := 35 + int(math.Log2(float64(frames+1)))*6
	return int(h.Sum32()%100) < p
}

// TestAnalyzeModels checks the multi-model audit against an independent computation written here from
// METRICS.md: the matched grid and its marks, every model's core metrics overall, per split and per
// duration, the churn of each adjacent transition, and the cross-model structure.
func TestAnalyzeModels(t *testing.T) {
	recs := threeModels()
	opt := ModelsOptions{Options: DefaultOptions(), Ceilings: map[string]int{"gamma": 64}}
	opt.Resamples = 0
	res, err := AnalyzeModels(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	mg := res.MatchedGrid
	if want := []string{"text", "f16", "f32", "f64"}; !slices.Equal(mg.Configs, want) {
		t.Fatalf("matched grid %v, want %v", mg.Configs, want)
	}
	marks := map[string]string{}
	for _, m := range mg.OverCeiling {
		marks[m.Model+"/"+m.Config] = m.Source + "/" + intStr(m.Limit)
	}
	if len(marks) != 2 || marks["beta/f128"] != "context/8192" || marks["gamma/f128"] != "ceiling/64" {
		t.Errorf("over-ceiling marks %v", marks)
	}
	if len(mg.LeftOut) != 2 || mg.LeftOut[0].Config != "f8" || !slices.Equal(mg.LeftOut[0].Missing, []string{"beta", "gamma"}) ||
		mg.LeftOut[1].Config != "f128" || !slices.Equal(mg.LeftOut[1].OverCeiling, []string{"beta", "gamma"}) {
		t.Errorf("left out %+v", mg.LeftOut)
	}
	if mg.Items != 58 || mg.Dropped != 2 || mg.DroppedByModel["beta"] != 1 || mg.DroppedByModel["alpha"] != 1 || !slices.Equal(mg.Examples, []string{"mlvu/it07", "mlvu/it11"}) {
		t.Errorf("items %d dropped %d %v %v", mg.Items, mg.Dropped, mg.DroppedByModel, mg.Examples)
	}
	if mi := res.ModelInfo["beta"]; mi.ErrorRecords != 60 || !slices.Equal(mi.OverContext, []string{"f128"}) || *mi.ContextTokens != 8192 {
		t.Errorf("beta info %+v", mi)
	}

	frames := []int{0, 16, 32, 64}
	ids := []string{"text", "f16", "f32", "f64"}
	var items []int
	for i := 0; i < 60; i++ {
		if i != 7 && i != 11 {
			items = append(items, i)
		}
	}
	confused := map[string][]bool{}
	for _, m := range res.Models {
		c := func(i, k int) bool { return verdict(m, i, frames[k]) }
		scopes := map[[2]string][]int{}
		for _, i := range items {
			task, dur := "videomme", "short"
			if i%2 == 1 {
				task = "mlvu"
			}
			if i%3 == 0 {
				dur = "long"
			}
			for _, k := range [][2]string{{"all", "all"}, {"all", dur}, {task, "all"}, {task, dur}} {
				scopes[k] = append(scopes[k], i)
			}
		}
		rows := map[[2]string]TableRow{}
		for _, r := range res.Table {
			if r.Model == m {
				rows[[2]string{r.Split, r.Duration}] = r
			}
		}
		if len(rows) != len(scopes) {
			t.Errorf("%s: %d table rows, want %d", m, len(rows), len(scopes))
		}
		for sc, its := range scopes {
			want := independentMetrics(its, c)
			got, ok := rows[sc]
			if !ok {
				t.Errorf("%s: no row for %v", m, sc)
				continue
			}
			name := m + " " + sc[0] + "/" + sc[1]
			if got.Items != len(its) || got.BestFixedConfig != ids[want.bestK] {
				t.Errorf("%s: %d items best %s, want %d items best %s", name, got.Items, got.BestFixedConfig, len(its), ids[want.bestK])
			}
			near(t, name+" best fixed", got.BestFixed, want.best)
			near(t, name+" oracle", got.Oracle, want.oracle)
			near(t, name+" headroom", got.OracleHeadroom, want.oracle-want.best)
			near(t, name+" confusion", got.VisualConfusionRate, want.confusion)
			near(t, name+" text overwrite", got.TextOverwriteRate, want.overwrite)
			near(t, name+" text overwrite of text-correct", got.TextOverwriteRateOfTextCorrect, want.overwriteOfText)
			near(t, name+" terminal", got.TerminalRegressionRate, want.terminal)
			near(t, name+" unstable", got.UnstableRate, want.unstable)
			if got.Churn == nil || *got.Churn != want.churn {
				t.Errorf("%s: churn %v, want %d", name, got.Churn, want.churn)
			}
			near(t, name+" state change", got.StateChangeRate, 100*float64(want.churn)/float64(len(its))/3)
			if sc == [2]string{"all", "all"} {
				confused[m] = want.confusedSet
				for k, id := range ids {
					if a := res.Accuracy[id][m]; math.Abs(a-want.acc[k]) > 1e-9 {
						t.Errorf("%s accuracy %s = %v, want %v", m, id, a, want.acc[k])
					}
				}
				for k := 0; k+1 < len(ids); k++ {
					row := res.Churn[k]
					p := row.Models[m]
					if row.From != ids[k] || row.To != ids[k+1] || p.Rescued != want.rescued[k] || p.Harmed != want.harmed[k] {
						t.Errorf("%s churn %s→%s: +%d −%d, want %s→%s +%d −%d", m, row.From, row.To, p.Rescued, p.Harmed, ids[k], ids[k+1], want.rescued[k], want.harmed[k])
					}
				}
			}
		}
	}

	// Cross-model: Jaccard and κ of the confused sets, items confused in k models.
	cm := res.CrossModel
	if cm.Items != len(items) || len(cm.Pairs) != 3 {
		t.Fatalf("cross-model over %d items, %d pairs", cm.Items, len(cm.Pairs))
	}
	inK := make([]int, 4)
	for j := range items {
		k := 0
		for _, m := range res.Models {
			k += b2i(confused[m][j])
		}
		inK[k]++
	}
	for k, n := range inK {
		if cm.ConfusedInK[k].K != k || cm.ConfusedInK[k].Items != n {
			t.Errorf("confused in %d models: %+v, want %d", k, cm.ConfusedInK[k], n)
		}
	}
	if inK[0] == len(items) || inK[3] == len(items) {
		t.Fatalf("degenerate fixture: %v", inK)
	}
	for _, p := range cm.Pairs {
		a, b := confused[p.A], confused[p.B]
		both, either, na, nb := 0, 0, 0, 0
		for j := range a {
			if a[j] && b[j] {
				both++
			}
			if a[j] || b[j] {
				either++
			}
			na += b2i(a[j])
			nb += b2i(b[j])
		}
		n := float64(len(a))
		near(t, p.A+"/"+p.B+" jaccard", p.Confused.Jaccard, float64(both)/float64(either))
		po := float64(len(a)-(either-both)) / n
		pe := float64(na)/n*float64(nb)/n + (1-float64(na)/n)*(1-float64(nb)/n)
		near(t, p.A+"/"+p.B+" kappa", p.Confused.Kappa, (po-pe)/(1-pe))
		same, agree := 0, 0
		for _, i := range items {
			s := true
			for _, f := range frames {
				eq := verdict(p.A, i, f) == verdict(p.B, i, f)
				agree += b2i(eq)
				s = s && eq
			}
			same += b2i(s)
		}
		if p.IdenticalTrajectories != same {
			t.Errorf("%s/%s identical trajectories %d, want %d", p.A, p.B, p.IdenticalTrajectories, same)
		}
		near(t, p.A+"/"+p.B+" verdict agreement", p.VerdictAgreement, 100*float64(agree)/float64(len(items)*len(frames)))
	}
}

// metricsWant are one scope's metrics computed item by item from METRICS.md.
type metricsWant struct {
	acc                                          []float64
	best, oracle, confusion, overwrite, terminal float64
	overwriteOfText, unstable                    float64
	bestK, churn                                 int
	rescued, harmed                              []int
	confusedSet                                  []bool
}

// independentMetrics: configs 0..3 are text, f16, f32, f64 in cost order; c(i, k) is item i's verdict.
func independentMetrics(items []int, c func(i, k int) bool) metricsWant {
	const K = 4
	n := float64(len(items))
	w := metricsWant{acc: make([]float64, K), rescued: make([]int, K-1), harmed: make([]int, K-1)}
	var oracle, conf, over, textOK, term, unstable int
	for _, i := range items {
		any, all := false, true
		for k := 0; k < K; k++ {
			if c(i, k) {
				w.acc[k]++
				any = true
			} else {
				all = false
			}
		}
		oracle += b2i(any)
		unstable += b2i(any && !all)
		cf := false
		for a := 0; a < K; a++ {
			for b := a + 1; b < K; b++ {
				cf = cf || (c(i, a) && !c(i, b))
			}
		}
		w.confusedSet = append(w.confusedSet, cf)
		conf += b2i(cf)
		if c(i, 0) {
			textOK++
			over += b2i(!c(i, 1) || !c(i, 2) || !c(i, 3))
		}
		term += b2i(!c(i, 3) && (c(i, 0) || c(i, 1) || c(i, 2)))
		for k := 0; k+1 < K; k++ {
			if !c(i, k) && c(i, k+1) {
				w.rescued[k]++
			}
			if c(i, k) && !c(i, k+1) {
				w.harmed[k]++
			}
		}
	}
	for k := range w.acc {
		w.acc[k] = 100 * w.acc[k] / n
		if k == 0 || w.acc[k] > w.acc[w.bestK] {
			w.bestK = k
		}
	}
	for k := 0; k+1 < K; k++ {
		w.churn += w.rescued[k] + w.harmed[k]
	}
	w.best = w.acc[w.bestK]
	w.oracle = 100 * float64(oracle) / n
	w.confusion = 100 * float64(conf) / n
	w.overwrite = 100 * float64(over) / n
	w.overwriteOfText = 100 * float64(over) / float64(textOK)
	w.terminal = 100 * float64(term) / n
	w.unstable = 100 * float64(unstable) / n
	return w
}

// TestSplitModelsErrors: unnamed records beside named ones, and one name with two weights digests,
// are errors naming the files.
func TestSplitModelsErrors(t *testing.T) {
	a := record.Record{ItemID: "i", Config: "c", Correct: bp(true), Model: "a", Source: record.Source{Path: "a.jsonl", Line: 1}}
	u := record.Record{ItemID: "i", Config: "c", Correct: bp(true), Source: record.Source{Path: "old.jsonl", Line: 3}}
	_, err := SplitModels([]record.Record{a, u})
	if !errors.Is(err, record.ErrInvalid) || !strings.Contains(err.Error(), "old.jsonl") || strings.Contains(err.Error(), "a.jsonl:") || !strings.Contains(err.Error(), "--model") {
		t.Errorf("unnamed beside named: %v", err)
	}
	if ms, err := SplitModels([]record.Record{u, u}); err != nil || len(ms) != 1 || ms[0].Name != "" {
		t.Errorf("one unnamed model: %v %v", ms, err)
	}
	w1, w2 := a, a
	w1.WeightsSHA256, w2.WeightsSHA256 = strings.Repeat("a", 64), strings.Repeat("b", 64)
	w2.Source = record.Source{Path: "b.jsonl", Line: 9}
	_, err = SplitModels([]record.Record{w1, w2})
	if !errors.Is(err, record.ErrConflict) || !strings.Contains(err.Error(), "b.jsonl:9") || !strings.Contains(err.Error(), "a.jsonl:1") {
		t.Errorf("two weights under one name: %v", err)
	}
	if _, err := AnalyzeModels([]record.Record{w1}, ModelsOptions{Options: DefaultOptions(), Ceilings: map[string]int{"zeta": 8}}); !errors.Is(err, ErrBadArgs) {
		t.Errorf("ceiling of an unknown model: %v", err)
	}
}
