//go:build !noparquet

package export

import (
	"bytes"

	"github.com/parquet-go/parquet-go"
)

// parquetAvailable: this build writes the .parquet files (-tags noparquet leaves the writer out).
const parquetAvailable = true

// parquetBytes encodes rows as one Parquet file (schema from T's parquet tags).
func parquetBytes[T any](rows []T) ([]byte, error) {
	var b bytes.Buffer
	if err := parquet.Write(&b, rows); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
