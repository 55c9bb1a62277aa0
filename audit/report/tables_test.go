package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/record"
)

// tableFitJS finds, every <details> opened, each table or chart wider than the content box of the
// section holding it (a table that would scroll on screen, or lose its last columns on paper).
const tableFitJS = `<script>
(function () {
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  var out = {};
  document.querySelectorAll('[data-page]').forEach(function (p) { out[p.getAttribute('data-page')] = {tables: 0, over: []}; });
  document.querySelectorAll('table, svg').forEach(function (t) {
    var page = t.closest('[data-page]').getAttribute('data-page'), box = t.closest('section') || t.closest('main') || t.parentElement;
    var cs = getComputedStyle(box), r = box.getBoundingClientRect();
    var right = r.right - parseFloat(cs.paddingRight) - parseFloat(cs.borderRightWidth), w = t.getBoundingClientRect();
    if (t.tagName === 'TABLE') out[page].tables++;
    if (w.right > right + 0.5) {
      var h = box.querySelector('h2');
      out[page].over.push((h ? h.textContent : t.tagName) + ': ' + Math.round(w.right - right) + ' px over');
    }
  });
  var pre = document.createElement('pre');
  pre.id = 'overlap-result';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`

// TestReportTablesFit renders reports in headless Chromium on a 1280 px wide window and, with the
// stylesheet's print rules applied, on an A4 page's printable width (718 px: 210 mm less Chromium's
// default margins): no table or chart may be wider than its section (a wide table used to scroll
// on screen and lose its last columns in print). The pages: a single model's report of a 17-config
// sweep, a three-model report (its 15-column side-by-side table and the protocol table), and the
// example. A control page with a wide table of unbreakable cells must be found overflowing.
func TestReportTablesFit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the browser renders")
	}
	opt := audit.DefaultOptions()
	opt.Resamples = 50
	pages := map[string][]byte{"control": []byte(`<body><main><section><table><tr><td style="white-space:nowrap">` +
		strings.Repeat("f32-lmms-eval-448x448-raw ", 60) + `</td></tr></table></section></main></body>`)}
	recs := sweepRecords("", []int{8, 16, 32, 64}, []string{"uniform", "lmms-eval"}, []string{"448x448"}, []string{"raw", "cached"}, 40)
	res, err := audit.Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	// With its item lists: 17 verdicts a row, and long questions.
	sets, err := audit.AllTrajectories(recs, audit.ModelsOptions{Options: opt})
	if err != nil {
		t.Fatal(err)
	}
	q := map[string]string{}
	for i := 0; i < 40; i++ {
		q[QuestionKey("", fmt.Sprintf("q%03d", i))] = strings.Repeat("How many of the red vehicles crossing the intersection turn left ", 3)
	}
	var b bytes.Buffer
	if err := HTML(&b, res, Options{Title: "17 configs", Sources: []string{"out/run-with-a-long-name/records.jsonl"}, Items: sets, Questions: q}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`<table class="items">`)) {
		t.Fatal("the 17-config page lists no items")
	}
	pages["17 configs"] = b.Bytes()
	var multi []record.Record
	for _, m := range []string{"qwen2.5-vl-7b-instruct", "internvl3-8b", "llava-next-video-7b"} {
		multi = append(multi, sweepRecords(m, []int{8, 16, 32, 64}, []string{"uniform", "lmms-eval"}, []string{"448x448"}, []string{"raw", "cached"}, 40)...)
	}
	mres, err := audit.AnalyzeModels(multi, audit.ModelsOptions{Options: opt})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := ModelsHTML(&b, mres, Options{Title: "three models"}); err != nil {
		t.Fatal(err)
	}
	pages["three models"] = b.Bytes()
	pages["example"] = demoHTML(t)
	printCSS := strings.Replace(css, "@media print{", "@media all{", 1)
	if printCSS == css {
		t.Fatal("the stylesheet has no print rules")
	}
	for _, c := range []struct {
		name  string
		style string
		width int
	}{{"screen 1280 px", css, 1280}, {"print, A4", printCSS, 718}} {
		got := map[string]struct {
			Tables int      `json:"tables"`
			Over   []string `json:"over"`
		}{}
		if err := json.Unmarshal(renderMeasured(t, pages, c.style, tableFitJS, c.width, ""), &got); err != nil {
			t.Fatal(err)
		}
		if ctl := got["control"]; ctl.Tables != 1 || len(ctl.Over) != 1 {
			t.Fatalf("%s: control: %d tables, overflows %v (want 1 and 1: the measurement can fail)", c.name, ctl.Tables, ctl.Over)
		}
		for name, g := range got {
			if name == "control" {
				continue
			}
			if g.Tables < 3 {
				t.Errorf("%s: %s: %d tables measured: not the page this test means", c.name, name, g.Tables)
			}
			for _, o := range g.Over {
				t.Errorf("%s: %s: %s", c.name, name, o)
			}
			t.Logf("%s: %s: %d tables, %d too wide", c.name, name, g.Tables, len(g.Over))
		}
	}
}
