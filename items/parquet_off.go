//go:build noparquet

package items

import (
	"errors"
	"fmt"
)

// ErrNoParquet: the binary was built with -tags noparquet, without the Parquet reader.
var ErrNoParquet = errors.New("this framesweep was built without the Parquet reader (-tags noparquet)")

// readParquetRows refuses: the Parquet reader (github.com/parquet-go/parquet-go) is left out of this
// build.
func readParquetRows(path string, _ *schema, _ *keyMap) ([]row, error) {
	return nil, fmt.Errorf("%s: a Parquet file, and %w; import the release's JSON form, or use a default build", path, ErrNoParquet)
}
