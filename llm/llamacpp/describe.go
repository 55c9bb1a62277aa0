package llamacpp

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/framesweep/framesweep/llm"
)

// Describe names the model (its GGUF file's base name, without .gguf), the context size the runtime
// was opened with (ctx=, default 4096: the prompt of every answer must fit in it), and the llama.cpp
// build and devices it runs on.
func (r *Runtime) Describe(context.Context) (llm.ModelInfo, error) {
	base := filepath.Base(r.path)
	return llm.ModelInfo{ID: strings.TrimSuffix(base, filepath.Ext(base)), ContextTokens: r.nctx, Backend: r.backend}, nil
}
