package main

import (
	"bufio"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit/report"
	"github.com/framesweep/framesweep/items"
)

// demoSweep is make demo's main sweep as scripts/demo.sh runs it: the tiny model's architecture and the
// DEMO=(…) arguments (grid, items, template), read from the script so that the test follows it.
func demoSweep(t *testing.T) (arch, grid, itemsPath, template string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoDir(t), "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	m := regexp.MustCompile(`testmodel --out "\$OUT/model" --arch (\w+)`).FindStringSubmatch(s)
	d := regexp.MustCompile(`(?m)^DEMO=\(--grid (\S+) --items (\S+) --template (\S+) `).FindStringSubmatch(s)
	if m == nil || d == nil {
		t.Fatalf("scripts/demo.sh: no testmodel --arch or DEMO=(--grid … --items … --template …) line")
	}
	return m[1], filepath.Join(repoDir(t), d[1]), filepath.Join(repoDir(t), d[2]), d[3]
}

// TestDemoSweepShowsInstability: make demo's main sweep (its model, grid, items and template, read from
// scripts/demo.sh) answers every pair with a parsed letter, and its audit finds oracle headroom,
// unstable items and churn — the noise of a random-weight model whose answers change with its input,
// which is what the demo shows (the default llama test model answers one letter everywhere: 0, 0, 0).
// Its HTML report names every confused item with its question's first words (the tags: the export's
// trajectories).
func TestDemoSweepShowsInstability(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: a sweep")
	}
	arch, grid, itemsPath, template := demoSweep(t)
	rc, out, errs := askCLI("testmodel", "--out", t.TempDir(), "--arch", arch)
	if rc != exitOK {
		t.Fatalf("testmodel: %s", errs)
	}
	var tm struct{ Spec string }
	if err := json.Unmarshal([]byte(out), &tm); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run, page, exp := filepath.Join(dir, "run"), filepath.Join(dir, "report.html"), filepath.Join(dir, "export")
	if rc, _, errs := askCLI("sweep", "--grid", grid, "--items", itemsPath, "--template", template, "--runtime", tm.Spec+",threads=1", "--out", run, "--jobs", "2"); rc != exitOK {
		t.Fatalf("sweep: %s", errs)
	}
	rc, js, errs := runAuditCLI("audit", run, "--json", "--resamples", "0", "--html", page, "--export", exp)
	if rc != exitOK {
		t.Fatalf("audit: %s", errs)
	}
	var a struct {
		Items          int      `json:"items"`
		OracleHeadroom *float64 `json:"oracle_headroom"`
		Unstable       *float64 `json:"unstable_rate"`
		Pairs          []struct {
			Churn    int  `json:"churn"`
			Adjacent bool `json:"adjacent"`
		} `json:"pairs"`
		ErrorRecords struct{ Count int } `json:"error_records"`
		Unparsed     struct{ Count int } `json:"unparsed"`
	}
	if err := json.Unmarshal([]byte(js), &a); err != nil {
		t.Fatal(err)
	}
	churn := 0
	for _, p := range a.Pairs {
		if p.Adjacent {
			churn += p.Churn
		}
	}
	if a.ErrorRecords.Count != 0 || a.Unparsed.Count != 0 || a.Items == 0 {
		t.Fatalf("%d items, %d error records, %d unparsed: the demo's clips or replies do not fit its grid", a.Items, a.ErrorRecords.Count, a.Unparsed.Count)
	}
	if a.OracleHeadroom == nil || *a.OracleHeadroom <= 0 || a.Unstable == nil || *a.Unstable <= 0 || churn == 0 {
		t.Fatalf("the demo's audit shows no instability: headroom %v, unstable %v, churn %d", a.OracleHeadroom, a.Unstable, churn)
	}
	f, err := items.Read(itemsPath)
	if err != nil {
		t.Fatal(err)
	}
	question := map[string]string{}
	for _, it := range f.Items {
		question[it.ItemID] = it.Question
	}
	h, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	tf, err := os.Open(filepath.Join(exp, "trajectories.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	confused := 0
	for sc := bufio.NewScanner(tf); sc.Scan(); {
		var tr struct {
			ItemID   string `json:"item_id"`
			Confused bool   `json:"confused"`
		}
		if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
			t.Fatal(err)
		}
		if !tr.Confused {
			continue
		}
		confused++
		q := strings.Fields(question[tr.ItemID])
		if !strings.Contains(string(h), "<code>"+tr.ItemID+"</code>") || len(q) == 0 || !strings.Contains(string(h), html.EscapeString(q[0]+" "+q[1])) {
			t.Errorf("the report does not name confused item %s (%q)", tr.ItemID, question[tr.ItemID])
		}
	}
	if confused == 0 || confused > report.MaxListed {
		t.Errorf("%d confused items: not a test of the report naming each", confused)
	}
}
