package openai

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testenv"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/internal/testframes"
	"github.com/framesweep/framesweep/llm/testmodel"
)

// buildOllama builds the ollama server from the module version pinned in go.mod, in a scratch module
// that copies the repository's go.mod/go.sum (so the build cache, llama.cpp included, is shared).
// FRAMESWEEP_OLLAMA_BIN points at a prebuilt binary instead.
func buildOllama(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FRAMESWEEP_OLLAMA_BIN"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod = regexp.MustCompile(`(?m)^module .*$`).ReplaceAll(mod, []byte("module framesweep.test/ollama"))
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ollama")
	start := time.Now()
	cmd := exec.Command("go", "build", "-mod=mod", "-o", bin, "github.com/ollama/ollama")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the ollama server: %v\n%s", err, out)
	}
	t.Logf("built ollama server in %.1fs", time.Since(start).Seconds())
	return bin
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startOllama serves the tiny test model (GGUF + mmproj) on 127.0.0.1 and stops the server (and its
// runner subprocess, same process group) when the test ends.
func startOllama(t *testing.T, bin string) string {
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

// TestRealServer answers a multiple-choice question about real video frames through a real
// OpenAI-compatible server (ollama built from the pinned module) serving the tiny test model.
func TestRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the ollama server")
	}
	video := testframes.Path(testframes.Video)
	if video == "" {
		testenv.Missing(t, "../shared/testdata/videos/%s not present", testframes.Video)
	}
	fr, err := testframes.Extract(video, []int{0, 45, 90}, 64, 48)
	if err != nil {
		t.Fatal(err)
	}
	url := startOllama(t, buildOllama(t))
	// No image_format: frames go as lossless PNG, the default.
	rt, err := llm.Registry{"openai": Open}.Open("openai:url=" + url + ",model=tiny,concurrency=2,timeout=60s")
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	req := &llm.Request{
		Frames:   fr,
		Question: "Which animal appears in the video?",
		Options:  []string{"A. a rabbit", "B. a bird", "C. a squirrel", "D. a fish"},
		Template: llm.TemplateVideoMME,
		Seed:     1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := rt.Answer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("text %q choice %q probs %v tokens %d/%d latency %.2fs", resp.Text, resp.Choice, resp.Probs, resp.PromptTokens, resp.CompletionTokens, resp.LatencyS)
	if len(resp.Probs) != 4 {
		t.Fatalf("probs %v: want the 4 options", resp.Probs)
	}
	var sum float64
	for _, p := range resp.Probs {
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("probs sum to %v", sum)
	}
	if resp.Choice != llm.ExtractVideoMME(resp.Text) || resp.Template != llm.TemplateVideoMME {
		t.Errorf("choice %q for %q", resp.Choice, resp.Text)
	}
	if resp.PromptTokens < 3*4 {
		t.Errorf("prompt tokens %d: the images did not reach the model", resp.PromptTokens)
	}
	if resp.ImageFormat != "png" {
		t.Errorf("image_format %q, want png (the default)", resp.ImageFormat)
	}
	// Text-only requests are first-class, and greedy decoding is repeatable on the server too.
	txt, err := rt.Answer(ctx, &llm.Request{Question: req.Question, Options: req.Options, Template: llm.TemplateGeneric})
	if err != nil {
		t.Fatal(err)
	}
	again, err := rt.Answer(ctx, &llm.Request{Question: req.Question, Options: req.Options, Template: llm.TemplateGeneric})
	if err != nil {
		t.Fatal(err)
	}
	if txt.Text != again.Text {
		t.Errorf("temperature 0 not repeatable: %q vs %q", txt.Text, again.Text)
	}
	if txt.PromptTokens >= resp.PromptTokens {
		t.Errorf("text-only prompt %d tokens ≥ with frames %d", txt.PromptTokens, resp.PromptTokens)
	}
	// JPEG frames and the MLVU template (system turn + prefilled assistant turn) are accepted too.
	jp, err := llm.Registry{"openai": Open}.Open("openai:url=" + url + ",model=tiny,image_format=jpeg,quality=80")
	if err != nil {
		t.Fatal(err)
	}
	defer jp.Close()
	ml, err := jp.Answer(ctx, &llm.Request{Frames: fr, Question: req.Question, Options: req.Options, Template: llm.TemplateMLVU, MaxTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(ml.Probs) != 4 || ml.Template != llm.TemplateMLVU || ml.CompletionTokens > 4 || ml.ImageFormat != "jpeg:q=80" {
		t.Errorf("mlvu over jpeg: %+v", ml)
	}
}
