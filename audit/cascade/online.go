package cascade

import (
	"fmt"
	"math"
	"sort"

	"github.com/framesweep/framesweep/record"
)

// Online summarises an online cascade run: each item's final answer, where items stopped, and
// what the answers cost (frames fed, distinct frames decoded, wall-clock).
type Online struct {
	Threshold float64 `json:"threshold"`
	Budgets   []int   `json:"budgets"`
	Items     int     `json:"items"`      // items with a final record
	Unfinish  int     `json:"unfinished"` // items still escalating (an interrupted run)
	Errors    int     `json:"errors"`     // items whose final record is an error (left out of accuracy)
	Accuracy  float64 `json:"accuracy"`   // points, final answers of the answered items
	// StoppedAt: per budget, the items that stopped there (confident, or the top budget).
	StoppedAt []Stop `json:"stopped_at"`
	// Means over the answered items: frames fed over every step asked, the distinct frames of the index
	// sets tried (METRICS.md's shared frame cost), and the wall-clock summed over the steps (each step's
	// input build, shared by the items asked at it, plus the item's answer).
	MeanFramesFed      float64 `json:"mean_frames_fed"`
	MeanFramesDistinct float64 `json:"mean_frames_distinct"`
	MeanWallS          float64 `json:"mean_wall_s"`
	// MeanLatencyS is the runtime's own answer time summed over the steps asked (comparable with a
	// fixed budget's latency_s; MeanWallS adds the input builds).
	MeanLatencyS float64 `json:"mean_latency_s"`
	// First is the ladder's first budget, asked of every item: a fixed budget on the same items.
	First *Budget `json:"first_budget,omitempty"`
}

// Stop is one budget's share of an online run's stops.
type Stop struct {
	Budget int    `json:"budget"`
	Config string `json:"config"`
	Items  int    `json:"items"`
}

// isOnline reports whether the records come from an online cascade.
func isOnline(recs []record.Record) bool {
	for i := range recs {
		if recs[i].Cascade != nil {
			return true
		}
	}
	return false
}

// SummarizeOnline summarises the online-cascade records among recs; nil when there are none. Records of one
// item must agree on the threshold and budgets.
func SummarizeOnline(recs []record.Record) (*Online, error) {
	if !isOnline(recs) {
		return nil, nil
	}
	oc, byItem, firstConfig, err := onlineItems(recs)
	if err != nil {
		return nil, err
	}
	stops := map[int]*Stop{}
	var correct, answered, firstN, firstOK int
	var fed, dist, wall, lat float64
	for _, it := range byItem {
		if it.firstOK != nil {
			firstN++
			if *it.firstOK {
				firstOK++
			}
		}
		if it.final == nil {
			oc.Unfinish++
			continue
		}
		oc.Items++
		f := it.final
		if f.Failed() || f.Correct == nil {
			oc.Errors++
			continue
		}
		answered++
		if *f.Correct {
			correct++
		}
		fed += float64(f.Cascade.FramesFed)
		dist += float64(f.Cascade.FramesDistinct)
		wall += it.wall
		lat += it.lat
		st := stops[f.Cascade.StoppedAt]
		if st == nil {
			st = &Stop{Budget: f.Cascade.StoppedAt, Config: f.Config}
			stops[f.Cascade.StoppedAt] = st
		}
		st.Items++
	}
	if answered > 0 {
		n := float64(answered)
		oc.Accuracy = 100 * float64(correct) / n
		oc.MeanFramesFed, oc.MeanFramesDistinct, oc.MeanWallS, oc.MeanLatencyS = fed/n, dist/n, round6(wall/n), round6(lat/n)
	}
	for _, s := range stops {
		oc.StoppedAt = append(oc.StoppedAt, *s)
	}
	sort.Slice(oc.StoppedAt, func(a, b int) bool { return oc.StoppedAt[a].Budget < oc.StoppedAt[b].Budget })
	if firstN > 0 {
		oc.First = &Budget{Config: firstConfig, Frames: oc.Budgets[0], Accuracy: 100 * float64(firstOK) / float64(firstN)}
	}
	return oc, nil
}

// onlineItem is one item of an online cascade run: its final record and its steps' sums.
type onlineItem struct {
	final   *record.Record
	wall    float64
	lat     float64
	steps   int
	firstOK *bool
}

// onlineItems gathers the run's records by item (every record must carry a cascade step, all of one
// threshold and ladder) and names the first budget's config.
func onlineItems(recs []record.Record) (*Online, map[string]*onlineItem, string, error) {
	byItem := map[string]*onlineItem{}
	var oc *Online
	firstConfig := ""
	for i := range recs {
		r := &recs[i]
		c := r.Cascade
		if c == nil {
			return nil, nil, "", record.Errorf(r.Source.Path, r.Source.Line, "cascade", record.ErrInvalid, "item %q config %q: a record without cascade step in an online cascade run", r.ItemID, r.Config)
		}
		if oc == nil {
			oc = &Online{Threshold: c.Threshold, Budgets: append([]int(nil), c.Budgets...)}
		} else if c.Threshold != oc.Threshold || fmt.Sprint(c.Budgets) != fmt.Sprint(oc.Budgets) {
			return nil, nil, "", record.Errorf(r.Source.Path, r.Source.Line, "cascade", record.ErrInvalid, "item %q: cascade %v at %v, other records %v at %v", r.ItemID, c.Budgets, c.Threshold, oc.Budgets, oc.Threshold)
		}
		it := byItem[r.ItemID]
		if it == nil {
			it = &onlineItem{}
			byItem[r.ItemID] = it
		}
		it.steps++
		it.wall += c.StepWallS
		if r.LatencyS != nil {
			it.lat += *r.LatencyS
		}
		if c.Step == 1 && r.Correct != nil {
			firstConfig = r.Config
			v := *r.Correct
			it.firstOK = &v
		}
		if c.Final {
			it.final = r
		}
	}
	return oc, byItem, firstConfig, nil
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// Stops replays the offline cascade of METRICS.md at threshold tau on full-sweep records:
// for every item that has a record at each of the configs (the ladder, lowest budget first), the
// config its answer comes from — the first whose confidence is ≥ tau, else the last. An online run at
// the same threshold must stop every item at the same config.
func Stops(recs []record.Record, ladder []string, tau float64) (map[string]string, error) {
	cell := map[string]map[string]*record.Record{}
	for i := range recs {
		r := &recs[i]
		if r.Failed() {
			continue
		}
		if cell[r.ItemID] == nil {
			cell[r.ItemID] = map[string]*record.Record{}
		}
		cell[r.ItemID][r.Config] = r
	}
	out := map[string]string{}
	for id, byConfig := range cell {
		stop := ""
		for k, c := range ladder {
			r := byConfig[c]
			if r == nil {
				stop = ""
				break
			}
			conf := 0.0 // no option probabilities: never confident (the online cascade escalates too)
			if r.Confidence != nil {
				conf = *r.Confidence
			}
			if stop == "" && (conf >= tau || k == len(ladder)-1) {
				stop = c
			}
		}
		if stop != "" {
			out[id] = stop
		}
	}
	if len(out) == 0 {
		return nil, record.Errorf("", 0, "cascade", record.ErrEmpty, "no item has a record at every config of %v", ladder)
	}
	return out, nil
}
