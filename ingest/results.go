package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/framesweep/framesweep/ingest/pyval"
	"github.com/framesweep/framesweep/record"
)

// The harnesses write their own numbers beside the per-item logs: lmms-eval a `{date_id}_results.json`
// next to each `{date_id}_samples_{task}.jsonl` (lmms_eval/loggers/evaluation_tracker.py), VLMEvalKit a
// `{model}_{dataset}_rating.json` next to the `_score` file (get_intermediate_file_path in its
// evaluate). An import checks its aggregate against that number.

// Report is the outcome of one such check.
type Report struct {
	Path     string
	Message  string // one line
	Mismatch bool   // the harness's file says something else than the records: warn
}

// ReportPaths lists the files, beside an imported one, where its harness stored its own numbers, most
// specific first (they may not exist). format is "lmms-eval" or "vlmevalkit".
func ReportPaths(format, path string) []string {
	dir, base := filepath.Dir(path), filepath.Base(path)
	switch format {
	case "lmms-eval":
		var out []string
		if i := strings.Index(base, "_samples_"); i > 0 {
			out = append(out, filepath.Join(dir, base[:i]+"_results.json"))
		}
		return append(out, filepath.Join(dir, "results.json"))
	case "vlmevalkit":
		return []string{filepath.Join(dir, vlmStem(path)+"_rating.json")}
	}
	return nil
}

// FindReport returns the first existing file of ReportPaths and its contents (bounded like an import).
func FindReport(format, path string) (string, []byte, error) {
	for _, p := range ReportPaths(format, path) {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		b, err := readAll(f, p)
		f.Close()
		if err != nil {
			return p, nil, err
		}
		return p, b, nil
	}
	return "", nil, nil
}

// pointsTol is how far (in points) two renderings of one harness number may differ: the harnesses
// round to 5 decimals of a fraction at most, and sum float terms in their own order.
const pointsTol = 1e-4

// CheckReport compares an import with its harness's own file. format is "lmms-eval" or "vlmevalkit";
// metricHint names the results key when the verdicts were mapped with --correct-from (its first path
// element), so the mapped micro accuracy can be set against it.
func CheckReport(format, reportPath string, data []byte, res *Result, metricHint string) (*Report, error) {
	rep, err := checkReport(format, reportPath, data, res, metricHint)
	if rep != nil {
		rep.Message = oneLine.Replace(rep.Message) // values from the file may hold line breaks
	}
	return rep, err
}

var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`)

func checkReport(format, reportPath string, data []byte, res *Result, metricHint string) (*Report, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, record.Errorf(reportPath, 0, "check", record.ErrSyntax, "not JSON: %v", err)
	}
	rep := &Report{Path: reportPath}
	top, _ := doc.(map[string]any)
	switch format {
	case "lmms-eval":
		checkLmmsEval(rep, top, res, metricHint)
		return rep, nil
	case "vlmevalkit":
		checkVLMEvalKit(rep, top, res)
		return rep, nil
	}
	return nil, record.Errorf(reportPath, 0, "check", ErrBadArgs, "unknown format %q", format)
}

// checkLmmsEval compares with lmms-eval's results file: results[task]["<metric>,none"] (the
// aggregate's scale) and n-samples[task].effective.
func checkLmmsEval(rep *Report, top map[string]any, res *Result, metricHint string) {
	reportPath, a := rep.Path, res.Aggregate
	task := res.taskName()
	results, _ := top["results"].(map[string]any)
	tr, ok := results[task].(map[string]any)
	if !ok {
		rep.Message = fmt.Sprintf("%s holds no results for task %q", reportPath, task)
		return
	}
	if ns, ok := top["n-samples"].(map[string]any); ok {
		if n, ok := ns[task].(map[string]any); ok {
			if eff, ok := numFloat(n["effective"]); ok && int(eff) != res.Imported {
				rep.Mismatch = true
				rep.Message = fmt.Sprintf("%s counted %d samples of %s, the imported file holds %d: the samples file is not that run's", reportPath, int(eff), task, res.Imported)
				return
			}
		}
	}
	metric := metricHint
	if a != nil {
		metric = a.Metric
	}
	if metric == "" {
		rep.Message = fmt.Sprintf("%s: nothing to compare (no harness aggregate)", reportPath)
		return
	}
	v, ok := numFloat(tr[metric+",none"])
	if !ok {
		rep.Message = fmt.Sprintf("%s holds no number for %s %q", reportPath, task, metric+",none")
		return
	}
	if a == nil {
		// Mapped verdicts: the harness's rule is unknown, so only say whether their micro accuracy
		// matches the harness's number on either scale.
		m := res.microPoints()
		if math.Abs(v-m) <= pointsTol || math.Abs(100*v-m) <= pointsTol {
			rep.Message = fmt.Sprintf("%s agrees: %s %s,none = %s, the micro accuracy of the mapped verdicts", reportPath, task, metric, pyval.Str(v))
		} else {
			rep.Mismatch = true
			rep.Message = fmt.Sprintf("%s says %s %s,none = %s, the mapped verdicts' micro accuracy is %.4f points: the harness aggregates them differently, or the mapping is not its verdict", reportPath, task, metric, pyval.Str(v), m)
		}
		return
	}
	if math.Abs(v*a.Scale-a.Points()) <= pointsTol {
		rep.Message = fmt.Sprintf("%s agrees: %s %s,none = %s", reportPath, task, metric, pyval.Str(v))
	} else {
		rep.Mismatch = true
		rep.Message = fmt.Sprintf("%s says %s %s,none = %s, the imported records give %s (%s): the samples file is not that run's, or the harness's rule differs from %s",
			reportPath, task, metric, pyval.Str(v), pyval.Str(a.Raw), a.Label, a.Source)
	}
}

// checkVLMEvalKit compares with VLMEvalKit's rating file: Video-MME's overall and per-duration
// ratings, MVBench's overall [hits, total, "xx.xx%"].
func checkVLMEvalKit(rep *Report, top map[string]any, res *Result) {
	reportPath, a := rep.Path, res.Aggregate
	if a == nil {
		rep.Message = fmt.Sprintf("%s: nothing to compare (no rating rule for this dataset)", reportPath)
		return
	}
	overall := top["overall"]
	switch x := overall.(type) {
	case map[string]any: // Video-MME: {"short": {"overall": "0.70", …}, …, "overall": {"overall": "0.63", …}}
		got, _ := x["overall"].(string)
		want := fmt.Sprintf("%.2f", a.Raw)
		var bad, good []string
		if got != want {
			bad = append(bad, fmt.Sprintf("overall %q where the score column gives %s", got, want))
		}
		// The same rule per duration, from the records' durations and left-out marks.
		for _, d := range []string{"short", "medium", "long"} {
			dr, ok := top[d].(map[string]any)
			if !ok {
				continue
			}
			g, _ := dr["overall"].(string)
			w := durationRating(res.Records, d)
			if g == w {
				good = append(good, d+" "+g)
			} else {
				bad = append(bad, fmt.Sprintf("%s %q where the score column gives %s", d, g, w))
			}
		}
		if len(bad) == 0 {
			rep.Message = fmt.Sprintf("%s agrees: overall %s", reportPath, got)
			if len(good) > 0 {
				rep.Message += " (" + strings.Join(good, ", ") + ")"
			}
		} else {
			rep.Mismatch = true
			rep.Message = fmt.Sprintf("%s says %s (%s)", reportPath, strings.Join(bad, "; "), a.Label)
		}
	case []any: // MVBench: [hits, total, "xx.xx%"]
		want := fmt.Sprintf("%.2f%%", a.Raw)
		got := ""
		total := 0.0
		if len(x) == 3 {
			got, _ = x[2].(string)
			total, _ = numFloat(x[1])
		}
		if got == want && int(total) == a.Counted {
			rep.Message = fmt.Sprintf("%s agrees: overall %s of %d", reportPath, got, a.Counted)
		} else {
			rep.Mismatch = true
			rep.Message = fmt.Sprintf("%s says overall %s, the imported score column gives %s of %d rows", reportPath, pyval.Str(overall), want, a.Counted)
		}
	default:
		rep.Message = fmt.Sprintf("%s has no \"overall\" rating", reportPath)
	}
}

// microPoints is 100 · correct/records (mean score for open-ended records).
func microPoints(recs []record.Record) float64 {
	if len(recs) == 0 {
		return 0
	}
	s := 0.0
	for i := range recs {
		s += hit(&recs[i])
	}
	return 100 * s / float64(len(recs))
}

// durationRating is get_dimension_rating's per-duration overall from imported records: the mean of the
// counted (score ≥ 0) verdicts of that duration, "%.2f", "nan" when there is none.
func durationRating(recs []record.Record, d string) string {
	n, ok := 0, 0
	for i := range recs {
		r := &recs[i]
		if r.Duration != d || r.Harness == nil || r.Harness.Skip || r.Correct == nil {
			continue
		}
		n++
		if *r.Correct != r.Harness.Flipped {
			ok++
		}
	}
	if n == 0 {
		return "nan"
	}
	return fmt.Sprintf("%.2f", float64(ok)/float64(n))
}
