//go:build !noparquet

package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/framesweep/framesweep/audit"
)

// TestExportParquet: the Parquet files hold the JSON Lines' rows, column for column where both have
// the value (verdict, confidence, frames, provenance), and the manifest says Parquet was written.
func TestExportParquet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "release")
	exportOf(t, fixture(t), dir, audit.ModelsOptions{Options: audit.DefaultOptions()})
	m, _, err := LoadManifest(dir)
	if err != nil || !m.Parquet {
		t.Fatalf("manifest parquet=%v: %v", m != nil && m.Parquet, err)
	}
	recs, err := parquet.ReadFile[RecordRow](filepath.Join(dir, RecordsParquet))
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := readInput(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rows) || len(recs) != 330 {
		t.Fatalf("%d parquet rows, %d JSON rows", len(recs), len(rows))
	}
	for i, r := range recs {
		j := rows[i]
		if r.ItemID != j.ItemID || r.Config != j.Config || r.Model != j.Model || *r.Correct != *j.Correct || *r.Confidence != *j.Confidence ||
			*r.Frames != int64(*j.ConfigMeta.Frames) || r.VideoSHA256 != j.VideoSHA256 || r.WeightsSHA256 != j.WeightsSHA256 ||
			r.ModelSHA256 == "" || r.Probs != `{"A":0.7,"B":0.3}` || r.Source != int64(i/120) {
			t.Fatalf("row %d: parquet %+v, json %+v", i, r, j)
		}
	}
	traj, err := parquet.ReadFile[TrajectoryRow](filepath.Join(dir, TrajParquet))
	if err != nil || len(traj) != 90 || traj[0].Confused == nil {
		t.Fatalf("%d trajectory rows: %v", len(traj), err)
	}
	if _, err := os.Stat(filepath.Join(dir, TrajectoriesJSONL)); err != nil {
		t.Fatal(err)
	}
}
