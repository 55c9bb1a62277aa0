package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// helpFlag matches a flag line of PrintDefaults: "  -frames int".
var helpFlag = regexp.MustCompile(`(?m)^  -([a-z0-9-]+) (int|uint|float|duration)\b`)

// TestFlagErrorsEveryCommand runs every command of the table with -h, through `framesweep help CMD`,
// with an unknown flag and with a bad value for each of its numeric flags: help is the synopsis and
// the flags (exit 0), a bad flag is one stderr line naming the flag and the problem (exit 2), never
// the whole usage.
func TestFlagErrorsEveryCommand(t *testing.T) {
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if c.deprecated == "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		rc := dispatch(args, &out, &errb)
		return rc, out.String(), errb.String()
	}
	oneLine := func(s string) bool { return s != "" && strings.Count(strings.TrimSpace(s), "\n") == 0 }
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			rc, out, errs := run("help", name)
			if rc != exitOK || !strings.HasPrefix(out, "usage: framesweep "+name) || errs != "" {
				t.Fatalf("help %s: rc %d stdout %q stderr %q", name, rc, out, errs)
			}
			help := out
			if name != "worker" && !strings.Contains(help, "  -json\n") {
				t.Errorf("%s does not take --json:\n%s", name, help)
			}
			rc, out, errs = run(name, "-h")
			if rc != exitOK || out != "" || errs != help {
				t.Errorf("%s -h: rc %d stdout %q, stderr differs from `help %s`:\n%s", name, rc, out, name, errs)
			}
			rc, out, errs = run(name, "--no-such-flag")
			if rc != exitUsage || out != "" || !oneLine(errs) || !strings.HasPrefix(errs, "framesweep "+name) || !strings.Contains(errs, "-no-such-flag") {
				t.Errorf("%s --no-such-flag: rc %d stdout %q stderr %q", name, rc, out, errs)
			}
			checked := 0
			for _, m := range helpFlag.FindAllStringSubmatch(help, -1) {
				flag, kind := m[1], m[2]
				want := map[string]string{"int": "want an integer", "uint": "want a non-negative integer", "float": "want a number", "duration": "want a duration"}[kind]
				if name == "worker" {
					want = "parse error" // internal/engine/worker parses its own flags (one line, the flag package's words)
				}
				rc, out, errs := run(name, "--"+flag, "x9")
				if rc != exitUsage || out != "" || !oneLine(errs) || !strings.Contains(errs, `invalid value "x9" for flag -`+flag+": "+want) {
					t.Errorf("%s --%s x9: rc %d stdout %q stderr %q, want one line with %q", name, flag, rc, out, errs, want)
				}
				checked++
			}
			if name == "plan" && checked < 5 {
				t.Errorf("plan: only %d numeric flags found in its help:\n%s", checked, help)
			}
		})
	}
	// An int that overflows says so; a negative uint says what is wanted.
	if rc, _, errs := run("plan", "--frames", "99999999999999999999"); rc != exitUsage || !strings.Contains(errs, "-frames: out of range") {
		t.Errorf("overflow: rc %d %q", rc, errs)
	}
	if rc, _, errs := run("plan", "--sampler-seed", "-1"); rc != exitUsage || !strings.Contains(errs, "-sampler-seed: want a non-negative integer") {
		t.Errorf("negative seed: rc %d %q", rc, errs)
	}
	// Bool flags still take no argument (the wrapper keeps IsBoolFlag) and -flag=value still works.
	if rc, out, errs := run("plan", "--total-frames", "100", "--fps", "25", "--policy", "uniform", "--frames", "4", "--json=true"); rc != exitOK || !strings.Contains(out, `"indices"`) {
		t.Errorf("plan --json=true: rc %d %s %s", rc, out, errs)
	}
	if rc, _, errs := run("help", "nope"); rc != exitUsage || !oneLine(errs) {
		t.Errorf("help nope: rc %d %q", rc, errs)
	}
	if rc, out, _ := run("help"); rc != exitOK || !strings.Contains(out, "commands:") {
		t.Errorf("help: rc %d %q", rc, out)
	}
	// The top-level help names every items format the command takes (its usage line's list).
	formats := itemsUsage[strings.Index(itemsUsage, "(") : strings.Index(itemsUsage, ")")+1]
	if _, out, _ := run("help"); !strings.Contains(out, "items import "+formats) {
		t.Errorf("help does not list the items formats %s:\n%s", formats, out)
	}
	if rc, _, errs := run(); rc != exitUsage || !strings.Contains(errs, "commands:") {
		t.Errorf("no command: rc %d %q", rc, errs)
	}
}

// TestIngestIsImport: `framesweep ingest` is the name for harness logs → records; `framesweep import`,
// its old name, gives the same records with one deprecation line, and help lists neither it nor the
// internal worker, and tells ingest from `items import`.
func TestIngestIsImport(t *testing.T) {
	f := importFixture("2025-03-02T09-30-00_samples_mlvu_dev.jsonl")
	args := []string{f, "--config", "f16", "--frames", "16", "--no-check"}
	rc, imp, ierrs := runCLI(append([]string{"import", "lmms-eval"}, args...)...)
	rc2, ing, errs := runCLI(append([]string{"ingest", "lmms-eval"}, args...)...)
	if rc != exitOK || rc2 != exitOK || imp != ing || !strings.Contains(ing, `"config":"f16"`) || !strings.HasPrefix(errs, "framesweep ingest: ") {
		t.Errorf("import rc %d, ingest rc %d, same records %v, stderr %q", rc, rc2, imp == ing, errs)
	}
	if !strings.HasPrefix(ierrs, "framesweep: `import` is deprecated") || ierrs[strings.Index(ierrs, "\n")+1:] != errs {
		t.Errorf("import: stderr %q, want the deprecation line then ingest's %q", ierrs, errs)
	}
	_, help, _ := runCLI("help")
	lines := map[string]string{}
	for _, l := range strings.Split(help, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines[f[0]] = l
		}
	}
	if lines["import"] != "" || lines["worker"] != "" || !strings.Contains(lines["ingest"], "harness logs → records") ||
		!strings.Contains(lines["items"], "benchmark release → the items") {
		t.Errorf("help lists a hidden command or does not tell the two imports apart:\n%s", help)
	}
	if rc, out, _ := runCLI("help", "worker"); rc != exitOK || !strings.HasPrefix(out, "usage: framesweep worker") {
		t.Errorf("help worker: rc %d %q", rc, out)
	}
}

// TestOldSpellings: every renamed flag's old spelling still works for one release, hidden from help:
// the same output as the new spelling, and one deprecation line on stderr naming the new one.
func TestOldSpellings(t *testing.T) {
	dir := t.TempDir()
	nasa := testdataVideo(t, "nasa_13013.mp4")
	f := importFixture("2025-03-02T09-30-00_samples_mlvu_dev.jsonl")
	records := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(records, []byte(`{"item_id":"a","config":"f8-uniform-64x48-raw","correct":true}`+"\n"+`{"item_id":"a","config":"f16-uniform-64x48-raw","correct":false}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := []string{"plan", "--total-frames", "1000", "--fps", "25", "--policy", "random", "--frames", "4", "--json"}
	ingest := []string{"ingest", "lmms-eval", f, "--config", "f16", "--frames", "16", "--no-check"}
	audit := []string{"audit", records, "--json", "--resamples", "10"}
	for _, c := range []struct {
		old, new []string
		repl     string
	}{
		{append(plan, "--seed", "3"), append(plan, "--sampler-seed", "3"), "--sampler-seed"},
		{append(ingest, "--width", "448", "--height", "252"), append(ingest, "--size", "448x252"), "--size WxH"},
		{append(audit, "--seed", "9"), append(audit, "--bootstrap-seed", "9"), "--bootstrap-seed"},
		{append(audit, "--budgets", "8,16"), append(audit, "--cascade", "8,16"), "--cascade"},
		{append(audit, "--size", "64x48"), append(audit, "--cascade-size", "64x48"), "--cascade-size"},
		{append(audit, "--policy", "uniform"), append(audit, "--cascade-policy", "uniform"), "--cascade-policy"},
		{[]string{"items", "import", "csv", filepath.Join(dir, "none.csv"), "--out", filepath.Join(dir, "i.jsonl"), "--videos", dir},
			[]string{"items", "import", "csv", filepath.Join(dir, "none.csv"), "--out", filepath.Join(dir, "i.jsonl"), "--video-dir", dir}, "--video-dir"},
		{[]string{"bench", "grid", "--cache", dir, "--reps", "0"}, []string{"bench", "grid", "--clips", dir, "--reps", "0"}, "--clips"},
		{[]string{"sweep", "--grid", "g", "--items", "i", "--runtime", "llamacpp:model=x", "--out", "o", "--seed", "x"},
			[]string{"sweep", "--grid", "g", "--items", "i", "--runtime", "llamacpp:model=x", "--out", "o", "--llm-seed", "x"}, "--llm-seed"},
		{[]string{"ask", "--runtime", "llamacpp:model=x", "--question", "q", "--policy", "uniform", "--frames", "2", "--seed", "-1", nasa},
			[]string{"ask", "--runtime", "llamacpp:model=x", "--question", "q", "--policy", "uniform", "--frames", "2", "--sampler-seed", "-1", nasa}, "--sampler-seed and --llm-seed"},
	} {
		rc, out, errs := runCLI(c.old...)
		rc2, out2, errs2 := runCLI(c.new...)
		var notices, rest []string
		for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
			if strings.Contains(l, "is deprecated and goes in the next release: use "+c.repl) {
				notices = append(notices, l)
			} else if l != "" {
				rest = append(rest, l)
			}
		}
		if rc != rc2 || out != out2 || len(notices) == 0 || len(rest) != strings.Count(errs2, "\n") {
			t.Errorf("%v: rc %d/%d, same stdout %v, stderr %q vs %q", c.old, rc, rc2, out == out2, errs, errs2)
		}
		if rc2 == exitOK && out == "" {
			t.Errorf("%v: no output", c.new)
		}
	}
	// Help lists the new spellings only.
	for _, cmd := range []string{"plan", "audit", "cascade", "sweep", "ask", "ingest", "items", "testmodel"} {
		_, help, _ := runCLI("help", cmd)
		for _, old := range []string{"  -seed ", "  -budgets ", "  -width ", "  -height ", "  -videos "} {
			if strings.Contains(help, old) {
				t.Errorf("help %s lists the old %s", cmd, strings.TrimSpace(old))
			}
		}
	}
}
