// Command gen writes the wrappers of package mtmd: one .cpp file per source file of upstream's mtmd
// library (add_library(mtmd …) in tools/mtmd/CMakeLists.txt of third_party/llama/src), without the
// helpers (mtmd-helper*.cpp: file and video decoding, the generation loop), which framesweep does
// itself. Run it in the package directory (go generate).
package main

import (
	"fmt"
	"os"

	"github.com/framesweep/framesweep/llm/llamacpp/internal/mtmd/release"
)

func main() {
	if err := release.Sync("."); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
