package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// auditWithItems audits recs (one model) and renders both reports with the items' trajectories.
func auditWithItems(t *testing.T, recs []record.Record, q map[string]string) (*audit.Result, string, string) {
	t.Helper()
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	res, err := audit.Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := audit.AllTrajectories(recs, audit.ModelsOptions{Options: opt})
	if err != nil {
		t.Fatal(err)
	}
	ropt := Options{Items: sets, Questions: q}
	var h, md bytes.Buffer
	if err := HTML(&h, res, ropt); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, res, ropt); err != nil {
		t.Fatal(err)
	}
	return res, h.String(), md.String()
}

// tagged lists the ids of recs' items with a tag, from the audit's own trajectories.
func tagged(t *testing.T, recs []record.Record, tag func(audit.ItemTags) bool) []string {
	t.Helper()
	sets, err := audit.AllTrajectories(recs, audit.ModelsOptions{Options: audit.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range sets[0].Set.Items {
		if it.Paired && tag(it.Tags) {
			out = append(out, it.ItemID)
		}
	}
	return out
}

// TestReportsNameTheItems: with at most MaxListed confused items, the HTML and the Markdown name every
// one (and its question), as many as the rate counts; the text-overwritten and terminally regressed
// items too. With more, the first MaxListed are named and the rest counted.
func TestReportsNameTheItems(t *testing.T) {
	recs := synth.Records(40, 3)
	confused := tagged(t, recs, func(g audit.ItemTags) bool { return g.Confused })
	if len(confused) == 0 {
		t.Fatal("no confused item")
	}
	q := map[string]string{QuestionKey("", confused[0]): "How many red cars pass the camera before the truck arrives at the crossing?"}
	res, h, md := auditWithItems(t, recs, q)
	if n := len(confused); n == 0 || n > MaxListed || fmt.Sprintf("%.1f", 100*float64(n)/float64(res.Items)) != F1(*res.VisualConfusionRate) {
		t.Fatalf("%d confused items of %d, rate %v: not a test of a short list", n, res.Items, *res.VisualConfusionRate)
	}
	for _, id := range confused {
		if !strings.Contains(h, "<code>"+id+"</code>") || !strings.Contains(md, "| "+mdEsc(id)+" |") {
			t.Errorf("confused item %s is not named in the reports", id)
		}
	}
	if want := fmt.Sprintf("Confused items: %d items", len(confused)); !strings.Contains(h, want) || !strings.Contains(md, want) {
		t.Errorf("the reports lack %q", want)
	}
	for _, l := range []struct {
		name string
		tag  func(audit.ItemTags) bool
	}{{"Text-overwritten items", func(g audit.ItemTags) bool { return g.TextOverwrite }}, {"Terminal regressions", func(g audit.ItemTags) bool { return g.TerminalRegression }}} {
		ids := tagged(t, recs, l.tag)
		block := h[strings.Index(h, l.name):]
		if end := strings.Index(block[1:], "<h3>"); end > 0 {
			block = block[:end+1]
		}
		if got := len(regexp.MustCompile(`<tr><td class="l"><code>`).FindAllString(block, -1)); got != min(len(ids), MaxListed) || len(ids) == 0 {
			t.Errorf("%s: %d rows, %d items tagged", l.name, got, len(ids))
		}
		for _, id := range ids[:min(len(ids), MaxListed)] {
			if !strings.Contains(block, "<code>"+id+"</code>") {
				t.Errorf("%s: %s not named", l.name, id)
			}
		}
	}
	if !strings.Contains(h, "How many red cars pass the camera before the truck …") {
		t.Errorf("the question's first words are not shown")
	}

	recs = synth.Records(400, 3)
	_, h, md = auditWithItems(t, recs, nil)
	confused = tagged(t, recs, func(g audit.ItemTags) bool { return g.Confused })
	if len(confused) <= MaxListed {
		t.Fatalf("%d confused items: not a test of a long list", len(confused))
	}
	more := fmt.Sprintf("… and %d more", len(confused)-MaxListed)
	if !strings.Contains(h, more) || !strings.Contains(md, more) || !strings.Contains(h, "<code>"+confused[MaxListed-1]+"</code>") {
		t.Errorf("a long list does not show its first %d items and count the rest (%q)", MaxListed, more)
	}
}

// TestItemListsUndefined: where a metric is undefined (configs of unknown cost: no order) its list
// says so with the reason, never "0 items"; lists are left out when the trajectories are not the
// audit's items.
func TestItemListsUndefined(t *testing.T) {
	var recs []record.Record
	for i := 0; i < 6; i++ {
		for k, c := range []string{"alpha", "beta"} {
			ok := (i+k)%2 == 0
			recs = append(recs, record.Record{ItemID: fmt.Sprintf("q%d", i), Config: c, Correct: &ok})
		}
	}
	res, h, md := auditWithItems(t, recs, nil)
	if res.VisualConfusionRate != nil {
		t.Fatalf("confusion %v over configs of unknown cost", *res.VisualConfusionRate)
	}
	reason := undefinedReason(&res.Metrics, "visual_confusion_rate")
	for _, c := range []struct{ r, reason string }{{h, esc(reason)}, {md, mdEsc(reason)}} {
		if !strings.Contains(c.r, "Confused items: —") || !strings.Contains(c.r, "— undefined: "+c.reason) || strings.Contains(c.r, "Confused items: 0 items") {
			t.Errorf("an undefined confusion is not shown as undefined with the audit's reason %q", reason)
		}
	}
	other, _, _ := auditWithItems(t, synth.Records(20, 1), nil)
	sets, err := audit.AllTrajectories(recs, audit.ModelsOptions{Options: audit.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if itemSet(Options{Items: sets}, "", other) != nil {
		t.Error("the trajectories of other records were taken for the audit's items")
	}
}

// TestConfusedInKList: the multi-model reports list the items confused in some model, those confused
// in the most models first, as many per k as the cross-model counts say.
func TestConfusedInKList(t *testing.T) {
	var recs []record.Record
	for _, m := range []string{"m1", "m2", "m3"} {
		recs = append(recs, sweepRecords(m, []int{8, 16, 32}, []string{"uniform"}, []string{"448x448"}, []string{"raw"}, 30)...)
	}
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	mopt := audit.ModelsOptions{Options: opt}
	mres, err := audit.AnalyzeModels(recs, mopt)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := audit.AllTrajectories(recs, mopt)
	if err != nil {
		t.Fatal(err)
	}
	ropt := Options{Items: sets}
	var h, md bytes.Buffer
	if err := ModelsHTML(&h, mres, ropt); err != nil {
		t.Fatal(err)
	}
	if err := ModelsMarkdown(&md, mres, ropt); err != nil {
		t.Fatal(err)
	}
	l := confusedInKList(mres, ropt)
	if l == nil || l.undefined != "" {
		t.Fatalf("no cross-model list: %+v", l)
	}
	perK := map[int]int{}
	last := len(mres.Models)
	for _, r := range l.rows {
		if len(r.models) > last {
			t.Errorf("%s (in %d models) after an item in %d", r.id, len(r.models), last)
		}
		last = len(r.models)
		perK[len(r.models)]++
		if !strings.Contains(md.String(), "| "+r.id+" |") {
			t.Errorf("%s is not in the Markdown", r.id)
		}
	}
	for _, k := range mres.CrossModel.ConfusedInK {
		if k.K > 0 && perK[k.K] != k.Items {
			t.Errorf("confused in %d models: %d listed, the audit counts %d", k.K, perK[k.K], k.Items)
		}
	}
	if perK[1] == 0 || perK[2]+perK[3] == 0 {
		t.Fatalf("per k %v: not a test of the order", perK)
	}
	if !strings.Contains(h.String(), "The items confused across models") || !strings.Contains(h.String(), "the items behind its rates") {
		t.Error("the HTML lacks the cross-model list or the models' own lists")
	}
}
