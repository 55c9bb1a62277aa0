package audit

import (
	"hash/fnv"
	"math"
	"math/big"
	"runtime"
	"slices"
	"testing"

	"github.com/framesweep/framesweep/internal/splitmix"
)

func TestBootstrapDeterministic(t *testing.T) {
	opt := DefaultOptions()
	a, err := Analyze(coreRecords(), opt)
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	b, err := Analyze(coreRecords(), opt)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if *a.OracleHeadroomCI != *b.OracleHeadroomCI || *a.VisualConfusionRateCI != *b.VisualConfusionRateCI {
		t.Errorf("intervals depend on worker count: %+v vs %+v", a.OracleHeadroomCI, b.OracleHeadroomCI)
	}
	opt.Seed = 99
	c, _ := Analyze(coreRecords(), opt)
	if c.Bootstrap.Seed != 99 || a.Bootstrap.Seed != 1 || a.Bootstrap.Resamples != 1000 {
		t.Errorf("bootstrap info %+v %+v", a.Bootstrap, c.Bootstrap)
	}
}

// The intervals equal a from-the-definition bootstrap that follows the documented stream (docs/audit.md):
// items in id order, resample b seeded splitmix64(seed ^ fnv1a64(scope) ^ (b+1)·golden), two indices per
// output (low half first), per-item metrics recomputed from correctness and costs, type-7 percentiles.
func TestBootstrapMatchesDefinition(t *testing.T) {
	opt := DefaultOptions()
	opt.Seed, opt.Resamples = 12345, 300
	recs := coreRecords()
	res, err := Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	costs := []int64{0, 8e4, 16e4, 32e4} // text, f8, f16, f32
	cfgIdx := map[string]int{"text": 0, "f8": 1, "f16": 2, "f32": 3}
	byItem := map[string][]int{}
	for _, r := range recs {
		if byItem[r.ItemID] == nil {
			byItem[r.ItemID] = []int{-1, -1, -1, -1}
		}
		byItem[r.ItemID][cfgIdx[r.Config]] = b2i(*r.Correct)
	}
	var items [][]int // paired items, id order
	for _, id := range []string{"i1", "i2", "i3", "i4", "i5", "i6"} {
		items = append(items, byItem[id])
	}
	h := fnv.New64a()
	h.Write([]byte("all"))
	scope := h.Sum64()
	n := uint64(len(items))
	var head, conf []float64
	for b := 0; b < opt.Resamples; b++ {
		seed := splitmix.Source{State: opt.Seed ^ scope ^ uint64(b+1)*0x9E3779B97F4A7C15}
		g := splitmix.Source{State: seed.Uint64()}
		var idx []int
		for len(idx) < len(items) {
			x := g.Uint64()
			idx = append(idx, int((x&0xFFFFFFFF)*n>>32))
			if len(idx) < len(items) {
				idx = append(idx, int((x>>32)*n>>32))
			}
		}
		acc := make([]int, 4)
		oracle, confused := 0, 0
		for _, i := range idx {
			c := items[i]
			any, cf := false, false
			for k := range c {
				acc[k] += c[k]
				any = any || c[k] == 1
				for k2 := range c {
					cf = cf || (costs[k] < costs[k2] && c[k] == 1 && c[k2] == 0)
				}
			}
			oracle += b2i(any)
			confused += b2i(cf)
		}
		best := slices.Max(acc)
		head = append(head, 100*float64(oracle-best)/float64(n))
		conf = append(conf, 100*float64(confused)/float64(n))
	}
	pctl := func(v []float64, q float64) float64 {
		slices.Sort(v)
		pos := q * float64(len(v)-1)
		lo := int(pos)
		if lo+1 >= len(v) {
			return v[len(v)-1]
		}
		return v[lo] + (pos-float64(lo))*(v[lo+1]-v[lo])
	}
	wantH := Interval{pctl(head, 0.025), pctl(head, 0.975)}
	wantC := Interval{pctl(conf, 0.025), pctl(conf, 0.975)}
	if res.OracleHeadroomCI == nil || math.Abs(res.OracleHeadroomCI.Lo-wantH.Lo) > 1e-9 || math.Abs(res.OracleHeadroomCI.Hi-wantH.Hi) > 1e-9 {
		t.Errorf("oracle_headroom_ci %+v, want %+v", res.OracleHeadroomCI, wantH)
	}
	if res.VisualConfusionRateCI == nil || math.Abs(res.VisualConfusionRateCI.Lo-wantC.Lo) > 1e-9 || math.Abs(res.VisualConfusionRateCI.Hi-wantC.Hi) > 1e-9 {
		t.Errorf("visual_confusion_rate_ci %+v, want %+v", res.VisualConfusionRateCI, wantC)
	}
	if wantH.Lo == wantH.Hi && wantC.Lo == wantC.Hi {
		t.Fatalf("degenerate intervals %+v %+v: the comparison would prove little", wantH, wantC)
	}
}

func TestMcNemarExact(t *testing.T) {
	cases := []struct {
		b, c int
		want float64
	}{{0, 0, 1}, {3, 3, 1}, {0, 5, 0.0625}, {5, 0, 0.0625}, {1, 5, 0.21875}, {2, 1, 1}, {0, 2, 0.5}, {13, 14, 1}, {14, 13, 1}}
	for _, tc := range cases {
		if got := McNemarExact(tc.b, tc.c); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("McNemarExact(%d,%d) = %v, want %v", tc.b, tc.c, got, tc.want)
		}
	}
	// Against exact rational arithmetic for a larger table.
	b, c := 40, 60
	sum := new(big.Int)
	for i := 0; i <= b; i++ {
		sum.Add(sum, new(big.Int).Binomial(int64(b+c), int64(i)))
	}
	r := new(big.Rat).SetFrac(new(big.Int).Mul(sum, big.NewInt(2)), new(big.Int).Lsh(big.NewInt(1), uint(b+c)))
	want, _ := r.Float64()
	if got := McNemarExact(b, c); math.Abs(got-want) > 1e-12*want {
		t.Errorf("McNemarExact(40,60) = %v, want %v", got, want)
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	if p := Percentile(v, 0.5); p != 2.5 {
		t.Errorf("median %v", p)
	}
	if p := Percentile(v, 0.025); math.Abs(p-1.075) > 1e-12 {
		t.Errorf("p2.5 %v", p)
	}
}
