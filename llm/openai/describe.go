package openai

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/framesweep/framesweep/llm"
)

// modelList is GET /v1/models (the OpenAI API): vLLM and SGLang add the context length they serve
// the model with (max_model_len) to each entry; ollama and llama-server list ids only (llama-server's
// meta.n_ctx_train is the training context, not the one it serves with, so it is not read).
type modelList struct {
	Data []struct {
		ID          string `json:"id"`
		MaxModelLen int    `json:"max_model_len"`
	} `json:"data"`
}

// Describe asks the server which models it serves (GET /v1/models) and returns the entry of the
// spec's model: its id as the server reports it and its context length when the server gives one
// (vLLM, SGLang: max_model_len). A server that does not list the model is an error naming what it
// lists, so a record never carries a model the server did not claim to serve.
func (c *Client) Describe(ctx context.Context) (llm.ModelInfo, error) {
	actx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, c.base+"/models", nil)
	if err != nil {
		return llm.ModelInfo{}, llm.Errorf("describe", c.base, llm.ErrBadSpec, "%v", err)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return llm.ModelInfo{}, llm.Errorf("describe", c.base+"/models", llm.ErrServer, "%v", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil || res.StatusCode/100 != 2 {
		return llm.ModelInfo{}, llm.Errorf("describe", c.base+"/models", llm.ErrServer, "HTTP %d: %s%v", res.StatusCode, snippet(data), errSuffix(err))
	}
	var ml modelList
	if err := decodeStrict(data, &ml); err != nil { // a key twice or in other letters: no context size
		return llm.ModelInfo{}, llm.Errorf("describe", c.base+"/models", llm.ErrBadResponse, "not a model list (%s): %v", snippet(data), err)
	}
	var ids []string
	for _, m := range ml.Data {
		ids = append(ids, m.ID)
		// ollama resolves a name without a tag to ":latest".
		if m.ID == c.model || m.ID == c.model+":latest" {
			return llm.ModelInfo{ID: m.ID, ContextTokens: m.MaxModelLen}, nil
		}
	}
	return llm.ModelInfo{}, llm.Errorf("describe", c.base+"/models", llm.ErrBadResponse, "the server does not list model %q (it lists %s)", c.model, strings.Join(ids, ", "))
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf(" (%v)", err)
}
