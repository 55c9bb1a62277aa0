package report

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// twoSizes are records of text-only and two ladders, 112² at 4 and 8 frames and 224² at 2 and 4: in
// cost order 4f 112² < 2f 224² < 8f 112² < 4f 224², where one curve over every config zig-zags
// across sizes.
func twoSizes() []record.Record {
	var out []record.Record
	cfg := func(id string, frames, size int, correct func(i int) bool) {
		zero, yes := 0, true
		for i := 0; i < 16; i++ {
			meta := &record.ConfigMeta{Frames: &frames, Width: &size, Height: &size, Policy: "uniform", Pipeline: "raw"}
			if frames == 0 {
				meta = &record.ConfigMeta{Frames: &zero, TextOnly: &yes}
			}
			ok := correct(i)
			out = append(out, record.Record{ItemID: fmt.Sprintf("q%02d", i), Config: id, Correct: &ok, ConfigMeta: meta})
		}
	}
	cfg("text", 0, 0, func(i int) bool { return i%4 == 0 })
	cfg("f4-112", 4, 112, func(i int) bool { return i%2 == 0 || i == 3 })
	cfg("f2-224", 2, 224, func(i int) bool { return i < 3 })
	cfg("f8-112", 8, 112, func(i int) bool { return i%2 == 0 && i != 4 || i == 5 || i == 7 })
	cfg("f4-224", 4, 224, func(i int) bool { return i < 5 })
	return out
}

// TestCurvesFollowLadders: with two sizes the accuracy chart draws one curve per size against frames,
// both from the text-only point, and its bars count the steps along each ladder only (text → 4f →
// 8f at 112², text → 2f → 4f at 224²): never a change of size, whose pair the audit has but the
// curves do not step through. The Markdown has one table per ladder, the flow diagram follows one
// ladder.
func TestCurvesFollowLadders(t *testing.T) {
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	res, err := audit.Analyze(twoSizes(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if pairOf(res, "f4-112", "f2-224") == nil {
		t.Fatal("the audit has no pair across sizes: nothing for the chart to leave out")
	}
	cv := curvesOf(mcConfigs(res))
	if len(cv.ladders) != 2 || cv.ladders[0].name != "112²" || cv.ladders[1].name != "224²" || strings.Join(cv.xLabels(), " ") != "text 2f 4f 8f" {
		t.Fatalf("ladders %+v, x %v", cv.ladders, cv.xLabels())
	}
	c := accuracyChart(res)
	if n := strings.Count(c, "<polyline"); n != 2 {
		t.Errorf("%d curves, want 2", n)
	}
	titles := regexp.MustCompile(`<title>([^<]*): \d+ rescued</title>`).FindAllStringSubmatch(c, -1)
	var steps []string
	for _, m := range titles {
		steps = append(steps, m[1])
	}
	sort.Strings(steps)
	want := "112²: f4-112 → f8-112|112²: text → f4-112|224²: f2-224 → f4-224|224²: text → f2-224"
	if strings.Join(steps, "|") != want {
		t.Errorf("bars of %q, want %q", strings.Join(steps, "|"), want)
	}
	for _, step := range [][2]string{{"text", "f4-112"}, {"f4-112", "f8-112"}, {"text", "f2-224"}, {"f2-224", "f4-224"}} {
		p := pairOf(res, step[0], step[1])
		if !strings.Contains(c, fmt.Sprintf("%s → %s: %d rescued", step[0], step[1], p.Rescued)) || !strings.Contains(c, fmt.Sprintf("%s → %s: %d harmed", step[0], step[1], p.Harmed)) {
			t.Errorf("step %v: the bars are not the pair's %+v", step, *p)
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	m := md.String()
	acc := m[strings.Index(m, "## Accuracy"):strings.Index(m, "## Pairs")]
	p := pairOf(res, "f4-112", "f8-112")
	for _, w := range []string{"### 112²", "### 224²", fmt.Sprintf("| f8-112 | 8 frames · 112×112 · uniform | %s | %d | %d | %+d |", F1(res.Accuracy["f8-112"]), p.Rescued, p.Harmed, p.Rescued-p.Harmed)} {
		if !strings.Contains(acc, w) {
			t.Errorf("the Markdown's accuracy lacks %q:\n%s", w, acc)
		}
	}
	if strings.Count(acc, "| text |") != 2 {
		t.Errorf("the text-only row does not start both ladders:\n%s", acc)
	}
	seq, trans := flowLadder(res)
	if len(seq) != 3 || seq[2].ID != "f8-112" || len(trans) != 2 || trans[1].BothCorrect+trans[1].Harmed+trans[1].Rescued+trans[1].BothWrong != res.Items {
		t.Errorf("flow ladder %v %+v", seq, trans)
	}
	// Without the audit's pairs (their order undefined) the steps have no bars and no counts, and the
	// reports say why: "—", never 0.
	res.Pairs = nil
	md.Reset()
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if c := accuracyChart(res); strings.Contains(c, "rescued</title>") || !strings.Contains(md.String(), "| — | — | — |") ||
		!strings.Contains(md.String(), "4 step(s) along the ladders have no rescued/harmed counts: undefined") || !strings.Contains(looseNoteHTML(res), "— 4 step(s)") {
		t.Errorf("steps without pairs are not shown as undefined:\n%s", md.String())
	}
	if seq, _ := flowLadder(res); seq != nil {
		t.Errorf("a flow diagram without pairs: %v", seq)
	}
}

// TestIsoComputeChart: iso-compute groups (32 frames at 880² against 128 at 448² in the example
// records) get their own chart, with each allocation's accuracy and the group oracle.
func TestIsoComputeChart(t *testing.T) {
	res := demoResult(t)
	if len(res.IsoCompute) == 0 {
		t.Fatal("no iso-compute group in the example records")
	}
	c := isoChart(res)
	g := res.IsoCompute[0]
	for _, id := range g.Configs {
		if !strings.Contains(c, "<title>"+id+": "+F1(g.Accuracy[id])) {
			t.Errorf("the iso chart lacks %s", id)
		}
	}
	if !strings.Contains(c, ">group oracle<") || !strings.Contains(c, ">"+F1(g.Oracle)+"<") {
		t.Errorf("the iso chart lacks the group oracle %s", F1(g.Oracle))
	}
	var b bytes.Buffer
	if err := HTML(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), c) {
		t.Error("the report does not show the iso chart")
	}
}

// TestCurvesUnknownFrames: configs whose frames are unknown are on no curve and named in a note;
// with no frames known anywhere there is no curve at all, and the Markdown still lists every config.
func TestCurvesUnknownFrames(t *testing.T) {
	recs := synth.Records(30, 2)
	for i := range recs {
		if recs[i].Config == "f128-random" {
			recs[i].ConfigMeta = nil
		}
	}
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	res, err := audit.Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if n := curvesOf(mcConfigs(res)).looseNote(); !strings.Contains(n, "f128-random") || !strings.Contains(looseNoteHTML(res), "f128-random") {
		t.Errorf("note %q", n)
	}
	var none []record.Record
	for i := 0; i < 4; i++ {
		for k, c := range []string{"a", "b"} {
			ok := (i+k)%2 == 0
			none = append(none, record.Record{ItemID: fmt.Sprint(i), Config: c, Correct: &ok})
		}
	}
	if res, err = audit.Analyze(none, opt); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if accuracyChart(res) != "" || !strings.Contains(md.String(), "| a | cost unknown |") || !strings.Contains(md.String(), "| b | cost unknown |") {
		t.Errorf("configs of unknown frames: chart %q\n%s", accuracyChart(res), md.String())
	}
}
