//go:build noxlsx

package ingest

import (
	"fmt"

	"github.com/framesweep/framesweep/record"
)

// haveXLSX: built with -tags noxlsx, without the xlsx reader (github.com/xuri/excelize/v2).
const haveXLSX = false

// ErrNoXLSX: the binary was built with -tags noxlsx, without the xlsx reader. It is a record.ErrFormat
// (this build does not read the format).
var ErrNoXLSX error = noXLSX{}

type noXLSX struct{}

func (noXLSX) Error() string {
	return "this framesweep was built without the xlsx reader (-tags noxlsx)"
}
func (noXLSX) Is(target error) bool { return target == record.ErrFormat }

// readXLSX refuses: the xlsx reader is left out of this build.
func readXLSX(_ []byte, path string) ([]string, [][]string, error) {
	return nil, nil, &record.Error{Path: path, Op: "import", Err: fmt.Errorf("an xlsx file, and %w; export it as .tsv (VLMEvalKit's PRED_FORMAT=tsv) or .json, or use a default build", ErrNoXLSX)}
}
