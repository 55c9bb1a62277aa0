package load_test

import (
	"context"

	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/pipeline"
)

// The tests reach the loaders the way every caller does: through the engine's source layer
// (pipeline.RunLoader opens the video as the loader's reader does and calls load.Run).

// LoadMany runs one loader for several requests on one video.
func LoadMany(ctx context.Context, path, name string, reqs []loader.Request, o load.Options) ([]*load.Result, []error, error) {
	return pipeline.RunLoader(ctx, pipeline.VideoRef{Path: path}, name, reqs, o)
}

// Load runs one request.
func Load(ctx context.Context, path, name string, r loader.Request, o load.Options) (*load.Result, error) {
	res, errs, err := LoadMany(ctx, path, name, []loader.Request{r}, o)
	if err != nil {
		return nil, err
	}
	return res[0], errs[0]
}
