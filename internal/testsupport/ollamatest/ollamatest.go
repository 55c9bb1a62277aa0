// Package ollamatest builds the ollama server from the module version go.mod pins (as a tool) and serves the
// tiny test model (llm/testmodel) on 127.0.0.1, for the tests of every package that talks to an
// OpenAI-compatible server (llm/openai, sweep). Test support only.
package ollamatest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/llm/testmodel"
)

// Build returns the ollama server binary: FRAMESWEEP_OLLAMA_BIN when set, else the one
// scripts/ollama-server.sh builds once per machine from the version go.mod pins as a tool (scripts/deps.sh
// builds it in the background for `make test`; concurrent test packages wait on its lock).
func Build(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("FRAMESWEEP_OLLAMA_BIN"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	start := time.Now()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "ollama-server.sh"))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("building the ollama server: %v\n%s", err, stderr.Bytes())
	}
	t.Logf("ollama server ready in %.1fs", time.Since(start).Seconds())
	return strings.TrimSpace(string(out))
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start serves the tiny test model (GGUF + mmproj) on 127.0.0.1 and stops the server (and its
// runner subprocess, same process group) when the test ends.
func Start(t testing.TB, bin string) string {
	t.Helper()
	dir := t.TempDir()
	tm, err := testmodel.Write(filepath.Join(dir, "model"), testmodel.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	host := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	env := append(os.Environ(), "HOME="+dir, "OLLAMA_HOST="+host, "OLLAMA_MODELS="+filepath.Join(dir, "models"),
		"OLLAMA_NOPRUNE=1", "OLLAMA_NUM_PARALLEL=1", "OLLAMA_MAX_LOADED_MODELS=1")
	var logs bytes.Buffer
	srv := exec.Command(bin, "serve")
	srv.Env, srv.Stdout, srv.Stderr = env, &logs, &logs
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-srv.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("ollama server log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + host + "/")
		if err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ollama server did not start: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	modelfile := filepath.Join(dir, "Modelfile")
	// Two FROM lines: the text model, then its projector. num_ctx 2048: ollama budgets 768 tokens per image.
	mf := fmt.Sprintf("FROM %s\nFROM %s\nPARAMETER num_ctx 2048\nPARAMETER num_thread 1\n", tm.Model, tm.Mmproj)
	if err := os.WriteFile(modelfile, []byte(mf), 0o644); err != nil {
		t.Fatal(err)
	}
	create := exec.Command(bin, "create", "tiny", "-f", modelfile)
	create.Env = env
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("ollama create: %v\n%s", err, out)
	}
	return "http://" + host + "/v1"
}
