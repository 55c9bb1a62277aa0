package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/record"
)

// fixture writes the records of three models over text, f16, f32, f64 (gamma lacks f64) as record
// files with provenance, one per model, and returns their paths.
func fixture(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for mi, m := range []string{"alpha", "beta", "gamma"} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		for i := 0; i < 30; i++ {
			for _, f := range []int{0, 16, 32, 64} {
				if m == "gamma" && f == 64 {
					continue
				}
				h := fnv.New32a()
				fmt.Fprintf(h, "%s/%d/%d", m, i, f)
				ok := int(h.Sum32()%100) < 40+f/4
				frames, yes := f, f == 0
				conf := float64(h.Sum32()%1000) / 1000
				r := record.Full{Record: record.Record{ItemID: fmt.Sprintf("q%02d", i), Config: fmt.Sprintf("f%d", f), Status: record.StatusOK,
					Correct: &ok, Prediction: "A", Answer: "B", Confidence: &conf, Task: []string{"videomme", "mlvu"}[i%2], Duration: []string{"short", "long"}[i%3%2],
					ConfigMeta: &record.ConfigMeta{Frames: &frames, TextOnly: &yes, Policy: "uniform", Indices: []int{0, f}}, Model: m,
					WeightsSHA256: strings.Repeat(fmt.Sprint(mi+1), 64)},
					Provenance: record.Provenance{Video: "v.mp4", VideoSHA256: strings.Repeat("e", 64), InputSHA256: strings.Repeat("c", 64), Runtime: "llamacpp:model=" + m + ".gguf",
						ModelSHA256: map[string]string{"model": strings.Repeat(fmt.Sprint(mi+1), 64)}, Probs: map[string]float64{"A": 0.7, "B": 0.3}, At: "2026-12-01T00:00:00Z"}}
				if f == 0 {
					r.ConfigMeta = &record.ConfigMeta{Frames: &frames, TextOnly: &yes}
				}
				if err := enc.Encode(&r); err != nil {
					t.Fatal(err)
				}
			}
		}
		p := filepath.Join(dir, m+".jsonl")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// exportOf audits the inputs (several models) and exports them; it returns the audit's JSON.
func exportOf(t *testing.T, paths []string, dir string, opt audit.ModelsOptions) []byte {
	t.Helper()
	rows, srcs, err := Read(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]record.Record, len(rows))
	for i := range rows {
		recs[i] = rows[i].Record
	}
	res, err := audit.AnalyzeModels(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	sets, err := audit.AllTrajectories(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, Input{Rows: rows, Sources: srcs, Sets: sets, Audit: js, Options: RecordOptions(opt)}); err != nil {
		t.Fatal(err)
	}
	return js
}

// TestExportRoundTrip: the export's records.jsonl, audited with the options its manifest records,
// gives the audit the export holds, byte for byte; its trajectories carry the audit's tags (their
// confused count is the audit's confusion rate); a second export into the same directory is refused.
func TestExportRoundTrip(t *testing.T) {
	paths := fixture(t)
	dir := filepath.Join(t.TempDir(), "release")
	opt := audit.ModelsOptions{Options: audit.DefaultOptions(), Ceilings: map[string]int{"beta": 32}}
	opt.Seed, opt.Resamples = 9, 200
	js := exportOf(t, paths, dir, opt)
	m, ok, err := LoadManifest(dir)
	if err != nil || !ok {
		t.Fatalf("manifest: %v %v", ok, err)
	}
	if m.Audit.Seed != 9 || m.Audit.Ceilings["beta"] != 32 || len(m.Models) != 6 || len(m.Sources) != 3 || m.Sources[1].Rows != [2]int{120, 240} {
		t.Fatalf("manifest %+v", m)
	}
	again := filepath.Join(t.TempDir(), "again")
	js2 := exportOf(t, []string{dir}, again, m.Audit.Options())
	if !bytes.Equal(js, js2) {
		t.Fatal("the audit of the export differs from the audit it holds")
	}
	held, err := os.ReadFile(filepath.Join(dir, AuditJSON))
	if err != nil || !bytes.Equal(held, js) {
		t.Fatalf("audit.json is not the audit: %v", err)
	}
	var res audit.ModelsResult
	if err := json.Unmarshal(js, &res); err != nil {
		t.Fatal(err)
	}
	// Matched grid: f64 is missing from gamma and over beta's ceiling.
	if strings.Join(res.MatchedGrid.Configs, ",") != "f0,f16,f32" {
		t.Fatalf("matched grid %v", res.MatchedGrid.Configs)
	}
	b, err := os.ReadFile(filepath.Join(dir, TrajectoriesJSONL))
	if err != nil {
		t.Fatal(err)
	}
	confused := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var tr TrajectoryRow
		if err := json.Unmarshal(line, &tr); err != nil {
			t.Fatal(err)
		}
		if len(tr.Trajectory) != 3 || tr.Confused == nil || tr.ConfusedInModels == nil {
			t.Fatalf("trajectory row %s", line)
		}
		if *tr.Confused {
			confused[tr.Model]++
		}
	}
	for _, mdl := range res.Models {
		want := *res.PerModel[mdl].VisualConfusionRate * float64(res.PerModel[mdl].Items) / 100
		if float64(confused[mdl]) != want || res.CrossModel.Confused[mdl] != confused[mdl] {
			t.Errorf("%s: %d confused rows, the audit counts %v", mdl, confused[mdl], want)
		}
	}
	if _, err := Write(dir, Input{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("export into a non-empty directory: %v", err)
	}
}

// TestExportReadsWithNumPy runs Debian's python3 with NumPy only (pyarrow and pandas must stay
// unimported) over the export: per model and config, the accuracy from records.jsonl's primary
// multiple-choice records of the matched grid's items equals audit.json's; the confused items of
// trajectories.jsonl are the audit's count; the files' sha256 match the manifest.
func TestExportReadsWithNumPy(t *testing.T) {
	py := testenv.NeedPython(t, "numpy")
	dir := filepath.Join(t.TempDir(), "release")
	exportOf(t, fixture(t), dir, audit.ModelsOptions{Options: audit.DefaultOptions()})
	script := `
import hashlib, json, sys
import numpy as np
d = sys.argv[1]
man = json.load(open(d + "/export.json"))
for f in man["files"]:
    assert hashlib.sha256(open(d + "/" + f["name"], "rb").read()).hexdigest() == f["sha256"], f["name"]
aud = json.load(open(d + "/audit.json"))
rows = [json.loads(l) for l in open(d + "/records.jsonl")]
traj = [json.loads(l) for l in open(d + "/trajectories.jsonl")]
grid = aud["matched_grid"]["configs"]
checked = 0
for m in aud["models"]:
    items = {t["item_id"] for t in traj if t["model"] == m and t["paired"]}
    assert len(items) == aud["per_model"][m]["items"], (m, len(items))
    for c in grid:
        v = np.array([r["correct"] for r in rows if r.get("model", "") == m and r["config"] == c and r["item_id"] in items
                      and r.get("status", "ok") == "ok" and r.get("run", 0) == 0], dtype=float)
        assert len(v) == len(items), (m, c, len(v))
        got, want = 100 * v.mean(), aud["accuracy"][c][m]
        assert abs(got - want) < 1e-9, (m, c, got, want)
        checked += 1
    conf = np.array([t["confused"] for t in traj if t["model"] == m and t["paired"]], dtype=bool)
    assert conf.sum() == aud["cross_model"]["confused"][m], (m, conf.sum())
assert "pyarrow" not in sys.modules and "pandas" not in sys.modules
print("checked", checked)
`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "checked 9") {
		t.Fatalf("python3 over the export: %v\n%s", err, out)
	}
}
