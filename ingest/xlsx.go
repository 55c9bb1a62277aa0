//go:build !noxlsx

package ingest

import (
	"bytes"

	"github.com/xuri/excelize/v2"

	"github.com/framesweep/framesweep/record"
)

// haveXLSX: this build reads xlsx files (-tags noxlsx leaves the reader out: xlsx_off.go).
const haveXLSX = true

// readXLSX reads the first sheet of an xlsx file (excelize, with zip size limits) as a header and rows.
func readXLSX(data []byte, path string) ([]string, [][]string, error) {
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{UnzipSizeLimit: 1 << 30, UnzipXMLSizeLimit: 64 << 20})
	if err != nil {
		return nil, nil, record.Errorf(path, 0, "import", record.ErrFormat, "xlsx: %v", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, nil, record.Errorf(path, 0, "import", record.ErrEmpty, "xlsx has no sheet")
	}
	rows, err := f.GetRows(sheets[0])
	if err != nil {
		return nil, nil, record.Errorf(path, 0, "import", record.ErrFormat, "xlsx sheet %q: %v", sheets[0], err)
	}
	if len(rows) == 0 {
		return nil, nil, record.Errorf(path, 0, "import", record.ErrEmpty, "xlsx sheet %q is empty", sheets[0])
	}
	return rectangular(rows, path)
}

// rectangular pads the rows of a sheet to its header's width (a sheet leaves out a row's empty
// trailing cells) and refuses a row with a cell beyond the header's last column, naming its row and
// both counts.
func rectangular(rows [][]string, path string) ([]string, [][]string, error) {
	header := rows[0]
	for i, row := range rows[1:] {
		if len(row) > len(header) {
			return nil, nil, record.Errorf(path, i+2, "import", record.ErrSyntax, "xlsx row has %d cells, the header %d: a table is rectangular", len(row), len(header))
		}
		for len(row) < len(header) {
			row = append(row, "")
		}
		rows[i+1] = row
	}
	return header, rows[1:], nil
}
