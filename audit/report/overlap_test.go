package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/record"
)

// overlapJS measures every <text> of every chart in the rendered page (all <details> opened first):
// each label's box is its getBBox() mapped through its screen transform (so rotated labels are
// rotated boxes), and two boxes overlap when no separating axis keeps them more than half a pixel
// apart. The result goes into <pre id="overlap-result"> for --dump-dom.
const overlapJS = `<script>
(function () {
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  function corners(el) {
    var b = el.getBBox(), m = el.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]].map(function (p) {
      return [m.a * p[0] + m.c * p[1] + m.e, m.b * p[0] + m.d * p[1] + m.f];
    });
  }
  function apart(a, b) {
    var polys = [a, b];
    for (var k = 0; k < 2; k++) {
      var poly = polys[k];
      for (var i = 0; i < 4; i++) {
        var p = poly[i], q = poly[(i + 1) % 4], nx = q[1] - p[1], ny = p[0] - q[0], len = Math.hypot(nx, ny);
        if (len === 0) continue;
        var amin = Infinity, amax = -Infinity, bmin = Infinity, bmax = -Infinity;
        a.forEach(function (v) { var d = (v[0] * nx + v[1] * ny) / len; amin = Math.min(amin, d); amax = Math.max(amax, d); });
        b.forEach(function (v) { var d = (v[0] * nx + v[1] * ny) / len; bmin = Math.min(bmin, d); bmax = Math.max(bmax, d); });
        if (amax - bmin <= 0.5 || bmax - amin <= 0.5) return true;
      }
    }
    return false;
  }
  function shown(t) {
    var c = t.cloneNode(true);
    c.querySelectorAll('title').forEach(function (x) { x.remove(); });
    return c.textContent.trim();
  }
  var out = {};
  document.querySelectorAll('svg').forEach(function (svg, si) {
    var page = svg.closest('[data-page]').getAttribute('data-page');
    var r = out[page] || (out[page] = {svgs: 0, labels: 0, cfg: 0, overlaps: []});
    r.svgs++;
    var texts = Array.prototype.filter.call(svg.querySelectorAll('text'), function (t) { return shown(t) !== '' && t.getBBox().width > 0; });
    var boxes = texts.map(corners);
    r.labels += texts.length;
    texts.forEach(function (t) { if (t.classList.contains('cfg')) r.cfg++; });
    for (var i = 0; i < texts.length; i++)
      for (var j = i + 1; j < texts.length; j++)
        if (!apart(boxes[i], boxes[j])) r.overlaps.push({svg: si, label: svg.getAttribute('aria-label'), a: shown(texts[i]), b: shown(texts[j])});
  });
  var pre = document.createElement('pre');
  pre.id = 'overlap-result';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`

type overlapResult struct {
	SVGs     int `json:"svgs"`
	Labels   int `json:"labels"`
	Cfg      int `json:"cfg"`
	Overlaps []struct {
		SVG   int    `json:"svg"`
		Label string `json:"label"`
		A     string `json:"a"`
		B     string `json:"b"`
	} `json:"overlaps"`
}

// renderOverlaps renders the pages in headless Chromium as one document (each report's body in a
// <div data-page=NAME>, the reports' stylesheet once: one browser start for all) with the flags of
// TestHTMLInChromium, and returns what overlapJS measured per page; shot, when set, also gets a
// screenshot of the document's top.
func renderOverlaps(t *testing.T, pages map[string][]byte, shot string) map[string]overlapResult {
	t.Helper()
	res := map[string]overlapResult{}
	if err := json.Unmarshal(renderMeasured(t, pages, css, overlapJS, 1280, shot), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// renderMeasured renders the pages in headless Chromium as one document (each report's body in a
// <div data-page=NAME>, style once: one browser start for all) at a window width, runs script (which
// leaves its JSON result in <pre id="overlap-result">) and returns that result; shot, when set, also
// gets a screenshot of the document's top.
func renderMeasured(t *testing.T, pages map[string][]byte, style, script string, width int, shot string) []byte {
	t.Helper()
	bin := "/usr/bin/chromium"
	if _, err := os.Stat(bin); err != nil {
		bin = testenv.Need(t, "chromium")
	}
	var doc bytes.Buffer
	doc.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><style>` + style + `</style></head><body>`)
	for _, name := range keysOf(pages) {
		page := pages[name]
		body := page[bytes.Index(page, []byte("<body>"))+len("<body>") : bytes.LastIndex(page, []byte("</body>"))]
		fmt.Fprintf(&doc, `<div data-page="%s">%s</div>`, name, body)
	}
	doc.WriteString(script + `</body></html>`)
	path := filepath.Join(t.TempDir(), "pages.html")
	if err := os.WriteFile(path, doc.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
		defer cancel()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--hide-scrollbars", "--user-data-dir=" + t.TempDir(), fmt.Sprintf("--window-size=%d,2400", width)}, extra...)
		out, err := exec.CommandContext(ctx, bin, append(args, "file://"+path)...).Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", extra, err)
		}
		return out
	}
	if shot != "" {
		run("--screenshot=" + shot)
	}
	m := regexp.MustCompile(`<pre id="overlap-result">([^<]*)</pre>`).FindSubmatch(run("--dump-dom"))
	if m == nil {
		t.Fatal("the page's measuring script left no result (did it run?)")
	}
	return bytes.ReplaceAll(m[1], []byte("&amp;"), []byte("&"))
}

// sweepRecords are the records of a real-looking sweep: text-only and every combination of frames,
// a sampling preset, a size and a pipeline, with the long ids a sweep gives them
// (`f32-lmms-eval-448x448-raw`). model names the model ("" for none); verdicts come from a hash.
func sweepRecords(model string, frames []int, presets, sizes, pipes []string, items int) []record.Record {
	var out []record.Record
	add := func(id string, meta *record.ConfigMeta, k int) {
		for i := 0; i < items; i++ {
			h := fnv.New32a()
			fmt.Fprintf(h, "%s/%s/%d", model, id, i)
			ok := int(h.Sum32()%100) < 30+k*3
			out = append(out, record.Record{ItemID: fmt.Sprintf("q%03d", i), Config: id, Model: model, Correct: &ok, ConfigMeta: meta})
		}
	}
	zero, yes := 0, true
	add("text-only", &record.ConfigMeta{Frames: &zero, TextOnly: &yes}, 0)
	k := 0
	for _, f := range frames {
		for _, pr := range presets {
			for _, sz := range sizes {
				for _, pp := range pipes {
					var w, h int
					fmt.Sscanf(sz, "%dx%d", &w, &h)
					ff := f
					meta := &record.ConfigMeta{Frames: &ff, Width: &w, Height: &h, Policy: "uniform", Pipeline: pp}
					if pr != "uniform" {
						meta.Preset = pr
					}
					k++
					add(fmt.Sprintf("f%d-%s-%s-%s", f, pr, sz, pp), meta, k%7)
				}
			}
		}
	}
	return out
}

// TestReportLabelsDoNotOverlap renders reports in headless Chromium and measures every chart's text:
// no two labels may overlap. The pages: a sweep grid with long config ids (17 configs: labels stacked
// by what varies), a grid of 49 (labels rotated), the example records, and a three-model audit (its
// per-model charts opened). A control page with two of the long ids side by side, as the charts drew
// them before, must be found overlapping: the measurement can fail.
func TestReportLabelsDoNotOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the browser renders")
	}
	// Two of a real sweep's ids side by side, drawn as the charts drew them before.
	control := []byte(`<body><svg viewBox="0 0 400 40" width="400" xmlns="http://www.w3.org/2000/svg" aria-label="control">` +
		`<text x="100" y="20" text-anchor="middle" class="cfg">f32-lmms-eval-448x448-raw</text>` +
		`<text x="200" y="20" text-anchor="middle" class="cfg">f2-uniform-64x48-cached</text></svg></body>`)
	opt := audit.DefaultOptions()
	opt.Resamples = 50
	pages := map[string][]byte{"control": control}
	for name, recs := range map[string][]record.Record{
		"17 configs": sweepRecords("", []int{8, 16, 32, 64}, []string{"uniform", "lmms-eval"}, []string{"448x448"}, []string{"raw", "cached"}, 40),
		"49 configs": sweepRecords("", []int{2, 4, 8, 16, 32, 64}, []string{"uniform", "lmms-eval"}, []string{"64x48", "448x448"}, []string{"raw", "cached"}, 40),
	} {
		res, err := audit.Analyze(recs, opt)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := HTML(&b, res, Options{Title: name}); err != nil {
			t.Fatal(err)
		}
		pages[name] = b.Bytes()
	}
	// The full id is each label's hover title and is keyed in the legend.
	for _, want := range []string{`<title>f32-lmms-eval-448x448-raw</title>`, `<td>32f lmms-eval raw</td><td class="l">f32-lmms-eval-448x448-raw</td>`} {
		if !bytes.Contains(pages["17 configs"], []byte(want)) {
			t.Errorf("the 17-config report lacks %s", want)
		}
	}
	pages["example records"] = demoHTML(t)
	var multi []record.Record
	for _, m := range []string{"qwen2.5-vl-7b", "internvl3-8b", "llava-next-video-7b"} {
		multi = append(multi, sweepRecords(m, []int{8, 16, 32, 64}, []string{"uniform", "lmms-eval"}, []string{"448x448"}, []string{"raw", "cached"}, 40)...)
	}
	mres, err := audit.AnalyzeModels(multi, audit.ModelsOptions{Options: opt, Ceilings: map[string]int{"llava-next-video-7b": 32}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ModelsHTML(&b, mres, Options{Title: "three models"}); err != nil {
		t.Fatal(err)
	}
	pages["three models"] = b.Bytes()
	got := renderOverlaps(t, pages, os.Getenv("FRAMESWEEP_REPORT_SHOT"))
	if c := got["control"]; c.Labels != 2 || len(c.Overlaps) != 1 {
		t.Fatalf("control: the measurement found %d labels and %d overlaps (want 2 and 1)", c.Labels, len(c.Overlaps))
	}
	for name := range pages {
		if name == "control" {
			continue
		}
		g := got[name]
		if g.SVGs < 3 || g.Cfg < 10 {
			t.Errorf("%s: measured %d charts, %d config labels: not the page this test means to measure", name, g.SVGs, g.Cfg)
		}
		for _, o := range g.Overlaps {
			t.Errorf("%s: chart %d (%s): %q overlaps %q", name, o.SVG, o.Label, o.A, o.B)
		}
		t.Logf("%s: %d charts, %d labels (%d config labels), %d overlaps", name, g.SVGs, g.Labels, g.Cfg, len(g.Overlaps))
	}
}

func demoHTML(t *testing.T) []byte {
	var b bytes.Buffer
	if err := HTML(&b, demoResult(t), Options{Title: "example"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
