package ingest

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/ingest/pyval"
	"github.com/framesweep/framesweep/record"
)

// Per-task verdicts and aggregates of the lmms-eval video tasks. Each entry follows the task's
// process_results (the per-sample payload it writes into the samples file) and its aggregation function
// in the cited upstream file (EvolvingLMMs-Lab/lmms-eval). The verdict is the one the aggregation
// counts, computed from the payload with Python's comparison semantics (package pyval); the aggregate
// repeats the aggregation's arithmetic in its order, so it is the number lmms-eval printed and stored in
// results.json as "<metric>,none".

// lmmsItem is one sample as the harness scored it: what the aggregation reads (lmmsKept, held for
// every sample until the file is read) and what only the sample's record takes.
type lmmsItem struct {
	lmmsKept
	pred, gold, duration string
	unparsed             bool // the harness's parser found no option letter (record.Record.Unparsed)
}

// lmmsKept is what the aggregations read of a sample (72 bytes: a file of 10⁶ samples holds 10⁶).
type lmmsKept struct {
	correct              *bool
	score                *float64 // open-ended tasks (NExT-QA WUPS)
	category, questionID string
	skip                 bool // the harness's aggregate leaves this sample out
	payload              map[string]any
	v2                   *v2Group // Video-MME-v2 only
}

// v2Group places a Video-MME-v2 question: Video-MME-v2 scores groups of questions about one video.
type v2Group struct {
	group, groupType, groupStructure string
	order                            int
	orderOK                          bool
}

// aggPayload keeps of a sample's payload the keys an aggregation reads after the sample is converted
// (MLVU's duration_group and question_category, VideoMMMU's subdomain); nil when it has none.
func aggPayload(p map[string]any) map[string]any {
	var out map[string]any
	for _, k := range [...]string{"duration_group", "question_category", "subdomain"} {
		if v, ok := p[k]; ok {
			if out == nil {
				out = map[string]any{}
			}
			out[k] = v
		}
	}
	return out
}

// lmmsAgg is an aggregate as the harness computes it; Raw is on its own scale.
type lmmsAgg struct {
	label, kind      string
	raw, scale       float64
	counted, leftOut int
}

type lmmsTask struct {
	key, bench, source string
	metric             string                                                       // results.json metric name; "" = key
	fits               func(v any) bool                                             // the payload value has this task's shape
	item               func(v any, s map[string]any, task string) (lmmsItem, error) // one sample's verdict
	agg                func(task string, items []lmmsKept) (*lmmsAgg, string)       // nil with a reason when the harness reports none
	refuse             func(task string) string                                     // non-empty: the harness does not score this task
	targetIndex        func(task string) bool                                       // doc_to_target is a 0-based option index
}

func (t *lmmsTask) metricName() string {
	if t.metric != "" {
		return t.metric
	}
	return t.key
}

func hasKeys(keys ...string) func(any) bool {
	return func(v any) bool {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				return false
			}
		}
		return true
	}
}

// isVerdict: a bool, or a number that is exactly 0 or 1.
func isVerdict(v any) bool {
	_, ok := verdictOf(v)
	return ok
}

func verdictOf(v any) (bool, bool) {
	if b, ok := v.(bool); ok {
		return b, true
	}
	if _, _, _, ok := pyval.Num(v); ok {
		switch {
		case pyval.Eq(v, true):
			return true, true
		case pyval.Eq(v, false):
			return false, true
		}
	}
	return false, false
}

func always(string) bool { return true }
func never(string) bool  { return false }
func prefix(p string) func(string) bool {
	return func(task string) bool { return strings.HasPrefix(task, p) }
}

func boolPtr(b bool) *bool { return &b }

// micro is the fraction (or percent) of counted items the harness scored correct, computed as the
// harness does: 100*c/n when it multiplies first, (c/n)*100 when it divides first.
func micro(items []lmmsKept, percentFirst bool) (raw float64, counted, left int) {
	c := 0
	for _, it := range items {
		if it.skip {
			left++
			continue
		}
		counted++
		if it.correct != nil && *it.correct {
			c++
		}
	}
	if counted == 0 {
		return 0, 0, left
	}
	if percentFirst {
		return 100 * float64(c) / float64(counted), counted, left
	}
	return float64(c) / float64(counted), counted, left
}

func microAgg(label string, scale float64) func(string, []lmmsKept) (*lmmsAgg, string) {
	return func(_ string, items []lmmsKept) (*lmmsAgg, string) {
		raw, n, left := micro(items, scale == 1)
		if n == 0 {
			return nil, "every sample is left out of the aggregate"
		}
		return &lmmsAgg{label: label, kind: record.HarnessMicro, raw: raw, scale: scale, counted: n, leftOut: left}, ""
	}
}

// subsetAcc is MMMU-style instance-level accuracy (LongVideoBench, VideoMMMU): per subset acc = c/n,
// then Σ acc·n / Σ n over the subsets in first-seen order, rounded to 5 decimals like the harness.
func subsetAcc(items []lmmsKept, keys func(lmmsKept) []string) float64 {
	var order []string
	n, c := map[string]int{}, map[string]int{}
	for _, it := range items {
		if it.skip {
			continue
		}
		for _, k := range keys(it) {
			if _, ok := n[k]; !ok {
				order = append(order, k)
			}
			n[k]++
			if *it.correct {
				c[k]++
			}
		}
	}
	acc, num := 0.0, 0
	for _, k := range order {
		acc += float64(c[k]) / float64(n[k]) * float64(n[k])
		num += n[k]
	}
	if num == 0 {
		return 0
	}
	return pyval.Round(acc/float64(num), 5)
}

func str(v any) string { return scalarString(v) }

// numFloat is a JSON number (int or float, not bool) as a float64.
func numFloat(v any) (float64, bool) {
	if _, isBool := v.(bool); isBool {
		return 0, false
	}
	n, f, isInt, ok := pyval.Num(v)
	if ok && isInt {
		f, _ = new(big.Float).SetInt(n).Float64()
	}
	return f, ok
}

// mcItem builds the common multiple-choice item from a payload's prediction and gold fields. A
// prediction field that is there but empty or None is the harness's parser finding no letter: a
// wrong answer is then unparsed.
func mcItem(p map[string]any, predKey, goldKey string, ok bool) lmmsItem {
	pv, has := p[predKey]
	none := has && (pv == nil || strings.TrimSpace(scalarString(pv)) == "" && !isNumber(pv))
	return lmmsItem{lmmsKept: lmmsKept{correct: boolPtr(ok), payload: p}, pred: pyval.Str(pv), gold: pyval.Str(p[goldKey]), unparsed: none && !ok}
}

// isNumber reports whether v is a JSON number (an option index is a prediction).
func isNumber(v any) bool {
	_, isNum := v.(json.Number)
	_, isFloat := v.(float64)
	return isNum || isFloat
}

// letterOfIndex maps a 0-based option index ("1", 1) to its letter; "" when v is not one.
func letterOfIndex(v any) string {
	n, _, isInt, ok := pyval.Num(v)
	if !ok || !isInt {
		if s, isStr := v.(string); isStr {
			if i, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				n, isInt, ok = big.NewInt(int64(i)), true, true
			}
		}
	}
	if !ok || !isInt || n.Sign() < 0 || n.Cmp(big.NewInt(26)) >= 0 {
		return ""
	}
	return string(rune('A' + n.Int64()))
}

// MLVU's task-type lists (lmms_eval/tasks/mlvu/utils.py): mlvu_aggregate_results_dev / _test average the
// per-type accuracy over a fixed set, counting an absent type as 0; the older single `mlvu` task used
// the abbreviated TASK_TYPES.
var mlvuTypes = []struct {
	match func(string) bool
	name  string
	types []string
}{
	{prefix("mlvu_dev"), "mlvu_aggregate_results_dev", []string{"anomaly_reco", "count", "ego", "needle", "order", "plotQA", "topic_reasoning"}},
	{prefix("mlvu_test"), "mlvu_aggregate_results_test", []string{"anomaly_reco", "count", "ego", "needleQA", "order", "plotQA", "sportsQA", "topic_reasoning", "tutorialQA"}},
	{prefix("mlvu"), "mlvu_aggregate_results (TASK_TYPES)", []string{"TR", "AR", "VS", "NQA", "ER", "PQA", "SSC", "AO", "AC"}},
}

func mlvuAgg(task string, items []lmmsKept) (*lmmsAgg, string) {
	for _, m := range mlvuTypes {
		if !m.match(task) {
			continue
		}
		in := map[string]bool{}
		for _, t := range m.types {
			in[t] = true
		}
		answered, correct := map[string]int{}, map[string]int{}
		for _, it := range items {
			if !in[it.category] {
				return nil, fmt.Sprintf("task type %q is not one of %s's %d types, so the harness's aggregation would fail (KeyError); name the task with --task", it.category, m.name, len(m.types))
			}
			answered[it.category]++
			if *it.correct {
				correct[it.category]++
			}
		}
		// Per type the harness sums every type key that contains the type's name, then averages over
		// the whole list.
		sum := 0.0
		for _, cate := range m.types {
			c, a := 0, 0
			for _, k := range m.types {
				if strings.Contains(k, cate) {
					c += correct[k]
					a += answered[k]
				}
			}
			if a > 0 {
				sum += 100 * float64(c) / float64(a)
			}
		}
		return &lmmsAgg{label: fmt.Sprintf("M-avg over %d task types", len(m.types)), kind: record.HarnessMacro,
			raw: sum / float64(len(m.types)), scale: 1, counted: len(items)}, ""
	}
	return nil, fmt.Sprintf("task %q is neither mlvu_dev nor mlvu_test, whose task-type lists the M-avg needs; name it with --task", task)
}

// Video-MME-v2 (lmms_eval/tasks/videomme_v2/utils.py): questions are grouped by video; a relevance group
// scores its correct count quadratically, a logic group by the chain of leading correct answers.
func v2Agg(_ string, items []lmmsKept) (*lmmsAgg, string) {
	var order []string
	groups := map[string][]lmmsKept{}
	for _, it := range items {
		if it.v2 == nil || !it.v2.orderOK {
			return nil, fmt.Sprintf("question_id %q has no integer suffix, so the harness's aggregation would fail", it.questionID)
		}
		if _, ok := groups[it.v2.group]; !ok {
			order = append(order, it.v2.group)
		}
		groups[it.v2.group] = append(groups[it.v2.group], it)
	}
	total := 0.0
	for _, g := range order {
		its := groups[g]
		// Stable sort by the question_id suffix (Python's list.sort is stable).
		for i := 1; i < len(its); i++ {
			for j := i; j > 0 && its[j].v2.order < its[j-1].v2.order; j-- {
				its[j], its[j-1] = its[j-1], its[j]
			}
		}
		scores := make([]bool, len(its))
		sum := 0
		for i, it := range its {
			scores[i] = *it.correct
			sum += b2i(scores[i])
		}
		var s float64
		switch its[0].v2.groupType {
		case "relevance":
			s = quadratic16(sum)
		case "logic":
			var why string
			if s, why = v2Logic(scores, its[0].v2.groupStructure); why != "" {
				return nil, fmt.Sprintf("video %s: %s", g, why)
			}
		default:
			s = float64(sum) * 25.0
		}
		total += s
	}
	return &lmmsAgg{label: fmt.Sprintf("mean group score over %d videos", len(order)), kind: record.HarnessGrouped,
		raw: total / float64(len(order)), scale: 1, counted: len(items)}, ""
}

func quadratic16(n int) float64 {
	switch n {
	case 0:
		return 0
	case 1:
		return 100.0 / 16
	case 2:
		return 100.0 * 4 / 16
	case 3:
		return 100.0 * 9 / 16
	case 4:
		return 100.0
	}
	return 0
}

func v2Logic(scores []bool, structure string) (float64, string) {
	last := -1
	for i, v := range scores {
		if !v {
			break
		}
		last = i
	}
	at := func(i int) (bool, string) {
		if i >= len(scores) {
			return false, fmt.Sprintf("a logic group of %d questions, so the harness's aggregation would fail (IndexError)", len(scores))
		}
		return scores[i], ""
	}
	var m map[int]float64
	switch strings.ReplaceAll(structure, " ", "") {
	case "[1,2,3,4]":
		m = map[int]float64{0: 0, 1: 100.0 / 16, 2: 100.0 * 4 / 16, 3: 100.0 * 9 / 16, 4: 100.0}
	case "[1,[2,3],4]":
		m = map[int]float64{0: 0, 1: 100.0 / 12, 2: 100.0 * 4 / 12, 3: 100.0 * 7 / 12, 4: 100.0}
		if last == 0 {
			ok, why := at(2)
			if why != "" {
				return 0, why
			}
			if ok {
				last++
			}
		}
	case "[[1,2],3,4]":
		m = map[int]float64{0: 0, 1: 100.0 / 10, 2: 100.0 * 2 / 10, 3: 100.0 * 5 / 10, 4: 100.0}
		if last == -1 {
			ok, why := at(1)
			if why != "" {
				return 0, why
			}
			if ok {
				last++
			}
		}
	default:
		return 0, fmt.Sprintf("group_structure %q is not one the harness knows (it raises ValueError)", structure)
	}
	return m[last+1], ""
}

// NExT-QA open-ended (lmms_eval/tasks/nextqa/utils.py, nextqa_aggregate_results): WUPS@0 summed per
// question type in the fixed type order, over all questions, ×100.
func wupsAgg(_ string, items []lmmsKept) (*lmmsAgg, string) {
	types := []string{"CW", "CH", "TN", "TC", "DB", "DC", "DL", "DO"}
	sums := map[string]float64{}
	known := map[string]bool{}
	for _, t := range types {
		known[t] = true
	}
	for _, it := range items {
		if !known[it.category] {
			return nil, fmt.Sprintf("question type %q is not one of %v, so the harness's aggregation would fail (KeyError)", it.category, types)
		}
		sums[it.category] += *it.score
	}
	all := 0.0
	for _, t := range types {
		all += sums[t]
	}
	return &lmmsAgg{label: "WUPS@0 over all questions", kind: record.HarnessMicro, raw: all / float64(len(items)) * 100, scale: 1, counted: len(items)}, ""
}

// VideoMMMU (lmms_eval/tasks/videommmu/utils.py): eval_multi_choice for multiple-choice and perception
// questions, eval_open for the rest; "API Error" answers are left out of the aggregate.
func videommmuCorrect(p map[string]any) bool {
	gold, pred := p["answer"], p["parsed_pred"]
	qt, _ := p["question_type"].(string)
	if qt == "multiple-choice" || qt == "perception" {
		return evalMultiChoice(gold, pred)
	}
	return evalOpen(gold, pred)
}

func evalMultiChoice(gold, pred any) bool {
	if l, ok := gold.([]any); ok {
		for _, a := range l {
			if pyval.Eq(a, pred) {
				return true
			}
		}
		return false
	}
	return pyval.Eq(gold, pred)
}

// normalizeStr is VideoMMMU's normalize_str: a number becomes [round(float, 2)], a string its lower
// case (a single character padded both ways so it does not match inside words).
func normalizeStr(v any) []any {
	s, ok := v.(string)
	if !ok {
		return nil // the harness would raise on .strip()
	}
	s = strings.TrimSpace(s)
	if f, ok := pyval.Float(strings.ReplaceAll(s, ",", "")); ok {
		return []any{pyval.Round(f, 2)}
	}
	s = strings.ToLower(s)
	if len([]rune(s)) == 1 {
		return []any{" " + s, s + " "}
	}
	return []any{s}
}

func evalOpen(gold, pred any) bool {
	var norm []any
	if l, ok := gold.([]any); ok {
		for _, a := range l {
			norm = append(norm, normalizeStr(a)...)
		}
	} else {
		norm = normalizeStr(gold)
	}
	var preds []any
	switch x := pred.(type) {
	case []any:
		preds = x
	case string:
		for _, r := range x { // iterating a str yields its characters
			preds = append(preds, string(r))
		}
	}
	for _, p := range preds {
		if ps, ok := p.(string); ok {
			for _, n := range norm {
				if ns, ok := n.(string); ok && strings.Contains(ps, ns) {
					return true
				}
			}
			continue
		}
		for _, n := range norm {
			if pyval.Eq(p, n) {
				return true
			}
		}
	}
	return false
}

var lmmsTasks = []*lmmsTask{
	{
		key: "videomme_perception_score", bench: "Video-MME",
		source: "lmms_eval/tasks/videomme/utils.py (videomme_process_results, videomme_aggregate_results)",
		fits:   hasKeys("pred_answer", "answer"),
		item: func(v any, _ map[string]any, _ string) (lmmsItem, error) {
			p := v.(map[string]any)
			// The aggregation counts result["pred_answer"] == result["answer"].
			it := mcItem(p, "pred_answer", "answer", pyval.Eq(p["pred_answer"], p["answer"]))
			it.category, it.duration, it.questionID = str(p["task_category"]), str(p["duration"]), str(p["question_id"])
			return it, nil
		},
		agg:         microAgg("accuracy over all questions", 1),
		targetIndex: never,
	},
	{
		key: "videomme_v2_score", bench: "Video-MME-v2",
		source: "lmms_eval/tasks/videomme_v2/utils.py (videomme_v2_process_results, videomme_v2_aggregate_results)",
		fits:   hasKeys("video_id", "question_id", "group_type", "score"),
		item: func(v any, _ map[string]any, _ string) (lmmsItem, error) {
			p := v.(map[string]any)
			ok, isV := verdictOf(p["score"])
			if !isV {
				return lmmsItem{}, fmt.Errorf("videomme_v2_score.score %s is not 0 or 1", pyval.Str(p["score"]))
			}
			it := mcItem(p, "pred_answer", "answer", ok)
			it.questionID, it.category = str(p["question_id"]), str(p["group_type"])
			it.v2 = &v2Group{group: pyval.Str(p["video_id"]), groupType: str(p["group_type"]), groupStructure: str(p["group_structure"])}
			q := it.questionID
			if i := strings.LastIndex(q, "-"); i >= 0 {
				q = q[i+1:]
			}
			if n, err := strconv.Atoi(strings.TrimSpace(q)); err == nil {
				it.v2.order, it.v2.orderOK = n, true
			}
			return it, nil
		},
		agg:         v2Agg,
		targetIndex: never,
	},
	{
		key: "mlvu_percetion_score", bench: "MLVU", // upstream's spelling (mlvu_dev.yaml, mlvu_test.yaml)
		source: "lmms_eval/tasks/mlvu/utils.py (mlvu_process_results, mlvu_aggregate_results_dev/_test)",
		fits:   hasKeys("pred_answer", "answer"),
		item:   mlvuItem, agg: mlvuAgg, targetIndex: never,
	},
	{
		key: "mlvu_perception_score", bench: "MLVU", // the older mlvu.yaml task
		source: "lmms_eval/tasks/mlvu/utils.py (mlvu_process_results, mlvu_aggregate_results)",
		fits:   hasKeys("pred_answer", "answer"),
		item:   mlvuItem, agg: mlvuAgg, targetIndex: never,
	},
	{
		key: "lvb_acc", bench: "LongVideoBench",
		source: "lmms_eval/tasks/longvideobench/utils.py (longvideobench_process_results, longvideobench_aggregate_results)",
		fits:   hasKeys("answer", "parsed_pred"),
		item: func(v any, _ map[string]any, _ string) (lmmsItem, error) {
			p := v.(map[string]any)
			it := mcItem(p, "parsed_pred", "answer", evalMultiChoice(p["answer"], p["parsed_pred"]))
			it.category, it.duration, it.questionID = str(p["question_category"]), str(p["duration_group"]), str(p["id"])
			return it, nil
		},
		// Overall = instance-level accuracy over the duration groups and the question categories: every
		// sample sits in one of each, so it is the micro accuracy (up to float rounding), as a fraction.
		agg: func(_ string, items []lmmsKept) (*lmmsAgg, string) {
			raw := subsetAcc(items, func(it lmmsKept) []string {
				return []string{"d:" + pyval.Str(it.payload["duration_group"]), "c:" + pyval.Str(it.payload["question_category"])}
			})
			return &lmmsAgg{label: "instance-level accuracy over duration groups and categories", kind: record.HarnessMicro, raw: raw, scale: 100, counted: len(items)}, ""
		},
		targetIndex: always, // doc_to_target: correct_choice
	},
	{
		key: "mvbench_accuracy", bench: "MVBench",
		source: "lmms_eval/tasks/mvbench/utils.py (mvbench_process_results, mvbench_aggregate_results)",
		fits:   hasKeys("pred_answer", "gt_answer", "score"),
		item: func(v any, _ map[string]any, task string) (lmmsItem, error) {
			p := v.(map[string]any)
			ok, isV := verdictOf(p["score"])
			if !isV {
				return lmmsItem{}, fmt.Errorf("mvbench_accuracy.score %s is not 0 or 1", pyval.Str(p["score"]))
			}
			it := mcItem(p, "pred_answer", "gt_answer", ok)
			it.category = strings.TrimPrefix(task, "mvbench_")
			// The aggregation counts only results whose pred_answer != "".
			it.skip = pyval.Eq(p["pred_answer"], "")
			return it, nil
		},
		agg:         microAgg("accuracy over answered questions, empty predictions left out", 1),
		targetIndex: never,
	},
	{
		key: "score", bench: "EgoSchema",
		source: "lmms_eval/tasks/egoschema/utils.py (egoschema_process_results_generation, egoschema_aggregate_score)",
		fits:   hasKeys("pred", "ground_truth"),
		item: func(v any, _ map[string]any, _ string) (lmmsItem, error) {
			p := v.(map[string]any)
			return mcItem(p, "pred", "ground_truth", pyval.Str(p["ground_truth"]) == pyval.Str(p["pred"])), nil
		},
		agg: microAgg("accuracy", 100),
		refuse: func(task string) string {
			switch {
			case strings.HasPrefix(task, "egoschema_subset"):
				return ""
			case strings.HasPrefix(task, "egoschema"):
				return "lmms-eval does not score the full EgoSchema set: its tasks report only a submission file for the hidden answers (lmms_eval/tasks/egoschema/egoschema*.yaml); import an egoschema_subset log"
			}
			return "the `score` payload {pred, ground_truth} is EgoSchema's, which lmms-eval scores only for its egoschema_subset tasks (lmms_eval/tasks/egoschema/egoschema_subset.yaml); name the task with --task if this is one"
		},
		targetIndex: always, // egoschema_doc_to_answer: the option index
	},
	{
		key: "accuracy", bench: "PerceptionTest",
		source: "lmms_eval/tasks/perceptiontest/val/utils.py (perceptiontest_val_process_results_mc, perceptiontest_val_aggregate_accuracy)",
		fits:   hasKeys("pred_id", "answer_id"),
		item: func(v any, _ map[string]any, _ string) (lmmsItem, error) {
			p := v.(map[string]any)
			it := mcItem(p, "pred_id", "answer_id", pyval.Str(p["answer_id"]) == pyval.Str(p["pred_id"]))
			it.category, it.questionID = str(p["area"]), str(p["question_id"])
			return it, nil
		},
		agg:         microAgg("accuracy", 100),
		targetIndex: always, // perceptiontest_val_doc_to_answer: answer_id
	},
	{
		key: "exact_match", bench: "NExT-QA multiple choice",
		source: "lmms_eval/tasks/nextqa/utils.py (nextqa_mc_process_results) with aggregation mean (nextqa_mc_test.yaml; lmms_eval/api/metrics.py registers exact_match with mean)",
		fits:   isVerdict,
		item: func(v any, s map[string]any, _ string) (lmmsItem, error) {
			ok, _ := verdictOf(v)
			return lmmsItem{lmmsKept: lmmsKept{correct: boolPtr(ok)}, gold: str(s["target"])}, nil
		},
		agg:         microAgg("mean", 100),
		targetIndex: prefix("nextqa"), // nextqa_doc_to_target: the option index
	},
	{
		key: "WUPS", bench: "NExT-QA open-ended",
		source: "lmms_eval/tasks/nextqa/utils.py (nextqa_process_results, nextqa_aggregate_results)",
		fits:   hasKeys("0", "qtype"),
		item: func(v any, s map[string]any, _ string) (lmmsItem, error) {
			p := v.(map[string]any)
			f, ok := numFloat(p["0"])
			if !ok || !(f >= 0 && f <= 1) {
				return lmmsItem{}, fmt.Errorf("WUPS[\"0\"] %s is not a score in [0,1]", pyval.Str(p["0"]))
			}
			return lmmsItem{lmmsKept: lmmsKept{score: &f, category: str(p["qtype"]), payload: p}, gold: str(s["target"])}, nil
		},
		agg:         wupsAgg,
		targetIndex: never,
	},
	{
		key: "avg_accuracy", bench: "TempCompass",
		source: "lmms_eval/tasks/tempcompass/utils.py (tempcompass_process_results_*, tempcompass_aggregate_rating)",
		fits:   hasKeys("rating", "dim"),
		item: func(v any, _ map[string]any, _ string) (lmmsItem, error) {
			p := v.(map[string]any)
			// The aggregation counts rating == 1; a failed judge call (-1) counts as wrong.
			it := mcItem(p, "video-llm-prediction", "gt-answer", pyval.Eq(p["rating"], 1))
			it.category = str(p["dim"])
			return it, nil
		},
		agg: func(_ string, items []lmmsKept) (*lmmsAgg, string) {
			raw, n, _ := micro(items, false) // accuracy = yes/len, then × 100
			return &lmmsAgg{label: "accuracy", kind: record.HarnessMicro, raw: raw * 100, scale: 1, counted: n}, ""
		},
		targetIndex: never,
	},
	{
		key: "lvbench_score", bench: "LVBench",
		source: "lmms_eval/tasks/lvbench/utils.py (lvbench_process_results) with aggregation mean (lvbench.yaml)",
		fits:   isVerdict,
		item: func(v any, s map[string]any, _ string) (lmmsItem, error) {
			ok, _ := verdictOf(v)
			return lmmsItem{lmmsKept: lmmsKept{correct: boolPtr(ok)}, gold: str(s["target"])}, nil
		},
		agg:         microAgg("mean", 100),
		targetIndex: never,
	},
	{
		key: "mmmu_acc", bench: "VideoMMMU",
		source: "lmms_eval/tasks/videommmu/utils.py (videommmu_process_results, videommmu_aggregate_results)",
		fits:   hasKeys("answer", "parsed_pred", "question_type"),
		item: func(v any, _ map[string]any, _ string) (lmmsItem, error) {
			p := v.(map[string]any)
			it := mcItem(p, "parsed_pred", "answer", false)
			it.skip = pyval.Eq(p["parsed_pred"], "API Error")
			if !it.skip {
				it.correct = boolPtr(videommmuCorrect(p))
			}
			it.category, it.questionID = str(p["subdomain"]), str(p["id"])
			return it, nil
		},
		agg: func(_ string, items []lmmsKept) (*lmmsAgg, string) {
			_, n, left := micro(items, false)
			if n == 0 {
				return nil, "every answer is an API error, so the harness reports no accuracy"
			}
			raw := subsetAcc(items, func(it lmmsKept) []string { return []string{pyval.Str(it.payload["subdomain"])} })
			return &lmmsAgg{label: "instance-level accuracy over subdomains, API errors left out", kind: record.HarnessMicro, raw: raw, scale: 100, counted: n, leftOut: left}, ""
		},
		targetIndex: never,
	},
}

func mlvuItem(v any, _ map[string]any, _ string) (lmmsItem, error) {
	p := v.(map[string]any)
	// mlvu_aggregate_results_* count result["pred_answer"] == result["answer"]: a response "Fencing" to
	// an item whose answer is "F" is wrong, even when option F's text is "Fencing".
	it := mcItem(p, "pred_answer", "answer", pyval.Eq(p["pred_answer"], p["answer"]))
	it.category, it.questionID = str(p["task_type"]), str(p["question_id"])
	return it, nil
}

// findTask returns the known task whose payload the sample carries.
func findTask(s map[string]any) *lmmsTask {
	for _, t := range lmmsTasks {
		if v, ok := s[t.key]; ok && t.fits(v) {
			return t
		}
	}
	return nil
}

// standardKeys are what every lmms-eval sample carries besides the task's metric payloads.
var standardKeys = map[string]bool{"doc_id": true, "doc": true, "target": true, "arguments": true, "resps": true,
	"filtered_resps": true, "doc_hash": true, "prompt_hash": true, "target_hash": true, "input": true,
	"token_counts": true, "input_media": true, "filter": true, "metrics": true}
