package sweep

import (
	"context"
	"errors"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/record"
)

// modelFields are what every record of a session says about the model that answered: the
// runtime's model id, the digest of the weights files the spec names, its context size, and (in
// process) the build and devices it ran on.
type modelFields struct {
	name    string
	weights string
	context *int
	backend string
}

// describeModel asks the runtime for its model once per session (llm.DescribeModel). A runtime
// that cannot answer (a server without GET /v1/models) is named after its spec, with a warning.
func describeModel(ctx context.Context, o *Options, files map[string]string) modelFields {
	info, err := llm.DescribeModel(ctx, o.Runtime, o.Spec)
	if err != nil {
		info = llm.ModelInfo{ID: llm.SpecModelName(o.Spec)}
		o.Log.Warn("the runtime did not name its model; records name the spec's model=", "model", info.ID, "error", err)
	}
	mf := modelFields{name: info.ID, weights: record.WeightsDigest(files), backend: info.Backend}
	if info.ContextTokens > 0 {
		n := info.ContextTokens
		mf.context = &n
	}
	return mf
}

// stamp puts the model on a record; err is the runtime's error for an error record (nil otherwise):
// a prompt over the context, or over the runtime's image limit, marks the config as beyond the
// model's context ceiling (record.Record.OverContext).
func (mf modelFields) stamp(r *record.Full, err error) {
	r.Model, r.WeightsSHA256, r.ContextTokens = mf.name, mf.weights, mf.context
	r.RuntimeBackend = mf.backend
	r.OverContext = err != nil && (errors.Is(err, llm.ErrContextTooLong) || errors.Is(err, llm.ErrTooManyImages))
}
