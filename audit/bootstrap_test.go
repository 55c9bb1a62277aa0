package audit

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/splitmix"
	"github.com/framesweep/framesweep/record"
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

// videoRecords: 20 videos × 3 questions (ids NNN-k, Video-MME's convention), the three questions of a
// video following one trajectory over text, f8, f16, f32: answers about one video move together.
func videoRecords() []record.Record {
	cfgs := []string{"text", "f8", "f16", "f32"}
	metas := map[string]*record.ConfigMeta{"text": {TextOnly: bp(true)}, "f8": metaF(8, 100, 100, "uniform"),
		"f16": metaF(16, 100, 100, "uniform"), "f32": metaF(32, 100, 100, "uniform")}
	trajs := []string{"1111", "0011", "1000", "0101", "0110", "0000", "1100", "0111", "0001", "1010"}
	var out []record.Record
	for v := 0; v < 20; v++ {
		for q := 1; q <= 3; q++ {
			for k, c := range cfgs {
				out = append(out, record.Record{ItemID: fmt.Sprintf("%03d-%d", v, q), Config: c, Correct: bp(trajs[v%len(trajs)][k] == '1'),
					ConfigMeta: metas[c], VideoKey: fmt.Sprintf("videos/%03d.mp4", v), Source: record.Source{Path: "mem.jsonl", Line: len(out) + 1}})
			}
		}
	}
	return out
}

// TestClusterBootstrap: when three items share each video, the default resamples videos (the JSON
// says "cluster": "video"), and the intervals are wider than the item bootstrap's, with the same point
// estimates; --cluster item gives the item bootstrap back; video-id derives the same clusters from
// the NNN-k ids; a video cluster of one item each is the item bootstrap exactly.
func TestClusterBootstrap(t *testing.T) {
	recs := videoRecords()
	run := func(cluster string, recs []record.Record) *Result {
		t.Helper()
		opt := DefaultOptions()
		opt.Cluster = cluster
		res, err := Analyze(recs, opt)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	video, item, byID := run("", recs), run(ClusterItem, recs), run(ClusterVideoID, recs)
	if b := video.Bootstrap; b.Cluster != "video" || b.Clusters != 20 || b.ClusterSource != "records" || item.Bootstrap.Cluster != "item" {
		t.Fatalf("bootstrap info %+v / %+v", b, item.Bootstrap)
	}
	if *video.OracleHeadroom != *item.OracleHeadroom || *video.VisualConfusionRate != *item.VisualConfusionRate {
		t.Errorf("point estimates differ: %v %v / %v %v", *video.OracleHeadroom, *video.VisualConfusionRate, *item.OracleHeadroom, *item.VisualConfusionRate)
	}
	width := func(iv *Interval) float64 { return iv.Hi - iv.Lo }
	if width(video.OracleHeadroomCI) <= width(item.OracleHeadroomCI) || width(video.VisualConfusionRateCI) <= width(item.VisualConfusionRateCI) {
		t.Errorf("video intervals %+v %+v not wider than the item bootstrap's %+v %+v", video.OracleHeadroomCI, video.VisualConfusionRateCI,
			item.OracleHeadroomCI, item.VisualConfusionRateCI)
	}
	if byID.Bootstrap.ClusterSource != "item id" || *byID.OracleHeadroomCI != *video.OracleHeadroomCI || *byID.VisualConfusionRateCI != *video.VisualConfusionRateCI {
		t.Errorf("video-id %+v %+v, records' videos %+v", byID.Bootstrap, byID.OracleHeadroomCI, video.OracleHeadroomCI)
	}
	// One video per item: clusters of one are the item bootstrap, draw for draw.
	own := append([]record.Record(nil), recs...)
	for i := range own {
		own[i].VideoKey = own[i].ItemID
	}
	if got := run(ClusterVideo, own); *got.OracleHeadroomCI != *item.OracleHeadroomCI || *got.VisualConfusionRateCI != *item.VisualConfusionRateCI {
		t.Errorf("singleton clusters %+v, items %+v", got.OracleHeadroomCI, item.OracleHeadroomCI)
	}
	if got := run("", own); got.Bootstrap.Cluster != "item" {
		t.Errorf("auto with no shared video: %+v", got.Bootstrap)
	}
	// No video named: --cluster video is refused, auto is the item bootstrap.
	bare := append([]record.Record(nil), recs...)
	for i := range bare {
		bare[i].VideoKey = ""
	}
	if _, err := Analyze(bare, Options{Resamples: 10, Cluster: ClusterVideo, DefaultPolicy: "uniform"}); err == nil || !strings.Contains(err.Error(), "video-id") {
		t.Errorf("--cluster video without videos: %v", err)
	}
	if _, err := Analyze(bare, Options{Resamples: 10, Cluster: "clip"}); !errors.Is(err, ErrBadArgs) {
		t.Errorf("cluster clip: %v", err)
	}
}

// TestClusterBootstrapMatchesDefinition: the video intervals equal a bootstrap written here from the
// documented stream: videos in the order of their first paired item (items in id order), one draw per
// video per resample (two per SplitMix64 output, low half first), every item of a drawn video counted,
// the rates over the resample's items.
func TestClusterBootstrapMatchesDefinition(t *testing.T) {
	recs := videoRecords()
	// Uneven clusters: video 000 gets a fourth question, video 001 keeps one.
	for _, r := range recs[:4] {
		r.ItemID, r.Source.Line = "000-4", r.Source.Line+1000
		recs = append(recs, r)
	}
	var kept []record.Record
	for _, r := range recs {
		if r.ItemID != "001-2" && r.ItemID != "001-3" {
			kept = append(kept, r)
		}
	}
	opt := DefaultOptions()
	opt.Seed, opt.Resamples = 77, 400
	res, err := Analyze(kept, opt)
	if err != nil {
		t.Fatal(err)
	}
	costs := map[string]int64{"text": 0, "f8": 8e4, "f16": 16e4, "f32": 32e4}
	cfgs := []string{"text", "f8", "f16", "f32"}
	byItem := map[string][]int{}
	video := map[string]string{}
	var ids []string
	for _, r := range kept {
		if byItem[r.ItemID] == nil {
			byItem[r.ItemID] = make([]int, 4)
			ids = append(ids, r.ItemID)
		}
		byItem[r.ItemID][slices.Index(cfgs, r.Config)] = b2i(*r.Correct)
		video[r.ItemID] = r.VideoKey
	}
	slices.Sort(ids)
	var units [][][]int
	at := map[string]int{}
	for _, id := range ids {
		u, ok := at[video[id]]
		if !ok {
			u = len(units)
			at[video[id]] = u
			units = append(units, nil)
		}
		units[u] = append(units[u], byItem[id])
	}
	G := uint64(len(units))
	var head, conf []float64
	for b := 0; b < opt.Resamples; b++ {
		g := splitmix.Source{State: streamSeed(opt.Seed, "all", b)}
		var draws []uint64
		for uint64(len(draws)) < G {
			x := g.Uint64()
			draws = append(draws, (x&0xFFFFFFFF)*G>>32)
			if uint64(len(draws)) < G {
				draws = append(draws, (x>>32)*G>>32)
			}
		}
		acc := make([]int, 4)
		oracle, confused, n := 0, 0, 0
		for _, u := range draws {
			for _, c := range units[u] {
				n++
				any, cf := false, false
				for k := range c {
					acc[k] += c[k]
					any = any || c[k] == 1
					for k2 := range c {
						cf = cf || (costs[cfgs[k]] < costs[cfgs[k2]] && c[k] == 1 && c[k2] == 0)
					}
				}
				oracle += b2i(any)
				confused += b2i(cf)
			}
		}
		head = append(head, 100*float64(oracle-slices.Max(acc))/float64(n))
		conf = append(conf, 100*float64(confused)/float64(n))
	}
	slices.Sort(head)
	slices.Sort(conf)
	wantH := Interval{Percentile(head, 0.025), Percentile(head, 0.975)}
	wantC := Interval{Percentile(conf, 0.025), Percentile(conf, 0.975)}
	if res.Bootstrap.Clusters != 20 || math.Abs(res.OracleHeadroomCI.Lo-wantH.Lo) > 1e-9 || math.Abs(res.OracleHeadroomCI.Hi-wantH.Hi) > 1e-9 ||
		math.Abs(res.VisualConfusionRateCI.Lo-wantC.Lo) > 1e-9 || math.Abs(res.VisualConfusionRateCI.Hi-wantC.Hi) > 1e-9 {
		t.Errorf("%d clusters, intervals %+v %+v, want %+v %+v", res.Bootstrap.Clusters, res.OracleHeadroomCI, res.VisualConfusionRateCI, wantH, wantC)
	}
}
