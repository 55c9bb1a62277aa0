package llm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// ModelInfo is what a runtime says about the model it answers with, for the records: the audit
// compares models by name (docs/audit.md "Several models").
type ModelInfo struct {
	// ID is the model's name: the id an OpenAI-compatible server lists for it, the weights file's
	// base name (without its extension) in process.
	ID string
	// ContextTokens is the context size in tokens (0: not reported).
	ContextTokens int
	// Backend names the inference build and the devices it runs on, for an in-process runtime (e.g.
	// "llama.cpp v0.4.0 (ggml 0.23.0 5b4ebc5); CPU libggml-cpu-zen4.so"); "" for a server.
	Backend string
}

// Describer is implemented by runtimes that can name their model and its context size.
type Describer interface {
	Describe(ctx context.Context) (ModelInfo, error)
}

// DescribeModel asks rt for its model; a runtime that cannot say is named after its spec: the base
// name of the model= file (without its extension), else the model= value itself.
func DescribeModel(ctx context.Context, rt Runtime, sp Spec) (ModelInfo, error) {
	if d, ok := rt.(Describer); ok {
		return d.Describe(ctx)
	}
	return ModelInfo{ID: SpecModelName(sp)}, nil
}

// SpecModelName is the model a spec names: the base name of its model= file without the extension
// when it is a file, else the value as given ("" when the spec has no model=).
func SpecModelName(sp Spec) string {
	m := sp.Params["model"]
	if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
		base := filepath.Base(m)
		return strings.TrimSuffix(base, filepath.Ext(base))
	}
	return m
}
