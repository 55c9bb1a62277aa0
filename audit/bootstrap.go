package audit

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/framesweep/framesweep/internal/splitmix"
)

// The bootstrap's resampling unit (Options.Cluster; METRICS.md "Uncertainty").
const (
	// ClusterAuto resamples videos when the records name the items' videos and some video holds two
	// or more paired items (Video-MME asks three questions per video), else items.
	ClusterAuto = "auto"
	// ClusterItem resamples items.
	ClusterItem = "item"
	// ClusterVideo resamples videos: the records' video (provenance video_sha256, else video); an
	// item whose records name none is a cluster of its own.
	ClusterVideo = "video"
	// ClusterVideoID resamples videos named by the item id (opt-in): the id up to its last '-', per
	// task, as Video-MME numbers its questions NNN-k (question k of video NNN); an id without '-' is
	// a cluster of its own.
	ClusterVideoID = "video-id"
)

// Clusters are the values Options.Cluster takes ("" is ClusterAuto).
var Clusters = []string{ClusterAuto, ClusterItem, ClusterVideo, ClusterVideoID}

// BootstrapInfo records how the intervals were drawn.
type BootstrapInfo struct {
	Seed      uint64 `json:"seed"`
	Resamples int    `json:"resamples"`
	PRNG      string `json:"prng"`
	Interval  string `json:"interval"`
	// Cluster is the resampling unit: "item", or "video" (a cluster bootstrap: draw videos with
	// replacement, keep all their items); ClusterSource says where the videos came from ("records":
	// their video; "item id": ClusterVideoID) and Clusters how many the paired items make.
	Cluster       string `json:"cluster"`
	ClusterSource string `json:"cluster_source,omitempty"`
	Clusters      int    `json:"clusters,omitempty"`
}

// clusters gives every paired item its cluster (nil: each item its own, the item bootstrap) and says
// so in res.Bootstrap; ClusterVideo with no video named is an error.
func (v *mcView) clusters(mode string, info *BootstrapInfo) ([]int32, error) {
	info.Cluster = ClusterItem
	if mode == ClusterItem {
		return nil, nil
	}
	d, C := v.d, len(v.d.Configs)
	keys := make([]string, len(v.paired))
	named := 0
	for pi, i := range v.paired {
		switch mode {
		case ClusterVideoID:
			if j := strings.LastIndexByte(d.Items[i], '-'); j > 0 {
				keys[pi] = d.Tasks[i] + "\x00" + d.Items[i][:j]
				named++
			}
		default:
			for _, k := range v.ks {
				if j := d.Grid[i*C+k]; j >= 0 && d.Recs[j].VideoKey != "" {
					keys[pi] = d.Recs[j].VideoKey
					named++
					break
				}
			}
		}
		if keys[pi] == "" {
			keys[pi] = "\x01" + d.Key(i).String() // its own cluster
		}
	}
	ids := map[string]int32{}
	clus := make([]int32, len(keys))
	shared := false
	for pi, k := range keys {
		id, ok := ids[k]
		if !ok {
			id = int32(len(ids))
			ids[k] = id
		}
		shared = shared || ok
		clus[pi] = id
	}
	switch {
	case mode == ClusterVideo && named == 0 && len(v.paired) > 0:
		return nil, fmt.Errorf("--cluster video: no record names its video (imported records carry none; --cluster video-id takes Video-MME's NNN-k item ids as question k of video NNN)")
	case mode == ClusterAuto && !shared:
		return nil, nil
	}
	info.Cluster, info.Clusters, info.ClusterSource = ClusterVideo, len(ids), "records"
	if mode == ClusterVideoID {
		info.ClusterSource = "item id"
	}
	return clus, nil
}

// bootstrap draws resamples of the scope's items (with replacement) and returns the 95% percentile
// intervals of oracle_headroom and visual_confusion_rate. With clus (each item's cluster, parallel to
// pats) it draws the scope's clusters instead, each with all its items (a cluster bootstrap). Resamples
// run in parallel; each has its own documented stream (streamSeed), so the result does not depend on
// the number of workers. It needs one draw per unit (item or cluster) per resample and takes two per
// SplitMix64 output: (lo32 × n) >> 32, then (hi32 × n) >> 32.
func (pt *patternTable) bootstrap(pats, clus []int32, seed uint64, scope string, B int) (*Interval, *Interval) {
	units := clusterUnits(pats, clus)
	n := len(pats)
	if units != nil {
		n = len(units)
	}
	head := make([]float64, B)
	conf := make([]float64, B)
	workers := min(runtime.GOMAXPROCS(0), B)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			counts := make([]int, len(pt.keys))
			acc := make([]int, len(pt.cfgs))
			draw := func(i uint64) int {
				if units == nil {
					counts[pats[i]]++
					return 1
				}
				for _, p := range units[i] {
					counts[p]++
				}
				return len(units[i])
			}
			for b := w; b < B; b += workers {
				clear(counts)
				g := splitmix.Source{State: streamSeed(seed, scope, b)}
				// Two draws per 64-bit output: index = (half × n) >> 32, low half first (bootstrap's doc).
				n64 := uint64(n)
				items := 0
				j := 0
				for ; j+1 < n; j += 2 {
					x := g.Uint64()
					items += draw((x & 0xFFFFFFFF * n64) >> 32)
					items += draw((x >> 32 * n64) >> 32)
				}
				if j < n {
					items += draw((g.Uint64() & 0xFFFFFFFF * n64) >> 32)
				}
				head[b], conf[b] = pt.resampleStats(counts, acc, items)
			}
		}(w)
	}
	wg.Wait()
	h, c := sortedCopy(head), sortedCopy(conf)
	return &Interval{Percentile(h, 0.025), Percentile(h, 0.975)}, &Interval{Percentile(c, 0.025), Percentile(c, 0.975)}
}

// resampleStats is one resample's oracle headroom and confusion rate from its pattern counts over n
// items (acc is scratch).
func (pt *patternTable) resampleStats(counts, acc []int, n int) (float64, float64) {
	C := len(pt.cfgs)
	clear(acc)
	oracle, cf := 0, 0
	for p, cnt := range counts {
		if cnt == 0 {
			continue
		}
		for j := 0; j < C; j++ {
			acc[j] += cnt * int(pt.bits[p*C+j])
		}
		oracle += cnt * b2i(pt.oracle[p])
		cf += cnt * b2i(pt.conf[p])
	}
	best := 0
	for _, a := range acc {
		best = max(best, a)
	}
	return 100 * float64(oracle-best) / float64(n), 100 * float64(cf) / float64(n)
}

// clusterUnits groups a scope's items by cluster, clusters in order of their first item: each
// unit's pattern ids. nil when clus is (the item bootstrap).
func clusterUnits(pats, clus []int32) [][]int32 {
	if clus == nil {
		return nil
	}
	at := map[int32]int{}
	var units [][]int32
	for i, c := range clus {
		u, ok := at[c]
		if !ok {
			u = len(units)
			at[c] = u
			units = append(units, nil)
		}
		units[u] = append(units[u], pats[i])
	}
	return units
}

// fnv64a hashes a scope name (FNV-1a, 64 bit) so each bootstrap scope gets its own stream.
func fnv64a(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// streamSeed is the documented seed of resample b in a scope: seed XOR fnv64a(scope) XOR (b+1)·golden,
// passed once through SplitMix64 so neighbouring resamples are decorrelated.
func streamSeed(seed uint64, scope string, b int) uint64 {
	g := splitmix.Source{State: seed ^ fnv64a(scope) ^ (uint64(b+1) * 0x9E3779B97F4A7C15)}
	return g.Uint64()
}
