package onnx

import (
	"os"
	"path/filepath"
	"runtime"
)

// libRel is where scripts/deps.sh puts the ONNX Runtime library, relative to the checkout.
const libRel = "third_party/onnxruntime/libonnxruntime.so.1"

// DefaultLib is the ONNX Runtime library used when neither lib= nor FRAMESWEEP_ORT_LIB names one:
// the first that exists of the executable's ../third_party (bin/framesweep in a checkout) and the
// checkout the binary was built from, where scripts/deps.sh installs it. So a binary run without
// scripts/env.sh finds it as it finds llama.cpp's libraries (their run path). "" when neither exists.
func DefaultLib() string {
	if p := os.Getenv("FRAMESWEEP_ORT_LIB"); p != "" {
		return p
	}
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Join(filepath.Dir(exe), ".."))
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dirs = append(dirs, filepath.Join(filepath.Dir(file), "..", ".."))
	}
	for _, d := range dirs {
		p := filepath.Join(d, libRel)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}
