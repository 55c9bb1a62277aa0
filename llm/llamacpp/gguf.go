package llamacpp

import (
	"errors"
	"io"
	"os"

	"github.com/framesweep/framesweep/internal/gguf"
	"github.com/framesweep/framesweep/llm"
)

// CheckGGUF validates a GGUF file in pure Go before llama.cpp opens it: magic, header, key/values, tensor
// infos, and that every tensor's data lies inside the file. wantClip selects the vision projector
// ("clip" architecture) rather than a text model. It returns the architecture.
func CheckGGUF(path string, wantClip bool) (arch string, err error) {
	arch, _, _, err = inspectGGUF(path, wantClip, true)
	return arch, err
}

// goChecks turns the architecture checks (textcheck.go, clipcheck.go) on; tests turn them off to
// reach the load probe with files that abort llama.cpp.
var goChecks = true

// inspectGGUF is CheckGGUF that also returns a projector's clip.projector_type ("" for a text model)
// and the file's key/values; without validate (the load probe's child, which the parent's checks
// passed) only the header is read.
func inspectGGUF(path string, wantClip, validate bool) (arch, proj string, kv gguf.KV, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "%v", errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "%v", err)
	}
	if st.IsDir() {
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "is a directory")
	}
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != "GGUF" {
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "not a GGUF file (bad magic)")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "%v", err)
	}
	g, err := gguf.Read(f, st.Size(), gguf.DefaultLimits)
	if err != nil {
		msg := err.Error()
		if fe := (*gguf.FormatError)(nil); errors.As(err, &fe) {
			msg = fe.Msg
		}
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "corrupt GGUF header: %s", msg)
	}
	arch = g.KV.Architecture()
	if arch == "" {
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "no general.architecture")
	}
	if wantClip != (arch == "clip") {
		if wantClip {
			return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "architecture %q is not a vision projector (clip)", arch)
		}
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "architecture %q is a vision projector, not a text model", arch)
	}
	switch {
	case !validate || !goChecks:
		if arch == "clip" {
			proj = projectorType(g.KV)
		}
	case arch == "clip":
		proj, err = checkClip(g)
	default:
		err = checkText(g)
	}
	if err != nil {
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "%v", err)
	}
	// gguf.Read checked that every tensor's data lies inside the file.
	if len(g.Tensors) == 0 {
		return "", "", nil, llm.Errorf("load model", path, llm.ErrModel, "no tensors")
	}
	return arch, proj, g.KV, nil
}
