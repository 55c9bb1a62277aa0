package audit

import (
	"sort"

	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

// ItemTags are what the audit derives for one item of one model over its multiple-choice grid
// (METRICS.md core table, per item): each rate of the audit is the share of items with the tag.
type ItemTags struct {
	Confused               bool `json:"confused"`
	ConfusedVisualOnly     bool `json:"confused_visual_only"`
	TextCorrect            bool `json:"text_correct"`
	TextOverwrite          bool `json:"text_overwrite"`
	TextOverwriteAllVisual bool `json:"text_overwrite_all_visual"`
	TerminalRegression     bool `json:"terminal_regression"`
	Unstable               bool `json:"unstable"`
	OracleCorrect          bool `json:"oracle_correct"`
}

// Trajectory is one item's answers across one model's configs and the tags derived from them.
type Trajectory struct {
	ItemID   string
	Category string
	Duration string
	Task     string
	// Correct holds the verdict of each multiple-choice config of the set (nil: no answered record),
	// Scores each open-ended config's score.
	Correct []*bool
	Scores  []*float64
	// Paired: the item has a verdict in every multiple-choice config, so it is one of the audit's
	// items and Tags, Rescued and Harmed are set.
	Paired  bool
	Tags    ItemTags
	Rescued []int // transitions (indices into TrajectorySet.Transitions) that rescued the item (0 → 1)
	Harmed  []int // transitions that harmed it (1 → 0)
	// OracleBest are the configs at which the item does best: the correct multiple-choice configs,
	// or the open-ended configs of its highest score.
	OracleBest []string
}

// TrajectorySet is every item's trajectory over one model's records.
type TrajectorySet struct {
	MC          []*dataset.Config // multiple-choice configs, display order
	OE          []*dataset.Config // open-ended configs, display order
	Transitions []Transition      // consecutive multiple-choice configs (From, To, Ordered; counts over paired items)
	Items       []Trajectory      // by item id, then task
	// Undefined names the tags (ItemTags' JSON keys) that are undefined for every item, and why: the
	// order tags (confused, confused_visual_only, terminal_regression) when some config's cost is
	// unknown. Their values in Tags are false and mean nothing.
	Undefined map[string]string
}

// orderTags are the item tags that need an order over the configs.
var orderTags = []string{"confused", "confused_visual_only", "terminal_regression"}

// Trajectories computes every item's trajectory and tags from one model's records exactly as
// Analyze counts them (error records left out; an online cascade's records at the configs every item
// was asked at).
func Trajectories(recs []record.Record, defaultPolicy string) (*TrajectorySet, error) {
	online, err := cascade.SummarizeOnline(recs)
	if err != nil {
		return nil, err
	}
	recs, _ = splitErrors(recs)
	if online != nil {
		recs = everyItemConfigs(recs)
	}
	d, err := dataset.Build(recs)
	if err != nil {
		return nil, err
	}
	ts := &TrajectorySet{Transitions: []Transition{}}
	var mc, oe []int
	for k, c := range d.Configs {
		if c.Kind == "multiple_choice" {
			mc = append(mc, k)
			ts.MC = append(ts.MC, c)
		} else {
			oe = append(oe, k)
			ts.OE = append(ts.OE, c)
		}
	}
	var v *mcView
	pos := map[int]int{} // item index → position in v.paired
	if len(mc) > 0 {
		v = &mcView{d: d, ks: mc, cfgs: ts.MC}
		v.paired, _ = pairItems(d, mc, v.cfgs)
		v.patterns(defaultPolicy)
		ts.Transitions = v.pt.transitions(v.pat)
		if why := v.pt.unordered; why != "" {
			ts.Undefined = map[string]string{}
			for _, k := range orderTags {
				ts.Undefined[k] = why
			}
		}
		for pi, i := range v.paired {
			pos[i] = pi
		}
	}
	ts.Items = make([]Trajectory, len(d.Items))
	for i := range d.Items {
		ts.Items[i] = trajectoryOf(d, v, ts, mc, oe, i, pos)
	}
	return ts, nil
}

// trajectoryOf is item i's trajectory; pos maps paired items to their place in v.
func trajectoryOf(d *dataset.Dataset, v *mcView, ts *TrajectorySet, mc, oe []int, i int, pos map[int]int) Trajectory {
	t := Trajectory{ItemID: d.Items[i], Task: d.Tasks[i], Correct: make([]*bool, len(mc)), Scores: make([]*float64, len(oe)), OracleBest: []string{}}
	all := append(append([]int{}, mc...), oe...)
	t.Category, t.Duration = itemAttr(d, i, all)
	for j, k := range mc {
		if r := d.Cell(i, k); r != nil {
			t.Correct[j] = r.Correct
			if *r.Correct {
				t.OracleBest = append(t.OracleBest, d.Configs[k].ID)
			}
		}
	}
	best := -1.0
	for j, k := range oe {
		if r := d.Cell(i, k); r != nil {
			t.Scores[j] = r.Score
			best = max(best, *r.Score)
		}
	}
	for j, k := range oe {
		if s := t.Scores[j]; s != nil && *s == best {
			t.OracleBest = append(t.OracleBest, d.Configs[k].ID)
		}
	}
	pi, ok := pos[i]
	if !ok {
		return t
	}
	t.Paired = true
	p, pt := v.pat[pi], v.pt
	t.Tags = ItemTags{Confused: pt.conf[p], ConfusedVisualOnly: pt.confVis[p], TextCorrect: pt.textOK[p], TextOverwrite: pt.textOver[p],
		TextOverwriteAllVisual: pt.textAllVis[p], TerminalRegression: pt.terminal[p], Unstable: pt.unstable[p], OracleCorrect: pt.oracle[p]}
	t.Rescued, t.Harmed = []int{}, []int{}
	for j := 0; j+1 < len(mc) && len(ts.Transitions) > 0; j++ {
		a, b := v.correct(pi, j), v.correct(pi, j+1)
		if !a && b {
			t.Rescued = append(t.Rescued, j)
		} else if a && !b {
			t.Harmed = append(t.Harmed, j)
		}
	}
	return t
}

// Key is the item's identity (task, id).
func (t *Trajectory) Key() dataset.ItemKey { return dataset.ItemKey{Task: t.Task, ID: t.ItemID} }

// ModelTrajectories are one model's trajectories as its audit counts them, over one task's grid when
// the records are of several tasks (Task names it; "" otherwise).
type ModelTrajectories struct {
	Model string
	Task  string
	Set   *TrajectorySet
}

// AllTrajectories returns every model's trajectories as the audit of the records counts them: with
// several models over the matched grid and matched items (AnalyzeModels), with one model over its
// records less the configs beyond its ceiling (AnalyzeAll); records of several tasks per task, over
// each task's own grid (tasks.go), tasks in TaskNames order.
func AllTrajectories(recs []record.Record, opt ModelsOptions) ([]ModelTrajectories, error) {
	recs, err := selectTask(recs, opt.Task)
	if err != nil {
		return nil, err
	}
	tasks := TaskNames(recs)
	if len(tasks) < 2 {
		return gridTrajectories(recs, opt, "")
	}
	per, _ := byTask(recs)
	var out []ModelTrajectories
	for _, t := range tasks {
		sets, err := gridTrajectories(per[t], opt, t)
		if err != nil {
			return nil, err
		}
		out = append(out, sets...)
	}
	return out, nil
}

// gridTrajectories are the trajectories of records on one grid (one task's, or all of them).
func gridTrajectories(recs []record.Record, opt ModelsOptions, task string) ([]ModelTrajectories, error) {
	ms, err := SplitModels(recs)
	if err != nil {
		return nil, err
	}
	sets := map[string][]record.Record{}
	if len(ms) == 1 {
		sets[ms[0].Name] = ms[0].Records
		if c, ok := opt.Ceilings[ms[0].Name]; ok {
			if sets[ms[0].Name], _, err = DropOverCeiling(ms[0].Records, c); err != nil {
				return nil, err
			}
		}
	} else if _, sets, err = matchGrid(ms, opt.Ceilings, nil); err != nil {
		return nil, err
	}
	out := make([]ModelTrajectories, len(ms))
	for i, m := range ms {
		out[i].Model, out[i].Task = m.Name, task
		if len(dataset.Answered(sets[m.Name])) == 0 {
			out[i].Set = &TrajectorySet{Transitions: []Transition{}}
			continue
		}
		if out[i].Set, err = Trajectories(sets[m.Name], opt.DefaultPolicy); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DropOverCeiling leaves out the records of the configs with more frames than ceiling (a
// one-model audit given --ceiling) and names those configs.
func DropOverCeiling(recs []record.Record, ceiling int) ([]record.Record, []string, error) {
	gc, err := gridConfigs(ModelRecords{Records: recs})
	if err != nil {
		return nil, nil, err
	}
	over := map[string]bool{}
	var names []string
	for id, g := range gc {
		if g.c.Frames != nil && *g.c.Frames > ceiling {
			over[id] = true
			names = append(names, id)
		}
	}
	if len(over) == 0 {
		return recs, nil, nil
	}
	kept := make([]record.Record, 0, len(recs))
	for i := range recs {
		if !over[recs[i].Config] {
			kept = append(kept, recs[i])
		}
	}
	sort.Strings(names)
	return kept, names, nil
}
