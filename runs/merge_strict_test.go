//go:build cgo

// These tests sweep through llama.cpp (cgo): a CGO_ENABLED=0 build of the package, such as
// scripts/fuzz.sh makes for FuzzScanRecords, leaves them out.

package runs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sweep"
)

// variantRun copies the RUN at from to a new directory with its records.jsonl lines edited.
func variantRun(t *testing.T, from string, edit func(lines []string) []string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "run")
	copyRun(t, from, to)
	b := mustRead(t, filepath.Join(to, "records.jsonl"))
	lines := edit(strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
	testenv.WriteFile(t, filepath.Join(to, "records.jsonl"), []byte(strings.Join(lines, "\n")+"\n"))
	return to
}

// TestMergeRefusesWhatTheAuditRefuses: merge holds every record line to the record validator the
// audit reads with (types, UTF-8, the line limit, value ranges), counts completeness against the
// sweep's items and grid (a record of an item the sweep does not have does not stand in for a
// missing pair), compares numbers by value (0.5 and 5e-1 are one record, not a conflict), and never
// writes inside one of its inputs.
func TestMergeRefusesWhatTheAuditRefuses(t *testing.T) {
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, testGrid)
	if _, err := sweep.Run(ctx, nil, o); err != nil {
		t.Fatal(err)
	}
	n := len(o.Items.Items) * len(o.Grid.Configs)
	merge := func(out string, in ...string) (*runs.MergeSummary, error) {
		return runs.Merge(ctx, runs.MergeOptions{Runs: in, Out: out})
	}
	set := func(i int, from, to string) func([]string) []string {
		return func(l []string) []string {
			if !strings.Contains(l[i], from) {
				t.Fatalf("line %d has no %q: %s", i+1, from, l[i])
			}
			l[i] = strings.Replace(l[i], from, to, 1)
			return l
		}
	}
	for _, c := range []struct {
		name string
		edit func([]string) []string
		want string
	}{
		{"an item the sweep does not have, a pair missing", func(l []string) []string {
			return append(l[1:], strings.Replace(l[0], `"item_id":"`, `"item_id":"zz-`, 1))
		}, `item "zz-`},
		{"a value of the wrong type", set(3, `"status":"ok"`, `"status":"ok","correct":"yes"`), "records.jsonl:4"},
		{"a line over the limit", set(4, `"status":"ok"`, `"status":"ok","response":"`+strings.Repeat("x", record.MaxLineBytes)+`"`), "line too long"},
		{"invalid UTF-8", set(5, `"status":"ok"`, "\"status\":\"ok\",\"response\":\"\xff\""), "UTF-8"},
		{"an escaped lone surrogate", set(6, `"status":"ok"`, `"status":"ok","response":"\udc80"`), "surrogate"},
		{"a key twice", set(7, `"status":"ok"`, `"status":"ok","status":"ok"`), "twice"},
		{"a value out of range", set(8, `"status":"ok"`, `"status":"ok","latency_s":-1`), "latency_s"},
		// The fields of issues 25 and 26, as a sweep writes them, checked as strictly.
		{"a sweep field of the wrong type", set(9, `"status":"ok"`, `"status":"ok","video_fps":"2"`), "video_fps"},
		{"a weights digest that is not 64 hex digits", func(l []string) []string {
			w := regexp.MustCompile(`"weights_sha256":"[0-9a-f]{64}"`)
			if !w.MatchString(l[10]) {
				t.Fatalf("line 11 has no weights_sha256: %s", l[10])
			}
			l[10] = w.ReplaceAllString(l[10], `"weights_sha256":"XYZ"`)
			return l
		}, `weights_sha256 "XYZ"`},
		{"an fps without its source", set(11, `"status":"ok"`, `"status":"ok","video_fps":2`), "video_fps_source"},
	} {
		run := variantRun(t, o.Out, c.edit)
		sum, err := merge(filepath.Join(t.TempDir(), "m"), run)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: merged (%+v) %v, want an error naming %q", c.name, sum, err, c.want)
		}
	}

	// A pair missing: counted against items × grid, and the merge is not complete.
	gap := variantRun(t, o.Out, func(l []string) []string { return l[1:] })
	sum, err := merge(filepath.Join(t.TempDir(), "m"), gap)
	if err != nil || sum.Complete || sum.PairsMissing == nil || *sum.PairsMissing != 1 || sum.Pairs != n-1 {
		t.Errorf("a pair missing: complete %v, pairs_missing %v, %d pairs: %v", sum.Complete, sum.PairsMissing, sum.Pairs, err)
	}

	// One number, two spellings: duplicates, not a conflict.
	conf := regexp.MustCompile(`"confidence":[-+0-9.eE]+`)
	spelled := func(form string) string {
		return variantRun(t, o.Out, func(l []string) []string {
			for i := range l {
				l[i] = conf.ReplaceAllString(l[i], `"confidence":`+form)
			}
			return l
		})
	}
	a, b := spelled("0.5"), spelled("5e-1")
	if !strings.Contains(string(mustRead(t, filepath.Join(b, "records.jsonl"))), `"confidence":5e-1`) {
		t.Fatal("no record has a confidence: the comparison proves nothing")
	}
	sum, err = merge(filepath.Join(t.TempDir(), "m"), a, b)
	if err != nil || sum.Duplicates != n || sum.Pairs != n {
		t.Errorf("one number written two ways: %v", err)
	}

	// An output inside an input (a directory below it, its chunks directory) is refused, and the input
	// is left as it was.
	before := mustRead(t, filepath.Join(o.Out, "records.jsonl"))
	for _, out := range []string{filepath.Join(o.Out, "merged"), filepath.Join(o.Out, "records"), o.Out} {
		if _, err := merge(out, o.Out); err == nil {
			t.Errorf("merge into %s, inside its input: no error", out)
		}
	}
	if _, err := os.Stat(filepath.Join(o.Out, "records")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused merge left %s/records (%v)", o.Out, err)
	}
	if after := mustRead(t, filepath.Join(o.Out, "records.jsonl")); string(after) != string(before) {
		t.Error("a refused merge changed its input")
	}
}
