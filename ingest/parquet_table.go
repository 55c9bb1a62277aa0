//go:build !noparquet

package ingest

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/framesweep/framesweep/record"
)

// readParquetTable reads a flat Parquet table (one leaf column per field: strings, numbers,
// booleans, each optional) as a header and rows of text, as a CSV of it would read. A nested column
// (a list, a group) is an error naming it; a malformed file an error naming the file (the reader
// panics on some corruptions; recovered here). -tags noparquet leaves it out (parquet_table_off.go).
func readParquetTable(data []byte, path string) (header []string, rows [][]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			header, rows, err = nil, nil, record.Errorf(path, 0, "import", record.ErrFormat, "not a readable Parquet file: %v", r)
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, nil, record.Errorf(path, 0, "import", record.ErrFormat, "parquet: %v", err)
	}
	for _, col := range f.Schema().Fields() {
		if !col.Leaf() || col.Repeated() {
			return nil, nil, record.Errorf(path, 1, "import", record.ErrFormat, "parquet column %q is not a flat column (a list or a group): a table has one value per cell", col.Name())
		}
		header = append(header, col.Name())
	}
	r := parquet.NewReader(f)
	defer r.Close()
	buf := make([]parquet.Row, 64)
	for {
		n, rerr := r.ReadRows(buf)
		for _, row := range buf[:n] {
			cells := make([]string, len(header))
			for _, v := range row {
				if c := v.Column(); c >= 0 && c < len(cells) && !v.IsNull() {
					cells[c] = parquetCell(v)
				}
			}
			rows = append(rows, cells)
		}
		if rerr == io.EOF {
			return header, rows, nil
		}
		if rerr != nil {
			return nil, nil, record.Errorf(path, len(rows)+2, "import", record.ErrFormat, "parquet: %v", rerr)
		}
	}
}

// parquetCell is a value as a table cell: text as it is, numbers as Python prints them.
func parquetCell(v parquet.Value) string {
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean())
	case parquet.Int32, parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Float:
		return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray())
	}
	return fmt.Sprint(v)
}
