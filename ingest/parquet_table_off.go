//go:build noparquet

package ingest

import "github.com/framesweep/framesweep/record"

// readParquetTable refuses: the Parquet reader is left out of this build (-tags noparquet).
func readParquetTable(_ []byte, path string) ([]string, [][]string, error) {
	return nil, nil, record.Errorf(path, 0, "import", record.ErrFormat, "a Parquet file, and this framesweep was built without the Parquet reader (-tags noparquet); export the table as CSV or JSON lines, or use a default build")
}
