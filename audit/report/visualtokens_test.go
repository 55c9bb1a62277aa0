package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// TestHTMLVisualTokens: a config the model counted otherwise than its frames make is warned about and
// marked beside its id in the report's visual-token table, with its median ratio; a config within the
// band is listed unmarked; records without counts give no section.
func TestHTMLVisualTokens(t *testing.T) {
	recs := synth.Records(60, 3)
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	res, err := audit.Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if err := HTML(&plain, res, Options{}); err != nil || strings.Contains(plain.String(), "Did the model see the frames?") {
		t.Fatalf("a section without counts (%v)", err)
	}
	cut, kept := res.MCConfigs[len(res.MCConfigs)-1], res.MCConfigs[len(res.MCConfigs)-2]
	for i := range recs {
		exp, half, full := 400, 200, 400
		switch recs[i].Config {
		case cut:
			recs[i].VisualTokens = &record.VisualTokens{Expected: &exp, Seen: &half, How: "text-only difference", Family: "qwen2.5-vl"}
		case kept:
			recs[i].VisualTokens = &record.VisualTokens{Expected: &exp, Seen: &full, How: "text-only difference", Family: "qwen2.5-vl"}
		}
	}
	if res, err = audit.Analyze(recs, opt); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, res, Options{}); err != nil {
		t.Fatal(err)
	}
	h := buf.String()
	marked := "<tr><td>" + esc(cut) + ` <b class="bad">⚠ the model did not see these frames</b></td>`
	for _, want := range []string{"<h2>Did the model see the frames?</h2>", marked, "<b>0.500</b>", "<tr><td>" + esc(kept) + "</td>", "<b>1.000</b>",
		`<div class="warn"><b>Warning:</b> visual tokens: the model counted otherwise than the frames fed make in ` + esc(cut) + " (median seen/expected 0.50"} {
		if !strings.Contains(h, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(h, esc(kept)+` <b class="bad">`) {
		t.Errorf("%s marked", kept)
	}
}
