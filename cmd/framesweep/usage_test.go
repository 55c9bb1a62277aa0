package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// usageCase is one bad command line: the exit status it gets and a pattern its one stderr line
// matches.
type usageCase struct {
	args []string
	code int
	re   string
}

// TestUsageErrors is every command's bad command lines in one table (it replaces the per-command
// usage tests): bad usage is exit 2 and a handled error exit 1, each as one stderr line naming the
// command and the flag, file or cause (the pattern), with nothing on stdout, before any work is done.
// An old spelling's deprecation line is the only other line allowed.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nasa, v90 := testdataVideo(t, "nasa_13013.mp4"), testdataVideo(t, "video_90.mov")
	grid := write("g.yaml", "frames: [2]\npolicies: [uniform]\nresolutions: [\"32x24\"]\n")
	badGrid := write("bad.yaml", "frames: [oops]\n")
	bad := write("bad.jsonl", `{"item_id":"a","config":"x","correct":true}`+"\n"+`{"item_id":"a","config":"x"`+"\n")
	table := write("t.csv", "sample_id,config,correct\nq,f8,1\n")
	empty := write("empty-token", "\n")
	held := write("held/run.json", `{"format":"framesweep.run/1"}`)
	stray := write("stray/records.jsonl", `{"item_id":"a","config":"c","correct":true}`+"\n")
	out, missing := filepath.Join(dir, "out"), filepath.Join(dir, "missing")
	sweepArgs := []string{"sweep", "--grid", "g", "--items", "i", "--runtime", "llamacpp:model=x", "--out", "o"}
	sw := func(extra ...string) []string { return append(append([]string{}, sweepArgs...), extra...) }
	realSweep := func(run string) []string {
		return []string{"sweep", "--grid", "../../examples/sweep-grid.yaml", "--items", "../../examples/items.jsonl", "--runtime", "llamacpp:model=/nonexistent/model.gguf", "--out", run}
	}
	cases := []usageCase{
		// probe, frames (the decode flags)
		{[]string{"probe"}, 2, "want exactly one VIDEO"},
		{[]string{"probe", nasa, "--hwaccel", "warp"}, 2, `--hwaccel: .*"warp"`},
		{[]string{"probe", nasa, "--stream", "-2"}, 2, "flag -stream: out of range"},
		{[]string{"frames", nasa, "--out", out}, 2, "--indices: required"},
		{[]string{"frames", nasa, "--indices", "0"}, 2, "--out DIR is required"},
		{[]string{"frames", nasa, "--indices", "a", "--out", out}, 2, `--indices: "a" is not an integer`},
		{[]string{"frames", nasa, "--indices", "0", "--out", out, "--stream", "-5"}, 2, "flag -stream: out of range"},
		{[]string{"frames", nasa, "--indices", "31", "--out", out, "--on-damaged", "maybe"}, 2, "--on-damaged: .*maybe"},
		{[]string{"frames", "v.mp4", "--indices", "0", "--out", out, "--size", "0x4"}, 2, `--size "0x4"`},
		{[]string{"frames", "v.mp4", "--indices", "0", "--out", out, "--size", "12"}, 2, `--size "12"`},
		{[]string{"frames", "v.mp4", "--indices", "0", "--out", out, "--size", "4x4", "--kernel", "bogus"}, 2, `--kernel "bogus"`},
		{[]string{"frames", "v.mp4", "--indices", "0", "--out", out, "--size", "4x4", "--preset", "qwen2.5-vl"}, 2, "mutually exclusive"},
		{[]string{"frames", "v.mp4", "--indices", "0", "--out", out, "--preset", "no-such-preset"}, 2, "--preset"},
		{[]string{"frames", "v.mp4", "--indices", "0", "--out", out, "--kernel", "cv-area"}, 2, "--kernel needs --size or --preset"},
		{[]string{"frames", "v.mp4", "--indices", "1", "--out", out, "--max-memory-mb", "9"}, 2, "applies with --record"},
		{[]string{"frames", nasa, "--loader", "lmms-eval", "--indices", "0", "--out", out}, 2, "--indices does not apply with --loader"},
		{[]string{"frames", nasa, "--loader", "lmms-eval", "--frames", "8", "--size", "64x64", "--out", out}, 2, "--size does not apply with --loader"},
		{[]string{"frames", nasa, "--loader", "lmms-eval", "--frames", "8", "--stream", "0", "--out", out}, 2, "--stream does not apply with --loader"},
		{[]string{"frames", nasa, "--loader", "nope", "--frames", "8", "--out", out}, 2, "nope"},
		{[]string{"frames", nasa, "--loader", "framesweep", "--frames", "8", "--out", out}, 2, "framesweep's own reading"},
		{[]string{"frames", nasa, "--loader", "qwen-vl-utils", "--frames", "8", "--sample-fps", "1", "--out", out}, 2, "frames"},
		{[]string{"frames", nasa, "--loader", "lmms-eval", "--frames", "8", "--image-patch-size", "16", "--out", out}, 2, "image"},
		{[]string{"frames", nasa, "--loader", "qwen-vl-utils", "--frames", "8", "--torch", "3", "--out", out}, 2, `--torch "3"`},
		{[]string{"frames", nasa, "--frames", "8", "--out", out}, 2, "--frames needs --loader"},
		{[]string{"frames", v90, "--loader", "qwen-vl-utils", "--frames", "8", "--out", out}, 1, regexp.QuoteMeta(v90) + `.*nframes should be in \[2, 3\]`},
		{[]string{"frames", "--record", "run", "item", "--out", out}, 2, "ITEM CONFIG"},
		{[]string{"frames", "--record", "run", "item", "cfg", "--out", out, "--size", "8x8"}, 2, "--size does not apply with --record"},
		{[]string{"frames", "--video-root", dir, "v.mp4", "--out", out}, 2, "needs --record"},
		// plan
		{[]string{"plan", "--loader", "lmms-eval", "--total-frames", "100", "--fps", "25"}, 2, "--loader needs a VIDEO"},
		{[]string{"plan", nasa, "--loader", "lmms-eval", "--preset", "lmms-eval"}, 2, "--preset does not apply with --loader"},
		{[]string{"plan", nasa, "--loader", "lmms-eval", "--max-pixels", "100"}, 2, "max"},
		{[]string{"plan", nasa, "--preset", "qwen3-vl", "--max-pixels", "100"}, 2, "--max-pixels needs --loader"},
		{[]string{"plan", "--total-frames", "100", "--fps", "25"}, 2, "need exactly one of --preset or --policy"},
		{[]string{"plan", nasa, "--total-frames", "100", "--fps", "25", "--policy", "uniform"}, 2, "not both"},
		{[]string{"plan", "--total-frames", "100", "--fps", "25", "--policy", "uniform", "--stream", "0"}, 2, "--stream needs a VIDEO"},
		{[]string{"plan", "--grid", grid, "--total-frames", "100", "--fps", "25", "--frames", "8"}, 2, "--frames does not apply with --grid"},
		{[]string{"plan", "--total-frames", "100", "--fps", "25", "--preset", "nope"}, 2, "nope"},
		{[]string{"plan", "--total-frames", "100", "--fps", "25", "--policy", "uniform", "--resolution", "9x"}, 2, "--resolution"},
		{[]string{"plan", "--grid", badGrid, "--total-frames", "100", "--fps", "25"}, 1, regexp.QuoteMeta(badGrid)},
		// extract, verify
		{[]string{"extract", "--out", "x", "--videos", "v"}, 2, "--grid is required"},
		{[]string{"extract", "--grid", grid, "--out", "x"}, 2, "--videos needs at least one video"},
		{[]string{"extract", "--grid", grid, "--out", "x", "--pipeline", "jpeg", "v"}, 2, `--pipeline "jpeg"`},
		{[]string{"extract", "--grid", grid, "--out", "x", "--kernel", "nearest", "v"}, 2, `--kernel "nearest"`},
		{[]string{"extract", "--grid", grid, "--out", "x", "--dtype", "i8", "v"}, 2, `--dtype "i8"`},
		{[]string{"extract", "--grid", grid, "--out", "x", "--hwaccel", "cuda", "v"}, 2, "flag provided but not defined: -hwaccel"},
		{[]string{"extract", "--grid", "g", "--out", "o", "--videos", "v", "--shard", "1/1"}, 2, "--shard"},
		{[]string{"extract", "--grid", badGrid, "--out", out, "--videos", "v"}, 1, regexp.QuoteMeta(badGrid)},
		{[]string{"verify", missing}, 1, regexp.QuoteMeta(missing)},
		{[]string{"verify"}, 2, "want exactly one CACHE"},
		// serve
		{[]string{"serve"}, 2, "--root DIR is required"},
		{[]string{"serve", "--root", dir, "extra"}, 2, "unexpected arguments"},
		{[]string{"serve", "--root", dir, "--max-inflight", "0"}, 2, "flag -max-inflight: out of range"},
		{[]string{"serve", "--root", dir, "--lru-mb", "-1"}, 2, "flag -lru-mb: out of range"},
		{[]string{"serve", "--root", dir, "--share-window", "-1s"}, 2, "flag -share-window: out of range"},
		{[]string{"serve", "--root", dir, "--worker-timeout", "-1s"}, 2, "flag -worker-timeout: out of range"},
		{[]string{"serve", "--root", dir, "--addr", "0.0.0.0:0"}, 2, "not a loopback address"},
		{[]string{"serve", "--root", dir, "--addr", ":8765"}, 2, "not a loopback address"},
		{[]string{"serve", "--root", dir, "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"serve", "--root", dir, "--stream", "0"}, 2, "flag provided but not defined: -stream"},
		{[]string{"serve", "--root", dir, "--allow-host", "http://evil.example/"}, 2, "--allow-host"},
		{[]string{"serve", "--root", missing}, 1, "missing"},
		{[]string{"serve", "--root", dir, "--token-file", empty}, 1, "the token file is empty"},
		{[]string{"serve", "--root", dir, "--token-file", filepath.Join(dir, "nope")}, 1, "nope"},
		{[]string{"serve", "--root", dir, "--addr", "127.0.0.1:99999"}, 1, "99999"},
		// ask, testmodel
		{[]string{"ask", "--question", "q", "--text-only"}, 2, "--runtime SPEC is required"},
		{[]string{"ask", "--runtime", "llamacpp:model=x", "--text-only"}, 2, "--question is required"},
		{[]string{"ask", "--runtime", "llamacpp:model=x", "--question", "q", nasa}, 2, "--preset"},
		{[]string{"ask", "--runtime", "nosuch:x=1", "--question", "q", "--text-only"}, 2, "unknown runtime engine"},
		{[]string{"ask", "--runtime", "llamacpp:model=x,bogus=1", "--question", "q", "--text-only"}, 2, "bogus"},
		{[]string{"ask", "--runtime", "llamacpp:model=x", "--question", "q", "--text-only", "--template", "nope"}, 2, "unknown template"},
		{[]string{"ask", "--runtime", "llamacpp:model=x", "--question", "q", "--policy", "uniform", "--frames", "2", "--size", "4x", nasa}, 2, `--size "4x"`},
		{[]string{"ask", "--runtime", "llamacpp:model=x", "--question", "q", "--policy", "uniform", "--frames", "2", "--llm-seed", "x", nasa}, 2, "flag -llm-seed: want an integer"},
		{[]string{"ask", "--runtime", "llamacpp:model=" + missing, "--question", "q", "--text-only", "--options", "A. x"}, 1, regexp.QuoteMeta(missing)},
		{[]string{"ask", "--runtime", "llamacpp:model=" + missing, "--question", "q", "--preset", "videomme", filepath.Join(dir, "no.mp4")}, 1, "no.mp4"},
		{[]string{"testmodel", "--out", out, "--arch", "gemma3"}, 2, `"gemma3"`},
		{[]string{"testmodel", "--arch", "qwen2vl"}, 2, "--out"},
		{[]string{"testmodel", "--out", out, "extra"}, 2, "unexpected"},
		// items import
		{[]string{"items", "import", "videomme", "f", "--out", out}, 2, "--video-dir and --out are required"},
		{[]string{"items", "import", "nope", "f", "--video-dir", dir, "--out", out}, 2, `format "nope"`},
		{[]string{"items", "import", "videomme", "f", "--references", "r", "--video-dir", dir, "--out", out}, 2, "--references and --turns are for the avsd format"},
		{[]string{"items", "import", "avsd", "f", "--turns", "some", "--video-dir", dir, "--out", out}, 2, `--turns "some"`},
		{[]string{"items", "export"}, 2, "items import"},
		// sweep
		{[]string{"sweep"}, 2, "--grid, --items, --runtime and --out are required"},
		{sw("--shard", "3/2"), 2, "--shard"},
		{sw("--shard", "env"), 2, "neither SLURM_ARRAY_TASK_ID"},
		{sw("--log-format", "xml"), 2, "--log-format"},
		{[]string{"sweep", "--grid", "g", "--items", "i", "--runtime", "nosuch:x=1", "--out", "o"}, 2, "runtime"},
		{sw("--template", "zzz"), 2, "template"},
		{sw("--cascade", "2,4"), 2, "--threshold"},
		{sw("--threshold", "0.5"), 2, "need --cascade"},
		{sw("--cascade", "2,x", "--threshold", "0.5"), 2, `--cascade "2,x"`},
		{sw("--cascade", "16,,32", "--threshold", "0.5"), 2, `--cascade "16,,32"`},
		{sw("--cascade", "2,4", "--threshold", "1.5"), 2, `flag -threshold: out of range \(want 0..1\)`},
		{sw("--kernel", "nope"), 2, `--kernel "nope"`},
		{sw("--worker-memory-mb", "-1"), 2, "flag -worker-memory-mb: out of range"},
		{[]string{"sweep", "--grid", "../../examples/sweep-grid.yaml", "--items", "/nonexistent/items.jsonl", "--runtime", "llamacpp:model=x", "--out", out}, 1, "/nonexistent/items.jsonl"},
		{realSweep(filepath.Dir(held)), 1, "already holds a sweep"},
		{realSweep(filepath.Dir(stray)), 1, "records without run.json"},
		// merge
		{[]string{"merge"}, 2, "at least one RUN"},
		{[]string{"merge", "a"}, 2, "--out"},
		{[]string{"merge", "a", "--out", "b", "--chunk-records", "0"}, 2, "flag -chunk-records: out of range"},
		{[]string{"merge", "/nonexistent/run", "--out", out}, 1, "/nonexistent/run"},
		{[]string{"merge", dir, "--out", out}, 1, "no run.json"},
		// audit, cascade
		{[]string{"audit"}, 2, "need at least one records file"},
		{[]string{"audit", bad, "--cascade", "16,8"}, 2, "must increase"},
		{[]string{"audit", bad, "--cascade-size", "10"}, 2, `--cascade-size "10" is not WxH`},
		{[]string{"audit", bad, "--cluster", "clip"}, 2, "video-id"},
		{[]string{"audit", bad}, 1, regexp.QuoteMeta(bad) + ":2"},
		{[]string{"audit", missing + ".jsonl"}, 1, "missing.jsonl"},
		{[]string{"cascade"}, 2, "need a run directory or records files"},
		{[]string{"cascade", bad, "--cascade", "8,,16"}, 2, `--cascade "8,,16"`},
		{[]string{"cascade", bad, "--html", filepath.Join(dir, "c.html")}, 1, regexp.QuoteMeta(bad)},
		// ingest (import)
		{[]string{"ingest", "lmms-eval", bad}, 2, "--config is required"},
		{[]string{"ingest", "foo", bad, "--config", "x"}, 2, `unknown format "foo"`},
		{[]string{"ingest", "nope", bad}, 2, "unknown format"},
		{[]string{"ingest", "vlmevalkit", bad, "--config", "x", "--size", "10"}, 2, `--size "10"`},
		{[]string{"ingest", "lmms-eval", bad, "--config", "x", "--size", "64x48", "--width", "64"}, 2, "exclude each other"},
		{[]string{"ingest", "lmms-eval", bad, "--config", "x", "--width", "448"}, 2, "--width and --height go together"},
		{[]string{"ingest", "lmms-eval", bad, "--config", "x", "--pred-field", "a"}, 2, "--pred-field and --answer-field go together"},
		{[]string{"ingest", "lmms-eval", bad, "--config", "x", "--rescore", "letters"}, 2, "--rescore"},
		{[]string{"ingest", "lmms-eval", bad, "--config", "x", "--correct-from", "a", "--pred-field", "p", "--answer-field", "q"}, 2, "exclude each other"},
		{[]string{"ingest", "lmms-eval", bad, "--config", "x", "--rescore", "text", "--open-ended"}, 2, "--rescore text is for multiple-choice"},
		{[]string{"ingest", "lmms-eval", bad, "--config", "x", "--wide"}, 2, "--wide is for ingest table"},
		{[]string{"ingest", "lmms-eval", bad, "--config", "x", "--config-meta", "a=frames:8"}, 2, "--config-meta is for ingest table"},
		{[]string{"ingest", "table", table, "--rescore", "text"}, 2, "--rescore is for harness logs"},
		{[]string{"ingest", "table", table, "--empty", "sometimes", "--wide"}, 2, `--empty "sometimes"`},
		{[]string{"ingest", "table", table, "--frames", "8"}, 2, "--config"},
		{[]string{"import", "lmms-eval", bad}, 2, "framesweep ingest: --config is required"},
		// bench
		{[]string{"bench", "nope"}, 2, `unknown mode "nope"`},
		{[]string{"bench", "grid", "--format", "xml"}, 2, `unknown --format "xml"`},
		{[]string{"bench", "grid", "--gops", "x"}, 2, "--gops"},
		{[]string{"bench", "grid", "--gops", "250,,60"}, 2, "--gops"},
		{[]string{"bench", "grid", "--budgets", "16,,32"}, 2, `--budgets "16,,32"`},
		{[]string{"bench", "grid", "--ladder", "zigzag"}, 2, "--ladder"},
		{[]string{"bench", "grid", "--reps", "0"}, 2, "flag -reps: out of range"},
		{[]string{"bench", "grid", "extra"}, 2, "unexpected argument"},
		{[]string{"bench", "decode", "--threads", "a"}, 2, "--threads"},
		{[]string{"bench", "decode", "--threads", "2k"}, 2, "--threads"},
		{[]string{"bench", "memory", "--size", "448"}, 2, `--size "448"`},
		{[]string{"bench", "memory", "--size", "448x448junk"}, 2, "--size"},
		{[]string{"bench", "memory", "--kernel", "nope"}, 2, `--kernel "nope"`},
		{[]string{"bench", "peers", "--peers", "pyav-once,nope"}, 2, `--peers: unknown peer "nope"`},
		{[]string{"bench", "peers", "--reps", "0"}, 2, "flag -reps: out of range"},
		// version, help
		{[]string{"version", "extra"}, 2, "unexpected argument"},
		{[]string{"help", "nope"}, 2, `unknown command "nope"`},
		{[]string{"nope"}, 2, `unknown command "nope"`},
	}
	deprecation := regexp.MustCompile("is deprecated and goes in the next release")
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			rc, stdout, errs := runCLI(c.args...)
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
				if !deprecation.MatchString(l) {
					lines = append(lines, l)
				}
			}
			name := "framesweep " + c.args[0]
			if c.args[0] == "import" {
				name = "framesweep ingest"
			}
			if c.args[0] == "nope" || c.args[0] == "help" {
				name = "framesweep"
			}
			if rc != c.code || stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], name) || !regexp.MustCompile(c.re).MatchString(lines[0]) {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q: want one line starting %q matching %q", rc, c.code, stdout, errs, name, c.re)
			}
		})
	}
}
