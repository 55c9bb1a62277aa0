package ingest

import "errors"

// ErrBadArgs: the import's options do not fit together or the file (no config id, --open-ended over a
// payload that holds the harness's verdicts, an unknown format to check). Every error of this package
// is a *record.Error naming the file (and line or row) and wrapping ErrBadArgs or one of record's
// sentinels.
var ErrBadArgs = errors.New("bad import options")
