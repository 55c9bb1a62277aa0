package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

func demoResult(t testing.TB) *audit.Result {
	opt := audit.DefaultOptions()
	opt.Resamples = 200
	opt.Cascade.Folds = 3
	res, err := audit.Analyze(synth.Records(400, 3), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestHTMLSelfContainedAndEqualToJSON(t *testing.T) {
	res := demoResult(t)
	var buf bytes.Buffer
	if err := HTML(&buf, res, Options{Title: "Demo audit", Sources: []string{"records.jsonl"}}); err != nil {
		t.Fatal(err)
	}
	h := buf.String()
	for _, bad := range []string{"<script", "<link", "src=", "@import", "url(http", "https://"} {
		if strings.Contains(h, bad) {
			t.Errorf("report contains %q: not self-contained", bad)
		}
	}
	if n := strings.Count(h, "http://"); n != strings.Count(h, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Errorf("report references http:// beyond the SVG namespace")
	}
	if c := strings.Count(h, "<svg"); c < 5 {
		t.Errorf("%d SVG charts, want ≥ 5 (accuracy, flow, heatmap, oracle, cascade)", c)
	}
	// The numbers shown are the JSON's, rounded.
	want := []string{Plus(res.OracleHeadroom), CI(res.OracleHeadroomCI), Pct(res.VisualConfusionRate), Pct(res.TextOverwriteRate),
		F1(res.Cascade.Selected.Accuracy), Pct(res.Cascade.SharedCostSaving)}
	for _, c := range res.MCConfigs {
		want = append(want, F1(res.Accuracy[c]))
	}
	for cat, m := range res.Categories {
		want = append(want, esc(cat), P(m.OracleHeadroom))
	}
	for _, p := range res.Pairs[:3] {
		want = append(want, PValue(p.McNemarP))
	}
	for _, w := range want {
		if !strings.Contains(h, w) {
			t.Errorf("report lacks %q", w)
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, res, Options{Title: "Demo audit"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"# Demo audit", "| oracle headroom | " + P(res.OracleHeadroom), "## Per category", "## Confidence cascade", "## Iso-compute groups", "## Raw vs cached"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
}

func TestHTMLEscapesNames(t *testing.T) {
	recs := []record.Record{}
	for i, ok := range []bool{true, false, true} {
		for _, c := range []string{`<b>x</b>`, `f"16`} {
			v := ok == (c == `f"16`)
			recs = append(recs, record.Record{ItemID: string(rune('a' + i)), Config: c, Correct: &v, Category: `<script>alert(1)</script>`})
		}
	}
	res, err := audit.Analyze(recs, audit.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<script>") || strings.Contains(buf.String(), "<b>x</b>") {
		t.Error("config or category names reach the HTML unescaped")
	}
	// Markdown: a "|" or a line break in a name must not split a table row.
	for i := range recs {
		recs[i].Config = strings.NewReplacer("<b>", "a|b\n", `f"16`, "c\r\nd").Replace(recs[i].Config)
	}
	if res, err = audit.Analyze(recs, audit.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "|") && (!strings.HasSuffix(line, "|") || strings.Count(line, "|")-strings.Count(line, `\|`) < 2) {
			t.Errorf("broken table row %q", line)
		}
	}
	if !strings.Contains(md.String(), `a\|b x\</b\>`) || !strings.Contains(md.String(), "c d") {
		t.Errorf("names not kept in their cells:\n%s", md.String())
	}
}

// TestHTMLInChromium renders the report in headless Chromium: the screenshot must not be blank and the
// DOM must carry the title.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the browser render")
	}
	bin := "/usr/bin/chromium"
	if _, err := os.Stat(bin); err != nil {
		bin = testenv.Need(t, "chromium")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := HTML(&buf, demoResult(t), Options{Title: "Chromium render check"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	run := func(extra ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--hide-scrollbars", "--user-data-dir=" + t.TempDir()}, extra...)
		args = append(args, "file://"+page)
		out, err := exec.CommandContext(ctx, bin, args...).Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", extra, err)
		}
		return out
	}
	run("--screenshot="+shot, "--window-size=1280,2400")
	if dst := os.Getenv("FRAMESWEEP_REPORT_SHOT"); dst != "" {
		b, _ := os.ReadFile(shot)
		_ = os.WriteFile(dst, b, 0o644)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	var n, sum, sumSq float64
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 3 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 3 {
			r, g, b, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 257
			n++
			sum += l
			sumSq += l * l
		}
	}
	mean := sum / n
	if variance := sumSq/n - mean*mean; variance < 100 {
		t.Errorf("screenshot looks blank: luminance variance %.1f", variance)
	}
	dom := string(run("--dump-dom"))
	if !strings.Contains(dom, "<title>Chromium render check</title>") || !strings.Contains(dom, "Oracle vs best fixed") {
		t.Errorf("rendered DOM lacks the title or sections (%d bytes)", len(dom))
	}
}

func TestSavingSign(t *testing.T) {
	pos, neg := 31.74, -4.0
	for _, c := range []struct {
		v    *float64
		want string
	}{{&pos, "−31.7%"}, {&neg, "+4.0%"}, {nil, "–"}} {
		if got := Saving(c.v); got != c.want {
			t.Errorf("Saving(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// Imported records carry their harness's own aggregate: both reports show it beside the item-level
// accuracy of the same records and the paired accuracy, as `--json` holds them.
func TestReportsShowHarnessNumbers(t *testing.T) {
	var recs []record.Record
	for k, cfg := range []string{"f32", "f64"} {
		for i := 0; i < 4; i++ {
			ok := i < 2+k
			h := &record.Harness{Metric: "lmms-eval mlvu_dev mlvu_percetion_score (M-avg over 7 task types)", Kind: record.HarnessMacro, Value: 42.97 + float64(k), Counted: 4}
			if cfg == "f64" && i == 3 {
				h = &record.Harness{Metric: h.Metric, Kind: h.Kind, Value: h.Value, Counted: 3, LeftOut: 1, Skip: true}
			}
			if cfg == "f64" {
				h.Counted, h.LeftOut = 3, 1
			}
			recs = append(recs, record.Record{ItemID: string(rune('a' + i)), Config: cfg, Correct: &ok, Harness: h,
				ConfigMeta: &record.ConfigMeta{Frames: &[]int{32, 64}[k]}, Category: "count"})
		}
	}
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	res, err := audit.Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	var h, md bytes.Buffer
	if err := HTML(&h, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"own numbers", "lmms-eval mlvu_dev mlvu_percetion_score (M-avg over 7 task types)", "42.97", "43.97", "50.00", "75.00"} {
		if !strings.Contains(md.String(), mdEsc(w)) || !strings.Contains(h.String(), esc(w)) {
			t.Errorf("a report lacks %q", w)
		}
	}
	// f64: 3 counted, 1 left out, item level 75 over all 4 records.
	if !strings.Contains(md.String(), `| f64 | lmms-eval mlvu\_dev mlvu\_percetion\_score (M-avg over 7 task types) | 43.97 | 3 | 1 | 75.00 | 75.00 | 0 |`) {
		t.Errorf("markdown row: %s", md.String())
	}
}

// TestReportsShowOnlineCascade: an online cascade run's section in both reports.
func TestReportsShowOnlineCascade(t *testing.T) {
	var recs []record.Record
	for i := 0; i < 4; i++ {
		ok := i%2 == 0
		conf := 0.9
		final := i < 2
		r := record.Record{ItemID: string(rune('a' + i)), Config: "f2", Correct: &ok, Confidence: &conf,
			ConfigMeta: &record.ConfigMeta{Frames: &[]int{2}[0]},
			Cascade:    &record.CascadeStep{Threshold: 0.7, Budgets: []int{2, 4}, Step: 1, Final: final, FramesFed: 2, FramesDistinct: 2}}
		if final {
			r.Cascade.StoppedAt = 2
		}
		recs = append(recs, r)
		if !final {
			recs = append(recs, record.Record{ItemID: r.ItemID, Config: "f4", Correct: &ok, Confidence: &conf,
				ConfigMeta: &record.ConfigMeta{Frames: &[]int{4}[0]},
				Cascade:    &record.CascadeStep{Threshold: 0.7, Budgets: []int{2, 4}, Step: 2, Final: true, StoppedAt: 4, FramesFed: 6, FramesDistinct: 4}})
		}
	}
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	res, err := audit.Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	var h, md bytes.Buffer
	if err := HTML(&h, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Online confidence cascade", "f4 (4 frames)", "3.0 distinct frames"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
	for _, w := range []string{"Online confidence cascade", "f4 (4 frames)", "<td>3.0</td>"} {
		if !strings.Contains(h.String(), esc(w)) && !strings.Contains(h.String(), w) {
			t.Errorf("html lacks %q", w)
		}
	}
}

// TestHTMLUnparsedWarns: a config whose answers named no option letter makes the report warn before
// anything else, show the unparsed share per config, and mark the cascade's saving.
func TestHTMLUnparsedWarns(t *testing.T) {
	recs := synth.Records(200, 3)
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	clean, err := audit.Analyze(recs, opt)
	if err != nil || clean.Cascade == nil || clean.Cascade.SharedCostSaving == nil {
		t.Fatalf("the synthetic records give no cascade saving: %v", err)
	}
	top := clean.Cascade.Budgets[len(clean.Cascade.Budgets)-1].Config
	n := 0
	for i := range recs {
		if recs[i].Config == top && recs[i].Correct != nil && !*recs[i].Correct {
			recs[i].Unparsed, recs[i].Prediction = true, ""
			n++
		}
	}
	res, err := audit.Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Unparsed.ByConfig[top] != n || n == 0 {
		t.Fatalf("unparsed %v, want %d in %s", res.Unparsed.ByConfig, n, top)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, res, Options{}); err != nil {
		t.Fatal(err)
	}
	h := buf.String()
	share := F1(res.Unparsed.Share[top])
	for _, want := range []string{"<h2>Unparsed answers</h2>", "<b>" + share + "</b>", P(res.Unparsed.AccuracyParsed[top])} {
		if !strings.Contains(h, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if res.Cascade != nil && res.Cascade.SharedCostSaving != nil && !strings.Contains(h, "over unparsed answers: see the warning") {
		t.Errorf("the cascade saving card does not say it is over unparsed answers")
	}
	if len(res.Warnings) > 0 {
		w := strings.Index(h, `<div class="warn">`)
		if w < 0 || w > strings.Index(h, "<section>") {
			t.Errorf("the warning is not shown before the sections")
		}
	} else if res.Unparsed.Share[top] >= audit.MostlyUnparsed {
		t.Errorf("no warning for %s at %.0f%% unparsed", top, res.Unparsed.Share[top])
	}
	var md bytes.Buffer
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Unparsed answers") {
		t.Errorf("markdown lacks the unparsed table")
	}
}

// TestUndefinedValuesShowNA: a value the audit leaves undefined (null in the JSON) shows as "n/a"
// where a sign or a unit decorates it, never "+–" or "–%".
func TestUndefinedValuesShowNA(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, &audit.Result{}, Options{}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	for _, bad := range []string{"+–", "–%", "+n/a", "n/a%"} {
		if strings.Contains(h, bad) {
			t.Errorf("the report shows %q", bad)
		}
	}
	if !strings.Contains(h, `<div class="k">Oracle headroom</div><div class="v">n/a</div>`) || !strings.Contains(h, `<div class="k">Visual confusion</div><div class="v">n/a</div>`) {
		t.Errorf("undefined headroom and confusion are not n/a")
	}
	v := 4.25
	if Pct(&v) != "4.2%" || Plus(&v) != "+4.2" || Pct(nil) != NA || Plus(nil) != NA {
		t.Errorf("Pct/Plus: %q %q %q %q", Pct(&v), Plus(&v), Pct(nil), Plus(nil))
	}
}

// TestOracleArrowAndNetLabels: with no headroom the oracle chart draws no arrow (its head would
// cover the oracle's value) and says so; with headroom the arrow ends before the value. The net under
// the flow bars counts items, as the bars do.
func TestOracleArrowAndNetLabels(t *testing.T) {
	frames := func(n int) *record.ConfigMeta { return &record.ConfigMeta{Frames: &n} }
	recs := func(flip bool) []record.Record {
		var out []record.Record
		for i := 0; i < 10; i++ {
			a, b := i < 5, i < 8 // b rescues items 5–7
			if flip {
				b = i >= 3 // b rescues 5–9 and harms 0–2
			}
			out = append(out, record.Record{ItemID: string(rune('a' + i)), Config: "f4", Correct: &a, ConfigMeta: frames(4)},
				record.Record{ItemID: string(rune('a' + i)), Config: "f8", Correct: &b, ConfigMeta: frames(8)})
		}
		return out
	}
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	same := []record.Record{}
	for _, r := range recs(false) {
		if r.Config == "f8" {
			r.Correct = new(bool)
			*r.Correct = true
			same = append(same, r, record.Record{ItemID: r.ItemID, Config: "f4", Correct: r.Correct, ConfigMeta: frames(4)})
		}
	}
	none, err := audit.Analyze(same, opt)
	if err != nil {
		t.Fatal(err)
	}
	if c := oracleChart(none); strings.Contains(c, "marker-end") || !strings.Contains(c, ">no headroom<") {
		t.Errorf("no headroom: %s", c)
	}
	some, err := audit.Analyze(recs(true), opt)
	if err != nil {
		t.Fatal(err)
	}
	c := oracleChart(some)
	if !strings.Contains(c, "marker-end") || !strings.Contains(c, ">headroom "+Plus(some.OracleHeadroom)+"<") {
		t.Errorf("headroom %v: %s", *some.OracleHeadroom, c)
	}
	if a := accuracyChart(some); !strings.Contains(a, ">net +2 items<") || strings.Contains(a, "net +20.0") {
		t.Errorf("the net under 5 rescued and 3 harmed items is not +2 items: %s", a)
	}
}
