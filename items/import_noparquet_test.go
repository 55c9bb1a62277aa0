//go:build noparquet

package items

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestImportParquetLeftOut: built with -tags noparquet, a Parquet release is refused in one line that
// names the file and the tag.
func TestImportParquetLeftOut(t *testing.T) {
	dir, videos := importDir(t)
	pq := filepath.Join(dir, "test-00000-of-00001.parquet")
	testenv.WriteFile(t, pq, []byte("PAR1 rows PAR1"))
	_, _, err := Import(pq, ImportOptions{Format: "videomme", Videos: videos})
	if !errors.Is(err, ErrNoParquet) || !strings.HasPrefix(err.Error(), pq+": ") || !strings.Contains(err.Error(), "-tags noparquet") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%v", err)
	}
}
