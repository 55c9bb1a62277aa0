// Package models compiles the vision graph builders of llama.cpp's tools/mtmd/models (one class per
// projector family) for package mtmd; qwen2vl.cpp and qwen3vl.cpp carry the temporal-pair patch.
package models

// #cgo CXXFLAGS: -std=c++17
// #cgo CPPFLAGS: -I${SRCDIR}/../include
import "C"
