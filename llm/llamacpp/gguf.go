package llamacpp

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/framesweep/framesweep/llm"
	"github.com/ollama/ollama/fs/ggml"
)

// maxGGUFArray bounds the arrays read while checking a header (vocabularies reach ~260k entries).
const maxGGUFArray = 1 << 20

// CheckGGUF validates a GGUF file in pure Go before llama.cpp opens it: magic, header, key/values, tensor
// infos, and that every tensor's data lies inside the file. wantClip selects the vision projector
// ("clip" architecture) rather than a text model. It returns the architecture.
func CheckGGUF(path string, wantClip bool) (arch string, err error) {
	arch, _, err = inspectGGUF(path, wantClip)
	return arch, err
}

// inspectGGUF is CheckGGUF that also returns a projector's clip.projector_type ("" for a text model).
func inspectGGUF(path string, wantClip bool) (arch, proj string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", llm.Errorf("load model", path, llm.ErrModel, "%v", errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", llm.Errorf("load model", path, llm.ErrModel, "%v", err)
	}
	if st.IsDir() {
		return "", "", llm.Errorf("load model", path, llm.ErrModel, "is a directory")
	}
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != "GGUF" {
		return "", "", llm.Errorf("load model", path, llm.ErrModel, "not a GGUF file (bad magic)")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", "", llm.Errorf("load model", path, llm.ErrModel, "%v", err)
	}
	g, err := decodeGGUF(f)
	if err != nil {
		return "", "", llm.Errorf("load model", path, llm.ErrModel, "corrupt GGUF header: %v", err)
	}
	arch = g.KV().Architecture()
	if arch == "" {
		return "", "", llm.Errorf("load model", path, llm.ErrModel, "no general.architecture")
	}
	if wantClip != (arch == "clip") {
		if wantClip {
			return "", "", llm.Errorf("load model", path, llm.ErrModel, "architecture %q is not a vision projector (clip)", arch)
		}
		return "", "", llm.Errorf("load model", path, llm.ErrModel, "architecture %q is a vision projector, not a text model", arch)
	}
	if arch == "clip" {
		if proj, err = checkClip(g); err != nil {
			return "", "", llm.Errorf("load model", path, llm.ErrModel, "%v", err)
		}
	}
	// ollama's reader already bounds-checks tensors; check again here so this guard does not depend on it.
	data := int64(g.Tensors().Offset)
	ts := g.Tensors().Items()
	if len(ts) == 0 {
		return "", "", llm.Errorf("load model", path, llm.ErrModel, "no tensors")
	}
	for _, t := range ts {
		end := data + int64(t.Offset) + int64(t.Size())
		if int64(t.Offset) < 0 || end > st.Size() || end < data {
			return "", "", llm.Errorf("load model", path, llm.ErrModel,
				"truncated: tensor %s ends at byte %d of a %d-byte file", t.Name, end, st.Size())
		}
	}
	return arch, proj, nil
}

// decodeGGUF runs ollama's Go GGUF reader, turning a panic on hostile input into an error.
func decodeGGUF(r io.ReadSeeker) (g *ggml.GGML, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	return ggml.Decode(r, maxGGUFArray)
}
