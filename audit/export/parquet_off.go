//go:build noparquet

package export

import "errors"

// parquetAvailable: a -tags noparquet build has no Parquet writer; an export is JSON Lines only, and
// its manifest and datasheet say so.
const parquetAvailable = false

func parquetBytes[T any]([]T) ([]byte, error) {
	return nil, errors.New("built with -tags noparquet: no Parquet writer")
}
