package main

import (
	"flag"
	"math"
	"strings"
	"time"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// The range of every numeric flag, by command (as newFlags names it: "sweep", "bench grid") and flag.
// parseInterleaved checks each value given against it as the flag is parsed, so a value out of range
// (NaN and ±Inf included, which a later "v < 0" check lets through) is one usage line naming the flag,
// exit 2, before any work. A flag's default is not checked: -1 or 0 may mean "not given".
// TestNumericFlagsHaveRanges fails when a numeric flag has no entry here.
var (
	rAnySeed   = num.Any // a seed: every value of its type
	rFrames    = num.In(0, sampler.MaxFrames)
	rBudget    = num.In(0, sampler.MaxBudget)
	rSampleFPS = num.In(0, 1000) // the grid's sample_fps bound
	rSeconds   = num.AtLeast(0)
	rPixels    = num.In(0, 1e12)
	rStream    = num.In(-1, 65535) // -1: FFmpeg's best video stream, as the default
	rJobs      = num.In(1, 1024)
	rThreads   = num.In(0, 4096)
	rMiB       = num.In(0, 1<<24) // 16 TiB: MiB << 20 stays far from int64's end
	rReps      = num.In(1, 100000)
	rWarmup    = num.In(0, 100000)
	rFolds     = num.In(0, cascade.MaxFolds)
	rTimeout   = num.Range{Lo: 0, Hi: (7 * 24 * time.Hour).Seconds(), Unit: "s"}
	rTokens    = num.In(0, llm.MaxMaxTokens)
	rTemp      = num.In(0, llm.MaxTemperature)
	rChunks    = num.In(1, 1<<24)
)

var (
	loaderRanges = map[string]num.Range{"frames": rFrames, "sample-fps": rSampleFPS, "min-frames": rFrames, "max-frames": rFrames,
		"image-patch-size": num.In(0, 64), "min-pixels": rPixels, "max-pixels": rPixels, "total-pixels": rPixels}
	analysisRanges = map[string]num.Range{"bootstrap-seed": rAnySeed, "folds": rFolds, "reference": rBudget}
	benchRanges    = map[string]num.Range{"reps": rReps, "warmup": rWarmup}
	importRanges   = map[string]num.Range{"frames": rBudget, "max-pixels": num.In(1, maxImportPixels)}
	workerRanges   = map[string]num.Range{"worker-memory-mb": rMiB, "worker-timeout": rTimeout}
	decodeRanges   = with(workerRanges, map[string]num.Range{"stream": rStream})
)

var flagRanges = map[string]map[string]num.Range{
	"probe": decodeRanges,
	"plan": with(loaderRanges, map[string]num.Range{"total-frames": num.In(1, sampler.MaxFrames), "fps": num.Above(0, 100000),
		"duration": rSeconds, "sampler-seed": rAnySeed, "start-s": rSeconds, "end-s": rSeconds, "stream": rStream}),
	"frames":  with(loaderRanges, with(decodeRanges, map[string]num.Range{"max-memory-mb": num.In(1, 1<<24)})),
	"extract": with(decodeRanges, map[string]num.Range{"jobs": rJobs}),
	"serve": with(workerRanges, map[string]num.Range{"max-inflight": num.In(1, 65536), "max-bodies": num.In(1, 65536), "max-per-client": num.In(1, 65536), "max-response-mb": num.In(1, 1<<20), "max-frames": num.In(1, sampler.MaxFrames),
		"lru-mb": rMiB, "share-window": num.Range{Lo: 0, Hi: 60, Unit: "s"}}),
	"ask": with(decodeRanges, map[string]num.Range{"frames": rFrames, "sample-fps": rSampleFPS, "sampler-seed": rAnySeed, "llm-seed": rAnySeed,
		"max-tokens": rTokens, "temperature": rTemp}),
	"testmodel": {"weights-seed": rAnySeed},
	"doctor":    {"timeout": num.Range{Lo: 0, Hi: 60, LoOpen: true, Unit: "s"}},
	"sweep": with(decodeRanges, map[string]num.Range{"jobs": rJobs, "limit": num.In(0, math.MaxInt32), "max-tokens": rTokens, "temperature": rTemp, "llm-seed": rAnySeed,
		"threshold": num.In(0, 1), "folds": rFolds, "chunk-records": rChunks, "chunk-interval": num.Range{Lo: 0, Hi: 86400, LoOpen: true, Unit: "s"},
		"stop-grace": num.Range{Lo: 0, Hi: 3600, Unit: "s"}}),
	"merge":        {"chunk-records": rChunks},
	"audit":        with(analysisRanges, map[string]num.Range{"resamples": num.In(0, audit.MaxResamples), "epsilon": num.In(0, 1)}),
	"cascade":      analysisRanges,
	"ingest":       importRanges,
	"bench grid":   benchRanges,
	"bench decode": with(benchRanges, map[string]num.Range{"compare": num.In(1, 100000)}),
	"bench memory": {"frames": num.In(1, sampler.MaxBudget), "threads": rThreads},
	"bench peers":  with(benchRanges, map[string]num.Range{"stream": rStream}),
	"bench resize": with(benchRanges, map[string]num.Range{"workers": rThreads}),
}

// hiddenRanges are the ranges of old spellings that are flags of their own (deprecatedVar), which help
// does not list.
var hiddenRanges = map[string]map[string]num.Range{
	"ingest": {"width": num.In(1, geom.MaxSide), "height": num.In(1, geom.MaxSide)},
}

// with is the union of two flag tables.
func with(a, b map[string]num.Range) map[string]num.Range {
	out := make(map[string]num.Range, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// flagRange is the range of command fs's flag name, if it has one.
func flagRange(fs *flag.FlagSet, name string) (num.Range, bool) {
	cmd := strings.TrimPrefix(fs.Name(), "framesweep ")
	if r, ok := flagRanges[cmd][name]; ok {
		return r, true
	}
	r, ok := hiddenRanges[cmd][name]
	return r, ok
}

// checkValue checks a parsed flag value (flag.Getter's) against r; values that are not numbers pass.
func checkValue(r num.Range, v any) error {
	switch x := v.(type) {
	case int:
		return r.CheckInt(int64(x))
	case int64:
		return r.CheckInt(x)
	case uint:
		return r.Check(float64(x))
	case uint64:
		return r.Check(float64(x))
	case float64:
		return r.Check(x)
	case time.Duration:
		return r.Check(x.Seconds())
	}
	return nil
}

// setFlag sets fs's flag name to value as the command line would, range included: an export's
// recorded options (adoptManifest) go through the same check as typed ones.
func setFlag(fs *flag.FlagSet, name, value string) error {
	if err := fs.Set(name, value); err != nil {
		return err
	}
	r, ok := flagRange(fs, name)
	g, isGetter := fs.Lookup(name).Value.(flag.Getter)
	if !ok || !isGetter {
		return nil
	}
	return checkValue(r, g.Get())
}
