package cache

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tempChildEnv makes the test binary a writer that creates a locked temp (a spool or an object temp)
// in the store given, prints its path, and waits to be killed.
const tempChildEnv = "CACHE_TEMP_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(tempChildEnv); dir != "" {
		s, err := Open(context.Background(), dir)
		if err != nil {
			panic(err)
		}
		sp, err := s.NewSpool()
		if err != nil {
			panic(err)
		}
		sp.Write([]byte("partial object data"))
		f, err := createTemp(filepath.Join(dir, "cas"), tempPrefix+"*")
		if err != nil {
			panic(err)
		}
		println(sp.f.Name())
		println(f.Name())
		time.Sleep(time.Hour)
	}
	os.Exit(m.Run())
}

// startWriter runs a writer process on dir and returns it with the two temps it holds open.
func startWriter(t *testing.T, dir string) (*exec.Cmd, []string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), tempChildEnv+"="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	var temps []string
	for len(temps) < 2 && sc.Scan() {
		temps = append(temps, strings.TrimSpace(sc.Text()))
	}
	if len(temps) != 2 {
		t.Fatalf("writer did not report its temps: %v", temps)
	}
	return cmd, temps
}

func paths(ts []TempFile) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Path)
	}
	slices.Sort(out)
	return out
}

// TestDeadTempsAcrossProcesses: another process's temps are in flight while it lives (Verify notes them,
// RemoveDeadTemps keeps them) and, once it is killed with SIGKILL, leftovers: Verify reports them as
// problems and the next store that writes removes them. Temp-named files outside the store's subtrees
// are not its own and are left alone.
func TestDeadTempsAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s0, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := s0.Put(ctx, testSpec(1).Key(), testObject(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "other", tempPrefix+"456")
	os.MkdirAll(filepath.Dir(outside), 0o755)
	os.WriteFile(outside, []byte("not the store's"), 0o644)
	cmd, temps := startWriter(t, dir) // its first write sweeps: leftovers made after it stay for us
	// A leftover of an older build (never locked) in an object directory: dead from the start.
	old := filepath.Join(filepath.Dir(s0.ObjectPath(ref.Digest)), tempPrefix+"123")
	os.WriteFile(old, []byte("partial"), 0o644)
	s, _ := Open(ctx, dir)
	rep, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(temps)
	if got := slices.Sorted(slices.Values(rep.InFlight)); !slices.Equal(got, temps) {
		t.Fatalf("in flight %v, want the live writer's %v", rep.InFlight, temps)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Kind != "leftover" || rep.Problems[0].Path != old || !strings.Contains(rep.Problems[0].Cause, "7 bytes") {
		t.Fatalf("problems %+v, want the old leftover", rep.Problems)
	}
	removed, err := s.RemoveDeadTemps(ctx)
	if err != nil || !slices.Equal(paths(removed), []string{old}) {
		t.Fatalf("removed %v %v, want only %s", removed, err, old)
	}
	for _, p := range temps {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("a live writer's temp was removed: %v", err)
		}
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	rep, err = s.Verify(ctx)
	if err != nil || len(rep.InFlight) != 0 || len(rep.Problems) != 2 {
		t.Fatalf("after the kill: %+v %v", rep, err)
	}
	var left []string
	for _, p := range rep.Problems {
		if p.Kind != "leftover" {
			t.Fatalf("problem %+v", p)
		}
		left = append(left, p.Path)
	}
	if slices.Sort(left); !slices.Equal(left, temps) {
		t.Fatalf("leftovers %v, want %v", left, temps)
	}
	// RemoveDeadTemps ran once for s; a new store (a rerun) sweeps at its first write.
	s2, _ := Open(ctx, dir)
	if _, err := s2.Put(ctx, testSpec(2).Key(), testObject(t, 2)); err != nil {
		t.Fatal(err)
	}
	if removed, err := s2.RemoveDeadTemps(ctx); err != nil || !slices.Equal(paths(removed), temps) {
		t.Fatalf("the rerun removed %v %v, want %v", paths(removed), err, temps)
	}
	rep, err = s2.Verify(ctx)
	if err != nil || !rep.Clean() || rep.OK != 2 {
		t.Fatalf("after the rerun: %+v %v", rep, err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("a file outside the store was touched: %v", err)
	}
}

// TestCreateTempRacesSweep: writers creating temps while sweepers run over the same directory never
// lose a temp they hold (a sweeper that wins the instant before the lock makes the writer start over).
func TestCreateTempRacesSweep(t *testing.T) {
	dir := t.TempDir()
	cas := filepath.Join(dir, "cas")
	os.MkdirAll(cas, 0o755)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 300; i++ {
			classifyTemps([]string{cas}, isTempName, true)
		}
	}()
	for i := 0; i < 300; i++ {
		f, err := createTemp(cas, tempPrefix+"*")
		if err != nil {
			t.Fatal(err)
		}
		if !stillLinked(f, f.Name()) {
			t.Fatalf("a sweeper removed a locked temp: %s", f.Name())
		}
		os.Remove(f.Name())
		f.Close()
	}
	<-done
}
