package sweep

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/testsupport/ollamatest"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/llamacpp"
	"github.com/framesweep/framesweep/llm/openai"
	"github.com/framesweep/framesweep/llm/testmodel"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

const (
	testItems = "../examples/items.jsonl"
	testGrid  = "../examples/sweep-grid.yaml"
)

// tinyRuntime is the tiny random-weight llama.cpp model in process (its answers are noise).
func tinyRuntime(t testing.TB) (llm.Runtime, llm.Spec) {
	t.Helper()
	tm, err := testmodel.Write(t.TempDir(), testmodel.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	raw := "llamacpp:model=" + tm.Model + ",mmproj=" + tm.Mmproj + ",threads=1"
	sp, err := llm.ParseSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := llamacpp.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, sp
}

func testOptions(t testing.TB, out string, rt llm.Runtime, sp llm.Spec, gridPath string) Options {
	t.Helper()
	g, err := grid.Load(gridPath)
	if err != nil {
		t.Fatal(err)
	}
	its, err := items.Read(testItems)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Grid: g, GridPath: gridPath, Items: its, Runtime: rt, Spec: sp, Out: out, Jobs: 2,
		Libraries: pipeline.Libraries()}
}

// readRun reads RUN/records.jsonl: every line must be a whole record, one per pair.
func readRun(t testing.TB, dir string) map[record.Pair]record.Full {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[record.Pair]record.Full{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r record.Full
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("torn or bad line %q: %v", sc.Text(), err)
		}
		k := record.Pair{Item: r.ItemID, Config: r.Config}
		if _, dup := out[k]; dup {
			t.Fatalf("two records of %v", k)
		}
		out[k] = r
	}
	return out
}

// TestSweepEndToEnd: examples/items.jsonl × examples/sweep-grid.yaml (text-only, 2 budgets,
// 2 resolutions, raw and cached) through llama.cpp in process. One record per pair; each video is
// decoded once (frames decoded = the union); the frames fed are extract's objects for the same grid;
// the RUN audits; a resume does nothing; another sweep on the RUN is refused.
func TestSweepEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	run := filepath.Join(t.TempDir(), "run")
	o := testOptions(t, run, rt, sp, testGrid)
	sum, err := Run(ctx, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	n := len(o.Items.Items) * len(o.Grid.Configs)
	if len(o.Grid.Configs) < 6 || sum.Pairs != n || sum.PairsDone != n || sum.PairsFailed != 0 || sum.PairsRemaining != 0 {
		t.Fatalf("summary %+v", sum)
	}
	for _, v := range sum.PerVideo {
		if v.FramesDecoded != v.FramesUnion || v.FramesUnion == 0 {
			t.Errorf("%s: decoded %d frames for a union of %d", v.Video, v.FramesDecoded, v.FramesUnion)
		}
	}
	recs := readRun(t, run)
	if len(recs) != n {
		t.Fatalf("%d records for %d pairs", len(recs), n)
	}

	// The same grid through extract: every visual record's input is that object's frames tensor.
	store, err := cache.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var videos []string
	for _, v := range sum.PerVideo {
		videos = append(videos, v.Video)
	}
	if _, err := extract.Run(ctx, extract.Options{Grid: o.Grid, Store: store, Jobs: 1}, videos); err != nil {
		t.Fatal(err)
	}
	for k, r := range recs {
		if r.Status != record.StatusOK {
			t.Fatalf("%v: %s", k, r.Error)
		}
		if r.ConfigMeta.TextOnly != nil && *r.ConfigMeta.TextOnly {
			if r.InputSHA256 != "" || len(r.ConfigMeta.Indices) != 0 {
				t.Errorf("text-only record has an input: %+v", r)
			}
			continue
		}
		in, _, err := pipeline.LoadInput(ctx, store, r.InputKey)
		if err != nil {
			t.Fatalf("%v: extract has no object for key %s: %v", k, r.InputKey, err)
		}
		if got := sha(in.Tensor.Data); got != r.InputSHA256 {
			t.Fatalf("%v: fed %s, extract's object holds %s", k, r.InputSHA256, got)
		}
		// The object is the one built for this record's config: the engine's plan of the video gives
		// its key to exactly the configs whose inputs are those bytes (the object names the first).
		if serves := jobConfigs(t, r.Video, o.Grid)[r.InputKey]; !slices.Contains(serves, r.Config) || !slices.Contains(serves, in.Config) ||
			!slices.Equal(in.Indices, r.ConfigMeta.Indices) || in.Pipeline != r.ConfigMeta.Pipeline {
			t.Fatalf("%v: object %s (config %s, indices %v) is not this config's input (plan: %v serve it)", k, r.InputKey, in.Config, in.Indices, serves)
		}
		if r.Prediction == "" && r.Response == "" || r.LatencyS == nil || r.PromptSHA256 == "" || len(r.Probs) == 0 || r.ModelSHA256["model"] == "" {
			t.Fatalf("%v: provenance missing: %+v", k, r)
		}
	}
	recsAudit, err := record.ReadPaths([]string{run})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audit.Analyze(recsAudit, audit.DefaultOptions()); err != nil {
		t.Fatalf("audit of the RUN: %v", err)
	}

	// Resume: everything is recorded, nothing is decoded or asked again.
	o.Resume = true
	again, err := Run(ctx, nil, o)
	if err != nil || again.PairsDone != 0 || again.PairsRecorded != n || again.FramesDecoded != 0 {
		t.Fatalf("resume: %+v %v", again, err)
	}
	if len(readRun(t, run)) != n {
		t.Fatal("resume changed the records")
	}
	// Without --resume an existing RUN is refused; another grid is refused even with it.
	o.Resume = false
	if _, err := Run(ctx, nil, o); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("existing RUN without --resume: %v", err)
	}
	other := testOptions(t, run, rt, sp, filepath.Join("..", "examples", "demo-grid.yaml"))
	other.Resume = true
	if _, err := Run(ctx, nil, other); !errors.Is(err, runs.ErrMismatch) || !strings.Contains(err.Error(), "grid") {
		t.Fatalf("another grid: %v", err)
	}
}

// TestSweepAfterExtractDecodesNothing: with --cache holding extract's objects, a sweep decodes no
// frame and feeds the same inputs (same predictions) as a sweep that builds its own.
func TestSweepAfterExtractDecodesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	dir := t.TempDir()
	o := testOptions(t, filepath.Join(dir, "a"), rt, sp, testGrid)
	if _, err := Run(ctx, nil, o); err != nil {
		t.Fatal(err)
	}
	store, err := cache.Open(ctx, filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	var videos []string
	for _, it := range o.Items.Items {
		videos = append(videos, it.Video)
	}
	if _, err := extract.Run(ctx, extract.Options{Grid: o.Grid, Store: store, Jobs: 1}, dedupe(videos)); err != nil {
		t.Fatal(err)
	}
	b := testOptions(t, filepath.Join(dir, "b"), rt, sp, testGrid)
	b.Cache = store
	sum, err := Run(ctx, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if sum.FramesDecoded != 0 || sum.InputsBuilt != 0 || sum.InputsCached == 0 {
		t.Fatalf("after extract: %+v", sum)
	}
	ra, rb := readRun(t, o.Out), readRun(t, b.Out)
	for k, x := range ra {
		if y := rb[k]; y.Prediction != x.Prediction || y.InputSHA256 != x.InputSHA256 || !sameProbs(x.Probs, y.Probs) {
			t.Fatalf("%v: %q/%s vs %q/%s", k, x.Prediction, x.InputSHA256, y.Prediction, y.InputSHA256)
		}
	}
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func sameProbs(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSweepPairFailures: a config that cannot be planned for one video (8 frames of the 3-frame
// clip) gets an error record per item with the reason; every other pair is answered; audit counts
// the error records and leaves them out.
func TestSweepPairFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	grid := filepath.Join(t.TempDir(), "grid.yaml")
	testenv.WriteFile(t, grid, []byte("frames: [2, 8]\npolicies: [uniform]\nresolutions: [\"32x32\"]\ntext_only: true\n"))
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, grid)
	o.Items.Items = append(o.Items.Items, items.Item{ItemID: "missing-1", Video: filepath.Join(t.TempDir(), "gone.mp4"), Question: "Q?", Options: []string{"A. a", "B. b"}, Answer: "A"})
	sum, err := Run(ctx, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	recs := readRun(t, o.Out)
	var kinds []string
	for k, r := range recs {
		if r.Status != record.StatusError {
			continue
		}
		switch {
		case strings.HasPrefix(k.Item, "keyboard") && k.Config == "f8-uniform-32x32-raw" && strings.Contains(r.Error, "video_90.mov") && strings.Contains(r.Error, "3 frames"):
			kinds = append(kinds, "plan")
		case k.Item == "missing-1" && k.Config != "text-only" && strings.Contains(r.Error, "gone.mp4"):
			kinds = append(kinds, "missing")
		default:
			t.Errorf("unexpected error record %v: %s", k, r.Error)
		}
	}
	// 3 keyboard items at f8, and the missing video's 2 visual configs (its text-only pair is answered).
	if len(kinds) != 5 || sum.PairsFailed != 5 || sum.PairsDone != len(recs)-5 {
		t.Fatalf("error records %v, summary %+v", kinds, sum)
	}
	if r := recs[record.Pair{Item: "missing-1", Config: "text-only"}]; r.Status != record.StatusOK {
		t.Errorf("text-only pair of a missing video: %+v", r)
	}
	all, err := record.ReadPaths([]string{o.Out})
	if err != nil {
		t.Fatal(err)
	}
	res, err := audit.Analyze(all, audit.DefaultOptions())
	if err != nil || res.ErrorRecords.Count != 5 {
		t.Fatalf("audit: %+v %v", res.ErrorRecords, err)
	}
}

// TestSweepTornTail: a crash can leave a last line without its newline; resume cuts it (and only it)
// and answers that pair again, once.
func TestSweepTornTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, testGrid)
	o.Limit = 2
	if _, err := Run(ctx, nil, o); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(o.Out, "records.jsonl")
	b := mustRead(t, path)
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	last := lines[len(lines)-1]
	torn := strings.Join(lines[:len(lines)-1], "") + last[:len(last)/2] // the last record half written
	testenv.WriteFile(t, path, []byte(torn))
	o.Resume = true
	sum, err := Run(ctx, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.TornBytes != int64(len(last)/2) || sum.PairsDone != 1 {
		t.Fatalf("torn tail: %+v", sum)
	}
	if len(readRun(t, o.Out)) != len(lines) {
		t.Fatal("records after the repair")
	}
	// A line in the middle that is no record: the file is not a sweep's, refused.
	testenv.WriteFile(t, path, []byte("hello\n"+string(b)))
	if _, err := Run(ctx, nil, o); err == nil || !strings.Contains(err.Error(), "records.jsonl:1") {
		t.Fatalf("foreign records file: %v", err)
	}
}

// TestSweepShards: two shards of the same sweep cover every pair exactly once between them, each
// holding whole videos.
func TestSweepShards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	seen := map[record.Pair]int{}
	videos := map[string]int{}
	for i := 0; i < 2; i++ {
		o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, testGrid)
		o.Shard = Shard{I: i, N: 2}
		if _, err := Run(ctx, nil, o); err != nil {
			t.Fatal(err)
		}
		for k, r := range readRun(t, o.Out) {
			seen[k]++
			if s, ok := videos[r.Video]; ok && s != i {
				t.Fatalf("video %s in two shards", r.Video)
			}
			videos[r.Video] = i
		}
	}
	o := testOptions(t, "", rt, sp, testGrid)
	if want := len(o.Items.Items) * len(o.Grid.Configs); len(seen) != want {
		t.Fatalf("shards cover %d pairs of %d", len(seen), want)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%v in %d shards", k, n)
		}
	}
}

// TestSweepStop: closing stop ends the session with ErrInterrupted after the answers in flight,
// leaving a RUN that --resume completes with exactly one record per pair.
func TestSweepStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, testGrid)
	stop := make(chan struct{})
	var once sync.Once
	o.Progress = progressFunc(func(*record.Full) { once.Do(func() { close(stop) }) })
	sum, err := Run(ctx, stop, o)
	if !errors.Is(err, ErrInterrupted) || sum.Stopped != "signal" || sum.PairsRemaining == 0 {
		t.Fatalf("stopped: %+v %v", sum, err)
	}
	o.Progress, o.Resume = nil, true
	sum2, err := Run(ctx, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	n := len(o.Items.Items) * len(o.Grid.Configs)
	if got := len(readRun(t, o.Out)); got != n || sum2.PairsDone != n-sum.PairsDone-sum.PairsFailed {
		t.Fatalf("%d records for %d pairs (%+v)", got, n, sum2)
	}
	var ri runs.Info
	b := mustRead(t, filepath.Join(o.Out, "run.json"))
	if err := json.Unmarshal(b, &ri); err != nil || len(ri.Sessions) != 2 || ri.Sessions[0].Stopped != "signal" || !ri.Sessions[1].Resumed {
		t.Fatalf("run.json sessions %+v %v", ri.Sessions, err)
	}
}

// jobConfigs plans grid for the video at path (as the sweep does) and returns, per input key, the
// configs whose input those bytes are.
func jobConfigs(t testing.TB, path string, g *grid.Grid) map[string][]string {
	t.Helper()
	if m, ok := planned[path]; ok {
		return m
	}
	v, src, err := pipeline.OpenVideo(context.Background(), pipeline.VideoRef{Path: path}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src.Close()
	var visual []grid.Config
	for _, c := range g.Configs {
		if !c.TextOnly {
			visual = append(visual, c)
		}
	}
	jobs, _, err := pipeline.PlanJobs(v, visual, pipeline.Options{Stream: g.Spec.Stream})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, j := range jobs {
		for _, c := range j.Configs {
			m[j.Key] = append(m[j.Key], c.ID)
		}
	}
	planned[path] = m
	return m
}

var planned = map[string]map[string][]string{}

type progressFunc func(*record.Full)

func (progressFunc) Start(int)             {}
func (f progressFunc) Pair(r *record.Full) { f(r) }
func (progressFunc) Finish()               {}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestSweepOpenAI: the same items through the openai runtime against a real OpenAI-compatible server
// (ollama built from the pinned module, serving the tiny model on 127.0.0.1), two answers in flight.
func TestSweepOpenAI(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and starts the ollama server")
	}
	url := ollamatest.Start(t, ollamatest.Build(t))
	raw := "openai:url=" + url + ",model=tiny,concurrency=2,timeout=120s"
	sp, err := llm.ParseSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := openai.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	grid := filepath.Join(t.TempDir(), "grid.yaml")
	testenv.WriteFile(t, grid, []byte("frames: [2]\npolicies: [uniform]\nresolutions: [\"64x48\"]\npipelines: [raw, cached]\ntext_only: true\n"))
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, grid)
	o.Concurrency = 2
	o.Limit = 4
	sum, err := Run(context.Background(), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	recs := readRun(t, o.Out)
	if len(recs) != 4*3 || sum.PairsFailed != 0 {
		t.Fatalf("%d records, summary %+v", len(recs), sum)
	}
	for k, r := range recs {
		if r.Status != record.StatusOK || len(r.Probs) == 0 || r.RequestSHA256 == "" || r.Runtime != raw {
			t.Fatalf("%v: %+v", k, r)
		}
		if r.Model != "tiny:latest" || r.WeightsSHA256 != "" { // the server's name for it; its weights are the server's
			t.Fatalf("%v: model %q weights %q", k, r.Model, r.WeightsSHA256)
		}
		if r.InputKey != "" && r.ImageFormat != "png" {
			t.Fatalf("%v: frames went as %q, want lossless png", k, r.ImageFormat)
		}
		// The visual-token check against a real server: "tiny" names no family, so nothing is
		// expected and nothing warned; what the server counted of the frames (the text-only
		// difference) is recorded, the same for the raw and cached inputs of an item.
		if v := r.VisualTokens; r.InputKey != "" {
			other := recs[record.Pair{Item: k.Item, Config: strings.Replace(k.Config, "-raw", "-cached", 1)}].VisualTokens
			if v == nil || v.Expected != nil || v.Seen == nil || *v.Seen <= 0 || v.How != llm.HowTextOnly || !strings.Contains(v.Why, "unknown family") ||
				other == nil || other.Seen == nil || *other.Seen != *v.Seen {
				t.Fatalf("%v: visual_tokens %+v, its cached config's %+v", k, v, other)
			}
		}
	}
	if len(sum.VisualTokenWarnings) != 0 {
		t.Errorf("a false visual-token warning: %v", sum.VisualTokenWarnings)
	}
}

// TestSweepInputPaths: the inputs a runtime is fed are the same bytes whichever way they reach it:
// from the decoding pass's memory (the default), streamed through the scratch store and read back
// (an input over InputMemory), or tee'd into a --cache on the way; the --cache then holds the same
// objects extract writes, and a second sweep on it decodes nothing. The scratch store is gone after
// each session.
func TestSweepInputPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	dir := t.TempDir()
	run := func(name string, edit func(*Options)) (*Summary, map[record.Pair]record.Full) {
		t.Helper()
		o := testOptions(t, filepath.Join(dir, name), rt, sp, testGrid)
		o.Limit = 4
		edit(&o)
		sum, err := Run(ctx, nil, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(o.Out, "scratch")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: scratch store left behind (%v)", name, err)
		}
		return sum, readRun(t, o.Out)
	}
	memSum, mem := run("memory", func(*Options) {})
	spillSum, spill := run("spill", func(o *Options) { o.InputMemory = 1 })
	store, err := cache.Open(ctx, filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	teeSum, tee := run("tee", func(o *Options) { o.Cache = store })
	againSum, again := run("again", func(o *Options) { o.Cache = store })
	for _, s := range []*Summary{memSum, spillSum, teeSum} {
		if s.InputsBuilt == 0 || s.InputsCached != 0 || s.FramesDecoded != s.FramesUnion {
			t.Fatalf("a building session: %+v", s)
		}
	}
	if againSum.InputsBuilt != 0 || againSum.FramesDecoded != 0 || againSum.InputsCached != teeSum.InputsBuilt {
		t.Fatalf("the second sweep on the cache: %+v (the first built %d)", againSum, teeSum.InputsBuilt)
	}
	visual := 0
	for k, m := range mem {
		for name, other := range map[string]map[record.Pair]record.Full{"spill": spill, "tee": tee, "again": again} {
			if o := other[k]; o.InputSHA256 != m.InputSHA256 || o.InputKey != m.InputKey || o.Prediction != m.Prediction || !sameProbs(o.Probs, m.Probs) {
				t.Fatalf("%v: %s fed %s (%q), memory fed %s (%q)", k, name, o.InputSHA256, o.Prediction, m.InputSHA256, m.Prediction)
			}
		}
		if m.InputKey == "" {
			continue
		}
		visual++
		in, _, err := pipeline.LoadInput(ctx, store, m.InputKey)
		if err != nil || sha(in.Tensor.Data) != m.InputSHA256 {
			t.Fatalf("%v: the tee'd object: %v", k, err)
		}
	}
	if visual == 0 {
		t.Fatal("no visual record: the comparison proves nothing")
	}
}

// mustMkdir makes a test directory (and its parents).
func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// mustRead reads a test file.
func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
