package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fixtureDir holds what this test binary makes once and shares between tests (the demo RUN); TestMain
// removes it.
var fixtureDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

var demo struct {
	once      sync.Once
	spec, run string
	took      time.Duration
	err       error
}

// demoRun returns the demo RUN, made once per test binary: the README's sweep (examples/sweep-grid.yaml
// × examples/items.jsonl through the default tiny llama model, swArgs: 12 items × 9 configs, 108
// records) in process, and the runtime spec it ran with. Tests read it and must not change it: copy it
// first (copyRun).
func demoRun(t *testing.T) (spec, run string) {
	t.Helper()
	demo.once.Do(func() {
		demo.err = makeDemoRun()
	})
	if demo.err != nil {
		t.Fatalf("the shared demo RUN: %v", demo.err)
	}
	return demo.spec, demo.run
}

func makeDemoRun() error {
	dir, err := os.MkdirTemp("", "framesweep-fixtures-")
	if err != nil {
		return err
	}
	fixtureDir = dir
	rc, out, errs := askCLI("testmodel", "--out", filepath.Join(dir, "model"))
	if rc != exitOK {
		return fmt.Errorf("testmodel: rc %d: %s", rc, errs)
	}
	var tm struct{ Spec string }
	if err := json.Unmarshal([]byte(out), &tm); err != nil {
		return fmt.Errorf("testmodel: %v in %q", err, out)
	}
	demo.spec, demo.run = tm.Spec+",threads=1", filepath.Join(dir, "run")
	t0 := time.Now()
	if rc, _, errs := askCLI(swArgs(demo.spec, demo.run)...); rc != exitOK {
		return fmt.Errorf("sweep: rc %d: %s", rc, errs)
	}
	demo.took = time.Since(t0)
	return nil
}

// copyRun copies a RUN directory (files writable) under the test's temp dir, for a test that changes it.
func copyRun(t *testing.T, run string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(run))
	if err := os.CopyFS(dst, os.DirFS(run)); err != nil {
		t.Fatal(err)
	}
	return dst
}
