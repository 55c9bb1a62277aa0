package audit

import (
	"fmt"
	"hash/fnv"
	"slices"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestProtocolAgreement: ladders that differ in one factor (pipeline, sampling, resolution) are
// paired on the budgets both have; a ladder differing in two factors is not. The pipeline pair's
// metrics, confusion tags, κ, Jaccard and flips are recomputed here item by item.
func TestProtocolAgreement(t *testing.T) {
	type cfg struct {
		id, policy, pipeline string
		frames, side         int
	}
	cfgs := []cfg{{"text", "", "", 0, 0},
		{"f16", "uniform", "raw", 16, 448}, {"f32", "uniform", "raw", 32, 448},
		{"f16c", "uniform", "cached", 16, 448}, {"f32c", "uniform", "cached", 32, 448},
		{"f16s", "uniform", "raw", 16, 224},    // resolution at f16 only
		{"f32r", "random", "raw", 32, 448},     // sampling at f32 only
		{"f16rc", "random", "cached", 16, 224}, // differs from everything in two factors or more
	}
	c := func(i int, id string) bool {
		h := fnv.New32a()
		fmt.Fprintf(h, "%d/%s", i, id)
		return h.Sum32()%100 < 55
	}
	var recs []record.Record
	const n = 80
	for i := 0; i < n; i++ {
		for _, k := range cfgs {
			meta := &record.ConfigMeta{Frames: ip(k.frames), Width: ip(k.side), Height: ip(k.side), Policy: k.policy, Pipeline: k.pipeline}
			if k.frames == 0 {
				meta = &record.ConfigMeta{Frames: ip(0), TextOnly: bp(true)}
			}
			if k.policy == "random" {
				meta.Seed = new(int64)
			}
			recs = append(recs, record.Record{ItemID: fmt.Sprintf("i%02d", i), Config: k.id, Correct: bp(c(i, k.id)), ConfigMeta: meta})
		}
	}
	opt := DefaultOptions()
	opt.Resamples = 0
	res, err := Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ProtocolPair{}
	for _, p := range res.ProtocolAgreement {
		got[p.Factor+": "+p.A+" | "+p.B] = p
	}
	want := map[string][]int{
		"pipeline: uniform 448x448 raw | uniform 448x448 cached":    {16, 32},
		"resolution: uniform 224x224 raw | uniform 448x448 raw":     {16},
		"sampling: uniform 448x448 raw | random seed=0 448x448 raw": {32},
	}
	if len(got) != len(want) {
		t.Errorf("pairs %v, want %v", keysSorted(got), want)
	}
	for k, b := range want {
		if p, ok := got[k]; !ok || !slices.Equal(p.Budgets, b) {
			t.Errorf("%s: %+v, want budgets %v", k, p, b)
		}
	}
	p := got["pipeline: uniform 448x448 raw | uniform 448x448 cached"]
	// Grid A: text, f16, f32; grid B: text, f16c, f32c (cost order).
	gridA, gridB := []string{"text", "f16", "f32"}, []string{"text", "f16c", "f32c"}
	stats := func(g []string) (oracle, conf, best int, confSet []bool) {
		acc := make([]int, len(g))
		for i := 0; i < n; i++ {
			any, cf := false, false
			for a := range g {
				if c(i, g[a]) {
					acc[a]++
					any = true
				}
				for b := a + 1; b < len(g); b++ {
					cf = cf || (c(i, g[a]) && !c(i, g[b]))
				}
			}
			oracle += b2i(any)
			conf += b2i(cf)
			confSet = append(confSet, cf)
		}
		return oracle, conf, slices.Max(acc), confSet
	}
	oa, ca, ba, sa := stats(gridA)
	ob, cb, bb, sb := stats(gridB)
	near(t, "A oracle", p.MetricsA.OracleAccuracy, 100*float64(oa)/n)
	near(t, "A headroom", p.MetricsA.OracleHeadroom, 100*float64(oa-ba)/n)
	near(t, "A confusion", p.MetricsA.VisualConfusionRate, 100*float64(ca)/n)
	near(t, "B oracle", p.MetricsB.OracleAccuracy, 100*float64(ob)/n)
	near(t, "B headroom", p.MetricsB.OracleHeadroom, 100*float64(ob-bb)/n)
	near(t, "B confusion", p.MetricsB.VisualConfusionRate, 100*float64(cb)/n)
	both, either, na, nb := 0, 0, 0, 0
	for i := range sa {
		both += b2i(sa[i] && sb[i])
		either += b2i(sa[i] || sb[i])
		na += b2i(sa[i])
		nb += b2i(sb[i])
	}
	pa, pb := float64(na)/n, float64(nb)/n
	pe := pa*pb + (1-pa)*(1-pb)
	near(t, "jaccard", p.Confused.Jaccard, float64(both)/float64(either))
	near(t, "kappa", p.Confused.Kappa, (float64(n-(either-both))/n-pe)/(1-pe))
	if p.Confused.Flips != either-both || p.Items != n {
		t.Errorf("tag flips %d, want %d", p.Confused.Flips, either-both)
	}
	flips := 0
	for k, bf := range p.Flips {
		x := 0
		for i := 0; i < n; i++ {
			x += b2i(c(i, gridA[k+1]) != c(i, gridB[k+1]))
		}
		if bf.Flips != x || bf.A != gridA[k+1] || bf.B != gridB[k+1] {
			t.Errorf("budget %d: %+v, want %d flips", bf.Frames, bf, x)
		}
		flips += x
	}
	near(t, "flip rate", p.FlipRate, 100*float64(flips)/(2*n))
}
