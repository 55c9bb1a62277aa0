// Command sync rewrites the sources of llm/llamacpp/internal/mtmd from the pinned module and the
// patch set (package upstream). Run from anywhere inside the repository:
//
//	go run ./llm/llamacpp/internal/mtmd/upstream/cmd/sync
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/framesweep/framesweep/llm/llamacpp/internal/mtmd/upstream"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sync:", err)
		os.Exit(1)
	}
}

func run() error {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/framesweep/framesweep/llm/llamacpp/internal/mtmd").Output()
	if err != nil {
		return fmt.Errorf("locating package mtmd: %v", err)
	}
	dst := strings.TrimSpace(string(out))
	mod, err := upstream.ModuleDir(dst)
	if err != nil {
		return err
	}
	if err := upstream.Sync(mod, filepath.Join(dst, "patches"), dst); err != nil {
		return err
	}
	fmt.Printf("sync: %d files from %s into %s\n", len(upstream.Files), mod, dst)
	return nil
}
