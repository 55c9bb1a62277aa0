package testmodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/gguf"
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
		g := decodeFile(t, path)
		if g.KV.Architecture() != arch {
			t.Errorf("%s: architecture %q", path, g.KV.Architecture())
		}
		if n, _ := g.KV.Uint(arch + ".context_length"); arch == "llama" && n < 2048 {
			t.Errorf("context length %d < 2048", n)
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

// TestWriteUnchanged pins Write's files byte for byte: the ollama-server test, the demo and the
// llamacpp tests rely on exactly this pair (the per-family pairs of WriteArch are separate files).
// math/rand/v2's PCG stream and NormFloat64 are part of the recipe; a toolchain that changes them
// fails here first.
func TestWriteUnchanged(t *testing.T) {
	want := map[string]string{
		ModelFile:  "2cdd065da29a5bc01571d33430becc561f4f758142259cd627aec9aecb0360bb",
		MmprojFile: "9b0049332f96bf33f91ed7a87467cccf6627b950bdb5887c69a6763606a8892c",
	}
	dir := t.TempDir()
	p, err := Write(dir, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	q, err := WriteArch(t.TempDir(), ArchLlama, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{p.Model, q.Model}, {p.Mmproj, q.Mmproj}} {
		a, _ := os.ReadFile(pair[0])
		b, _ := os.ReadFile(pair[1])
		sum := sha256.Sum256(a)
		if got := hex.EncodeToString(sum[:]); got != want[filepath.Base(pair[0])] {
			t.Errorf("%s: sha256 %s, want %s", filepath.Base(pair[0]), got, want[filepath.Base(pair[0])])
		}
		if !bytes.Equal(a, b) {
			t.Errorf("WriteArch(llama) differs from Write for %s", filepath.Base(pair[0]))
		}
	}
}

func TestWriteArch(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	for _, a := range Archs {
		if got, err := ParseArch(string(a)); err != nil || got != a {
			t.Errorf("ParseArch(%q) = %q, %v", a, got, err)
		}
		p, err := WriteArch(dir, a, DefaultSeed)
		if err != nil {
			t.Fatal(err)
		}
		again, err := WriteArch(t.TempDir(), a, DefaultSeed)
		if err != nil {
			t.Fatal(err)
		}
		for _, pair := range [][2]string{{p.Model, again.Model}, {p.Mmproj, again.Mmproj}} {
			x, _ := os.ReadFile(pair[0])
			y, _ := os.ReadFile(pair[1])
			if !bytes.Equal(x, y) {
				t.Errorf("%s: not byte-identical across runs", pair[0])
			}
			sum := sha256.Sum256(x)
			if seen[string(sum[:])] {
				t.Errorf("%s: same bytes as another family's file", pair[0])
			}
			seen[string(sum[:])] = true
		}
		text, proj := decodeFile(t, p.Model), decodeFile(t, p.Mmproj)
		want := map[Arch][2]string{
			ArchLlama: {"llama", "mlp"}, ArchQwen2VL: {"qwen2vl", "qwen2vl_merger"}, ArchQwen25VL: {"qwen2vl", "qwen2.5vl_merger"},
			ArchQwen3VL: {"qwen3vl", "qwen3vl_merger"}, ArchInternVL: {"qwen2", "internvl"},
		}[a]
		if text.KV.Architecture() != want[0] || proj.KV.String("clip.projector_type") != want[1] {
			t.Errorf("%s: text %q projector %q", a, text.KV.Architecture(), proj.KV.String("clip.projector_type"))
		}
		if tmpl := text.KV.String("tokenizer.chat_template"); (a == ArchLlama) != (tmpl == "") {
			t.Errorf("%s: chat template %q", a, tmpl)
		}
		if n, _ := text.KV.Uint(text.KV.Architecture() + ".context_length"); n < 2048 {
			t.Errorf("%s: context length %d", a, n)
		}
	}
	if _, err := ParseArch("gemma3"); err == nil || !strings.Contains(err.Error(), "qwen25vl") {
		t.Errorf("ParseArch(gemma3): %v", err)
	}
	if _, err := WriteArch(dir, Arch("gemma3"), DefaultSeed); err == nil {
		t.Error("WriteArch(gemma3) succeeded")
	}
}

func decodeFile(t *testing.T, path string) *gguf.File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Read(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}
