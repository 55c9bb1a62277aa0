package onnx

import (
	ort "github.com/yalue/onnxruntime_go"
)

// LibraryVersion loads the ONNX Runtime shared library lib ("" = DefaultLib()) and returns
// the version it reports (OrtGetApiBase()->GetVersionString), so provenance names the library that
// runs, not the one the binding was written for.
func LibraryVersion(lib string) (string, error) {
	if lib == "" {
		lib = DefaultLib()
	}
	if err := acquireEnv(lib); err != nil {
		return "", err
	}
	defer releaseEnv()
	return ort.GetVersion(), nil
}
