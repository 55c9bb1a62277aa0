package llamacpp

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/ollama/ollama/fs/ggml"
)

// A GGUF that passes our header check but that llama.cpp refuses: the one-line error names the file and
// llama.cpp's own reason, which it reports only through its log.
func TestLoadFailureCause(t *testing.T) {
	p := filepath.Join(t.TempDir(), "alien.gguf")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	kv := ggml.KV{"general.architecture": "nosucharch", "general.name": "unknown architecture"}
	ts := []*ggml.Tensor{{Name: "token_embd.weight", Kind: 0, Shape: []uint64{4}, WriterTo: bytes.NewReader(make([]byte, 16))}}
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = New(p, "", Options{Threads: 1})
	var e *llm.Error
	if !errors.Is(err, llm.ErrModel) || !errors.As(err, &e) || e.Path != p ||
		!strings.Contains(err.Error(), "nosucharch") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want ErrModel naming %s and the unknown architecture on one line", err, p)
	}
	// With the capturing callback installed a good model still loads.
	open(t, "llamacpp:model="+tiny.Model+",threads=1,ctx=512")
}

func TestLogCause(t *testing.T) {
	for in, want := range map[string]string{
		"llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'x'\n": "error loading model architecture: unknown model architecture: 'x'",
		"llama_model_load: error loading model: missing tensor 'output_norm.weight'\n":                               "missing tensor 'output_norm.weight'",
		"":                         "",
		"plain words: no function": "plain words: no function",
	} {
		if got := logCause(in); got != want {
			t.Errorf("logCause(%q) = %q, want %q", in, got, want)
		}
	}
}
