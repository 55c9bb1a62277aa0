//go:build noparquet

package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
)

// TestExportWithoutParquet: a -tags noparquet build writes JSON Lines only and says so in the manifest
// and the datasheet.
func TestExportWithoutParquet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "release")
	exportOf(t, fixture(t), dir, audit.ModelsOptions{Options: audit.DefaultOptions()})
	m, _, err := LoadManifest(dir)
	if err != nil || m.Parquet || !strings.Contains(m.Note, "noparquet") {
		t.Fatalf("manifest %+v: %v", m, err)
	}
	for _, f := range []string{RecordsParquet, TrajParquet} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s written: %v", f, err)
		}
	}
	ds, err := os.ReadFile(filepath.Join(dir, Datasheet))
	if err != nil || !strings.Contains(string(ds), "No Parquet files") {
		t.Errorf("datasheet does not say Parquet is left out: %v", err)
	}
}
