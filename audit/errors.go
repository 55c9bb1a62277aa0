package audit

import "errors"

// ErrBadArgs: an analysis option does not fit the records (unknown budget, ambiguous config). The
// other errors of this package are record.Error values wrapping record's sentinels (record.ErrInvalid,
// record.ErrConflict, …), with the file and line of the record at fault.
var ErrBadArgs = errors.New("bad analysis options")
