package main

import (
	"bytes"
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
	for n := range commands {
		names = append(names, n)
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
	if rc, _, errs := run("plan", "--seed", "-1"); rc != exitUsage || !strings.Contains(errs, "-seed: want a non-negative integer") {
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

// TestIngestIsImport: `framesweep ingest` is `framesweep import` under its own name (the same records,
// its messages and usage naming ingest), and the top-level help tells it from `items import`.
func TestIngestIsImport(t *testing.T) {
	f := importFixture("2025-03-02T09-30-00_samples_mlvu_dev.jsonl")
	args := []string{f, "--config", "f16", "--frames", "16", "--no-check"}
	rc, imp, _ := runCLI(append([]string{"import", "lmms-eval"}, args...)...)
	rc2, ing, errs := runCLI(append([]string{"ingest", "lmms-eval"}, args...)...)
	if rc != exitOK || rc2 != exitOK || imp != ing || !strings.Contains(ing, `"config":"f16"`) || !strings.HasPrefix(errs, "framesweep ingest: ") {
		t.Errorf("import rc %d, ingest rc %d, same records %v, stderr %q", rc, rc2, imp == ing, errs)
	}
	if rc, _, errs := runCLI("ingest", "nope", f); rc != exitUsage || !strings.HasPrefix(errs, "framesweep ingest: unknown format") {
		t.Errorf("ingest nope: rc %d %q", rc, errs)
	}
	_, help, _ := runCLI("help")
	lines := map[string]string{}
	for _, l := range strings.Split(help, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines[f[0]] = l
		}
	}
	if !strings.Contains(lines["import"], "harness logs → records") || !strings.Contains(lines["import"], "`ingest`") ||
		!strings.Contains(lines["ingest"], "harness logs") || !strings.Contains(lines["items"], "benchmark release → the items") ||
		!strings.Contains(lines["items"], "not `import`") {
		t.Errorf("help does not tell the two imports apart:\n%s", help)
	}
}
