package llamacpp

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/gguf"
	"github.com/framesweep/framesweep/llm"
)

// A GGUF that passes our header check but that llama.cpp refuses: the one-line error names the file and
// llama.cpp's own reason, which it reports only through its log.
func TestLoadFailureCause(t *testing.T) {
	p := filepath.Join(t.TempDir(), "alien.gguf")
	var b bytes.Buffer
	kv := gguf.KV{"general.architecture": "nosucharch", "general.name": "unknown architecture"}
	if err := gguf.Write(&b, kv, []gguf.WTensor{gguf.F32Tensor("token_embd.weight", make([]float32, 4), 4)}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(p, "", Options{Threads: 1})
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
