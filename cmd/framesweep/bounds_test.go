package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestNumericFlagsHaveRanges: every numeric flag of every command (bench modes included) has a range
// in flagRanges and no entry there names a flag that does not exist; NaN, +Inf and -Inf are refused by
// every float flag, and a value just past either end of an integer or duration flag's range by that
// flag, each as one usage line naming the flag (exit 2) before any work: `--temperature -1` once
// wrote a runtime error record per pair, `--temperature NaN` was silently greedy, `--min-pixels NaN`
// said "max_pixels below min_pixels", and `--resamples 1000000000` grew memory by the gigabyte.
func TestNumericFlagsHaveRanges(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		rc := dispatch(args, &out, &errb)
		return rc, out.String(), errb.String()
	}
	var cmds [][]string
	for n, c := range commands {
		if n != "worker" && n != "bench" && c.deprecated == "" { // worker parses its own flags (internal/engine/worker)
			cmds = append(cmds, []string{n})
		}
	}
	for m := range benchModes {
		cmds = append(cmds, []string{"bench", m})
	}
	sort.Slice(cmds, func(i, j int) bool { return strings.Join(cmds[i], " ") < strings.Join(cmds[j], " ") })
	seen := map[string]map[string]bool{}
	for _, cmd := range cmds {
		name := strings.Join(cmd, " ")
		_, out, errs := run(append(append([]string{}, cmd...), "-h")...)
		seen[name] = map[string]bool{}
		for _, m := range helpFlag.FindAllStringSubmatch(out+errs, -1) {
			fl, kind := m[1], m[2]
			seen[name][fl] = true
			r, ok := flagRanges[name][fl]
			if !ok {
				t.Errorf("%s --%s (%s): no range in flagRanges", name, fl, kind)
				continue
			}
			var bad []string
			switch kind {
			case "float":
				bad = []string{"NaN", "Inf", "-Inf"}
				if !math.IsInf(r.Hi, 1) {
					bad = append(bad, strconv.FormatFloat(r.Hi*2+1, 'g', -1, 64))
				}
			case "int", "uint":
				if !math.IsInf(r.Hi, 1) && r.Hi < math.MaxInt32 {
					bad = append(bad, strconv.FormatFloat(r.Hi+1, 'f', -1, 64))
				}
				if !math.IsInf(r.Lo, -1) && (kind == "int" || r.Lo > 0) {
					bad = append(bad, strconv.FormatFloat(r.Lo-1, 'f', -1, 64))
				}
			case "duration":
				bad = []string{"-1s", strconv.FormatFloat(r.Hi+1, 'f', -1, 64) + "s"}
			}
			for _, v := range bad {
				rc, out, errs := run(append(append([]string{}, cmd...), "--"+fl, v)...)
				want := `invalid value "` + v + `" for flag -` + fl + ": "
				if rc != exitUsage || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, want) ||
					!strings.Contains(errs, "(want ") {
					t.Errorf("%s --%s %s: rc %d stdout %q stderr %q; want one usage line with %q and the range", name, fl, v, rc, out, errs, want)
				}
			}
		}
		if len(seen[name]) == 0 && len(flagRanges[name]) > 0 {
			t.Errorf("%s: no numeric flag found in its help, but flagRanges has %d", name, len(flagRanges[name]))
		}
	}
	// worker parses its own one flag (internal/engine/worker): a negative limit is refused, not "unchanged".
	if rc, _, errs := run("worker", "--rlimit-data", "-5"); rc != exitUsage || !strings.Contains(errs, "--rlimit-data -5: out of range (want an integer ≥ 0)") {
		t.Errorf("worker --rlimit-data -5: rc %d %q", rc, errs)
	}
	for name, fls := range flagRanges {
		for fl := range fls {
			if !seen[name][fl] {
				t.Errorf("flagRanges[%q][%q]: no such numeric flag", name, fl)
			}
		}
	}
}

// TestDecodingSettingsRefusedBeforeWork: a complete sweep command line with a negative, NaN or too
// large temperature (or max tokens) is a usage error before any work: no RUN is created (once -1
// wrote a runtime error record per pair, which --resume would not redo, and NaN was greedy).
func TestDecodingSettingsRefusedBeforeWork(t *testing.T) {
	for _, bad := range [][]string{{"--temperature", "-1"}, {"--temperature", "NaN"}, {"--temperature", "2.5"}, {"--max-tokens", "-1"}} {
		out := filepath.Join(t.TempDir(), "run")
		var so, se bytes.Buffer
		rc := dispatch(append(swArgs("openai:url=http://127.0.0.1:1/v1,model=m", out), bad...), &so, &se)
		if _, err := os.Stat(out); rc != exitUsage || !strings.Contains(se.String(), "flag "+strings.TrimPrefix(bad[0], "-")) || err == nil {
			t.Errorf("sweep %v: rc %d, %q; RUN created: %v", bad, rc, se.String(), err == nil)
		}
	}
}
