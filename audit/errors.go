package audit

import (
	"errors"

	"github.com/framesweep/framesweep/audit/dataset"
)

// ErrBadArgs: an analysis option does not fit the records (unknown budget, ambiguous config). It is
// dataset.ErrBadArgs, the one value the whole analysis (dataset, cascade, metrics) wraps. The other
// errors of this package are record.Error values wrapping record's sentinels (record.ErrInvalid,
// record.ErrConflict, …), with the file and line of the record at fault.
var ErrBadArgs = dataset.ErrBadArgs

// ErrNothingPaired: the records hold no paired item (ids of two importers that never meet, configs
// no item has in common) or the models no matched grid; the error says why and what to change.
var ErrNothingPaired = errors.New("nothing to audit")
