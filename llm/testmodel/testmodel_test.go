package testmodel

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

func TestDeterministicAndWellFormed(t *testing.T) {
	a, err := Write(t.TempDir(), DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Write(t.TempDir(), DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Write(t.TempDir(), DefaultSeed+1)
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{a.Model, b.Model}, {a.Mmproj, b.Mmproj}} {
		x, _ := os.ReadFile(pair[0])
		y, _ := os.ReadFile(pair[1])
		if !bytes.Equal(x, y) {
			t.Errorf("%s: not byte-identical across runs", pair[0])
		}
	}
	x, _ := os.ReadFile(a.Model)
	y, _ := os.ReadFile(c.Model)
	if bytes.Equal(x, y) {
		t.Error("different seeds gave identical models")
	}
	for path, arch := range map[string]string{a.Model: "llama", a.Mmproj: "clip"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := ggml.Decode(f, 1<<20)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if g.KV().Architecture() != arch {
			t.Errorf("%s: architecture %q", path, g.KV().Architecture())
		}
		if arch == "llama" && g.KV().ContextLength() < 2048 {
			t.Errorf("context length %d < 2048", g.KV().ContextLength())
		}
	}
}

func TestVocabHasNoByteTokens(t *testing.T) {
	tokens, _, _ := Vocab()
	have := map[string]bool{}
	for _, tok := range tokens {
		if strings.HasPrefix(tok, "<0x") {
			t.Errorf("byte token %q", tok)
		}
		have[tok] = true
	}
	for c := 'A'; c <= 'F'; c++ {
		if !have[string(c)] || !have["▁"+string(c)] {
			t.Errorf("missing %c or ▁%c", c, c)
		}
	}
}
