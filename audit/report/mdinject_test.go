package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/record"
)

// hostile are names a record file can carry: markup, a link, a code span, emphasis, a table cell and
// row break, a heading.
var hostile = []string{"<script>alert(1)</script>", "[x](javascript:alert(1))", "a|b\nc", "`code`", "*em* _u_ ~~s~~", "# h", "<img src=x onerror=alert(1)>"}

// CheckInertMarkdown fails t when md holds markup a foreign field could have brought: an unescaped
// "<" (raw HTML), an unescaped "](" (a link), or a table row with another number of cells than its
// table's header.
func CheckInertMarkdown(t *testing.T, what, md string) {
	t.Helper()
	unesc := func(line string, c byte) int {
		n := 0
		for i := 0; i < len(line); i++ {
			if line[i] == '\\' {
				i++
				continue
			}
			if line[i] == c {
				n++
			}
		}
		return n
	}
	inCode, cells := false, -1
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode {
			continue
		}
		if unesc(line, '<') > 0 || strings.Contains(strings.ReplaceAll(line, `\]`, ""), "](") {
			t.Errorf("%s:%d: markup from a field: %q", what, i+1, line)
		}
		switch {
		case !strings.HasPrefix(line, "|"):
			cells = -1
		case cells < 0:
			cells = unesc(line, '|')
		case unesc(line, '|') != cells:
			t.Errorf("%s:%d: %d cells in a table of %d: %q", what, i+1, unesc(line, '|'), cells, line)
		}
	}
}

// TestMarkdownEscapesForeignFields: config ids, categories, durations, model names, sources and the
// title that hold markup, links, code spans, emphasis, "|" or line breaks reach `audit --md` (one
// model and several) as inert text, each table row keeping its cells (a model name with <script> once
// passed through, and a newline split a row). The HTML report escapes them already.
func TestMarkdownEscapesForeignFields(t *testing.T) {
	var recs []record.Record
	for mi, m := range []string{hostile[0], hostile[2]} {
		for i := 0; i < 6; i++ {
			for ci, c := range []string{hostile[1], hostile[3], hostile[6]} {
				f := 8 << ci
				ok := (i+ci+mi)%3 != 0
				conf := float64(i%4) / 4
				recs = append(recs, record.Record{ItemID: fmt.Sprint(hostile[5], i), Config: c, Correct: &ok, Confidence: &conf, Model: m,
					Category: hostile[4], Duration: hostile[i%len(hostile)], ConfigMeta: &record.ConfigMeta{Frames: &f, Policy: "uniform"}})
			}
		}
	}
	opt := Options{Title: hostile[0] + "\n# x", Sources: []string{"/tmp/" + hostile[1] + ".jsonl"}}
	multi, err := audit.AnalyzeModels(recs, audit.ModelsOptions{Options: audit.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ModelsMarkdown(&b, multi, opt); err != nil {
		t.Fatal(err)
	}
	CheckInertMarkdown(t, "models", b.String())
	if !strings.Contains(b.String(), `\<script\>alert(1)\</script\>`) {
		t.Errorf("the model name is not shown:\n%s", b.String())
	}
	one, err := audit.Analyze(recs[:len(recs)/2], audit.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := Markdown(&b, one, opt); err != nil {
		t.Fatal(err)
	}
	CheckInertMarkdown(t, "single", b.String())
}
