//go:build !noparquet

package items

import (
	"fmt"

	"github.com/parquet-go/parquet-go"
)

// readParquet reads every row of a parquet file as T. A malformed file is an error naming it (the
// reader panics on some corruptions; that is recovered here). Builds with -tags noparquet leave the
// reader out (parquet_off.go).
func readParquet[T any](path string) (rows []T, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("%s: not a readable parquet file: %v", path, r)
		}
	}()
	rows, err = parquet.ReadFile[T](path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return rows, nil
}
