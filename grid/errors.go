package grid

import "errors"

// Sentinel errors; match them with errors.Is. Errors of this package are *sampler.Error values
// (path, line, operation, detail) that wrap one of these or, for a name that is not a preset or
// policy, sampler.ErrUnknown; a config's sampling errors are the sampler's, their operation prefixed
// with the config id.
var (
	// ErrGrid: the grid file is malformed or inconsistent.
	ErrGrid = errors.New("invalid grid")
	// ErrLoader: the config is a harness loader's (Config.Loader): its frames are planned by the
	// loader's reader, which decodes the video (pipeline.PlanJobs), not by a sampler.
	ErrLoader = errors.New("planned by a harness loader")
)
