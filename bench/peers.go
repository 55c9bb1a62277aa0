package bench

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/record"
)

// peersFS holds the Python baselines and the default grid, so `framesweep bench peers` runs from any
// directory; the same files are in the repository under bench/peers/ and run standalone.
//
//go:embed peers/*.py peers/grid.yaml
var peersFS embed.FS

// The peers, in the order every repetition runs them.
const (
	PeerFramesweep    = "framesweep-extract" // (a) `framesweep extract` (the binary, as a subprocess)
	PeerPyAVPerConfig = "pyav-per-config"    // (b) lmms-eval's read_video_pyav, once per config
	PeerPyAVOnce      = "pyav-once"          // (c) PyAV, one decode over the union
	PeerOpenCV        = "opencv-seek"        // (d) cv2.VideoCapture, a seek per index, per config
	PeerFFmpeg        = "ffmpeg-decode"      // (e) `ffmpeg -i V -map 0:S -f null -`: a bare full decode of stream S, the floor
	PeerPyAVSeek      = "pyav-seek"          // (f) a keyframe-seek reader per config, as decord and torchcodec read
)

// PeerNames lists every peer in run order.
var PeerNames = []string{PeerFramesweep, PeerPyAVPerConfig, PeerPyAVOnce, PeerOpenCV, PeerFFmpeg, PeerPyAVSeek}

var peerScripts = map[string]string{
	PeerPyAVPerConfig: "pyav_per_config.py",
	PeerPyAVOnce:      "pyav_once.py",
	PeerOpenCV:        "opencv_seek.py",
	PeerPyAVSeek:      "pyav_seek.py",
}

// PeerTarget is a target for framesweep's time ÷ a peer's: wall time, and CPU time when CPU > 0.
type PeerTarget struct{ Wall, CPU float64 }

// PeerTargets are the issues' targets (framesweep ÷ peer) by generated clip name (Clip's file name):
// the 60 s 1080p H.264 and HEVC clips and the 600 s 720p H.264 clip. They are reported beside the
// ratios ("met"/"missed" in the summary row), never asserted.
var PeerTargets = map[string]map[string]PeerTarget{
	BenchClip(250).name():     {PeerPyAVOnce: {Wall: 0.33}, PeerPyAVPerConfig: {Wall: 0.2}, PeerFFmpeg: {Wall: 1.3}},
	HEVCBenchClip(250).name(): {PeerPyAVOnce: {Wall: 0.33}, PeerPyAVPerConfig: {Wall: 0.2}, PeerFFmpeg: {Wall: 1.3}},
	LongBenchClip().name():    {PeerPyAVSeek: {Wall: 0.40, CPU: 0.70}, PeerPyAVOnce: {Wall: 0.25}},
}

// SharedPeerVideos are the real videos (relative to ../shared/testdata/videos) the default run adds to
// the generated clips: H.264 with a B-pyramid (mp4), real footage (mp4) and H.264 in Matroska.
var SharedPeerVideos = []string{
	"androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4",
	"torchcodec/nasa_13013.mp4",
	"decord/flipping_a_pancake.mkv",
}

// LongBenchClip is the long-video case: 600 s of 720p30 H.264 (libx264 veryfast, its default
// B-frames), GOP 250; the lmms-eval grid's 106-frame union then lies in 61 GOPs of 72.
func LongBenchClip() Clip {
	return Clip{Seconds: 600, Width: 1280, Height: 720, FPS: 30, GOP: 250, Codec: "h264", Bits: 8}
}

// HEVCBenchClip is the HEVC twin of BenchClip: 60 s of 1080p30 (libx265 veryfast, 8-bit).
func HEVCBenchClip(gop int) Clip {
	c := BenchClip(gop)
	c.Codec = "hevc"
	return c
}

// PeersConfig configures the peers benchmark. Zero values take the defaults noted.
type PeersConfig struct {
	// Videos to serve; empty = the generated 60 s 1080p30 H.264 and HEVC clips and the 600 s 720p30
	// H.264 clip (GOP 250), plus SharedPeerVideos found under Shared.
	Videos []string
	Shared string // directory of the shared real videos ("" = none)
	// Grid is the grid YAML served; "" = bench/peers/grid.yaml (lmms-eval, 8/16/32/64 frames, 448×448).
	Grid string
	// Stream is the video stream to serve (its index in the file); nil = framesweep's choice, FFmpeg's
	// best video stream. Every peer decodes the same stream; one that cannot is refused.
	Stream     *int
	Framesweep string    // the framesweep binary that runs (a) (required)
	Python     string    // interpreter with numpy, Pillow, PyAV, OpenCV (default /usr/bin/python3, else python3)
	Peers      []string  // the peers to run (default PeerNames; PeerFramesweep always runs)
	Reps       int       // measured repetitions (median reported; default 1)
	Warmup     int       // unmeasured repetitions first (the check runs already read the file once)
	CacheDir   string    // where clips are generated (default CacheDir())
	WorkDir    string    // scratch space for caches and dumps (default os.TempDir()); removed afterwards
	Log        io.Writer // progress lines; nil = quiet
}

// ErrPeer reports a peer (or framesweep itself) that failed or served something else than the plan.
var ErrPeer = errors.New("bench peers")

// peerConfig is one grid config as framesweep served it: the plan and the output size, and the
// object holding framesweep's frames (the reference for the PSNR check).
type peerConfig struct {
	ID      string `json:"id"`
	Indices []int  `json:"indices"`
	Width   int    `json:"width"`
	Height  int    `json:"height"`
	object  string
}

type peerSpec struct {
	Video        string       `json:"video"`
	Stream       int          `json:"stream"`        // the stream to decode (its index in the file)
	VideoStreams []int        `json:"video_streams"` // every video stream of the file
	Configs      []peerConfig `json:"configs"`
	Dump         *string      `json:"dump"`
}

// peerOutput is what a Python peer prints (bench/peers/common.py).
type peerOutput struct {
	Peer          string            `json:"peer"`
	Stream        *int              `json:"stream"` // the stream it decoded
	Versions      map[string]string `json:"versions"`
	Decoder       map[string]any    `json:"decoder"`
	ImportS       float64           `json:"import_s"`
	WorkS         float64           `json:"work_s"`
	DecodedFrames *int              `json:"decoded_frames"`
	Configs       []struct {
		ID     string `json:"id"`
		Served []int  `json:"served"`
		Shape  []int  `json:"shape"`
	} `json:"configs"`
}

// extractSummary is the part of `framesweep extract`'s JSON summary the bench reads.
type extractSummary struct {
	Manifest        string  `json:"manifest"`
	Objects         int     `json:"objects"`
	FramesRequested int     `json:"frames_requested"`
	FramesUnion     int     `json:"frames_union"`
	FramesDecoded   int     `json:"frames_decoded"`
	CodecFrames     int     `json:"codec_frames"`
	Seconds         float64 `json:"seconds"`
	PerVideo        []struct {
		StreamIndex int `json:"stream_index"`
	} `json:"per_video"`
}

// peerRun is one peer's measurements for one video.
type peerRun struct {
	name            string
	wall, cpu, rss  []float64 // per measured repetition: seconds, seconds, MiB
	importS, workS  []float64 // Python peers: the script's own import and work time
	selfS           []float64 // framesweep: extract's own "seconds"
	out             *peerOutput
	check           *peerCheck
	failure         string
	refused         string    // the peer cannot open the plan's stream (its one line): not run, not failed
	stream          int       // the stream it decodes
	loads           []runLoad // per measured repetition: the machine around the run
	run             func(ctx context.Context, rep int) (procStats, error)
	extractSummary  *extractSummary
	framesRequested int
}

// Peers times building one grid's inputs (the same indices, Pillow bicubic to the same output sizes)
// by framesweep and by what users run today, each as its own process, per video:
//
//	(a) framesweep-extract  `framesweep extract --grid G --videos V --out DIR --pipeline raw`
//	(b) pyav-per-config     lmms-eval's read_video_pyav per config (bench/peers/pyav_per_config.py)
//	(c) pyav-once           PyAV decode-once over the union (bench/peers/pyav_once.py)
//	(d) opencv-seek         cv2.VideoCapture, a seek per index, per config (bench/peers/opencv_seek.py)
//	(e) ffmpeg-decode       `ffmpeg -i V -map 0:S -f null -`, a bare full decode (the floor)
//	(f) pyav-seek           a keyframe-seek reader over the union (bench/peers/pyav_seek.py)
//
// Every side decodes the same stream S: framesweep's (FFmpeg's best video stream, or cfg.Stream), as
// `framesweep probe` names it; a peer that cannot open it (OpenCV reads only the first video stream)
// is refused: a skipped row with its one-line reason, not a failure. The load average and the CPU
// other processes used are read around every timed run, and a pair (framesweep's run and a peer's in
// one repetition) measured above the core count is marked in the rows.
//
// Wall time is measured here; CPU time (user+sys) and peak RSS come from the child's rusage (wait4, through
// GNU time: see gnuTime). First an untimed
// check run: framesweep's extract gives the plan and the reference frames; each Python peer dumps its
// arrays, which must have the plan's indices and shapes, and their PSNR against framesweep's frames is
// reported. Then Reps interleaved timed repetitions (extract writes to a fresh cache each time).
// Rows: one per peer, with ratios framesweep ÷ peer, and a summary row per video.
func Peers(ctx context.Context, cfg PeersConfig) ([]Row, error) {
	if cfg.Framesweep == "" {
		return nil, fmt.Errorf("%w: no framesweep binary given", ErrPeer)
	}
	if cfg.Reps <= 0 {
		cfg.Reps = 1
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = CacheDir()
	}
	if cfg.Python == "" {
		cfg.Python = DefaultPython()
	}
	if len(cfg.Peers) == 0 {
		cfg.Peers = PeerNames
	}
	for _, p := range cfg.Peers {
		if !slices.Contains(PeerNames, p) {
			return nil, fmt.Errorf("%w: unknown peer %q (peers: %s)", ErrPeer, p, strings.Join(PeerNames, ", "))
		}
	}
	work, err := os.MkdirTemp(cfg.WorkDir, "framesweep-peers-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	scripts := filepath.Join(work, "scripts")
	if err := writePeerFiles(scripts); err != nil {
		return nil, err
	}
	grid := cfg.Grid
	if grid == "" {
		grid = filepath.Join(scripts, "grid.yaml")
	}
	videos := cfg.Videos
	if len(videos) == 0 {
		for _, c := range []Clip{BenchClip(250), HEVCBenchClip(250), LongBenchClip()} {
			logf(cfg.Log, "bench: clip %s (generated once into %s)", c.name(), cfg.CacheDir)
			p, err := EnsureClip(ctx, cfg.CacheDir, c)
			if err != nil {
				return nil, err
			}
			videos = append(videos, p)
		}
		for _, rel := range SharedPeerVideos {
			if cfg.Shared == "" {
				break
			}
			p := filepath.Join(cfg.Shared, rel)
			if _, err := os.Stat(p); err != nil {
				logf(cfg.Log, "bench: shared video %s not found, skipped", p)
				continue
			}
			videos = append(videos, p)
		}
	}
	env := CurrentEnv()
	var rows []Row
	var failures []string
	for vi, v := range videos {
		abs, err := filepath.Abs(v)
		if err != nil {
			return rows, err
		}
		// The targets are for the generated clips (given by --video too: they are known by name).
		vr, fails, err := peersVideo(ctx, cfg, env, abs, PeerTargets[filepath.Base(v)], grid, scripts, filepath.Join(work, strconv.Itoa(vi)))
		rows = append(rows, vr...)
		if err != nil { // the context ended or the machine failed (disk), not a peer
			return rows, err
		}
		failures = append(failures, fails...)
	}
	if len(failures) > 0 {
		return rows, fmt.Errorf("%w: %d failed: %s", ErrPeer, len(failures), strings.Join(failures, "; "))
	}
	return rows, nil
}

// DefaultPython is Debian's interpreter when present (pyenv's python3 on PATH lacks PyAV and OpenCV).
func DefaultPython() string {
	if st, err := os.Stat("/usr/bin/python3"); err == nil && !st.IsDir() {
		return "/usr/bin/python3"
	}
	return "python3"
}

func writePeerFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ents, err := peersFS.ReadDir("peers")
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := peersFS.ReadFile("peers/" + e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", a...)
	}
}

// peersVideo runs every peer on one video. Failures of a peer are recorded in its row and returned as
// strings; err is for what ends the whole benchmark (context, scratch disk).
func peersVideo(ctx context.Context, cfg PeersConfig, env Env, video string, targets map[string]PeerTarget, grid, scripts, work string) ([]Row, []string, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(work)
	base := "Peers/video=" + filepath.Base(video)
	load0 := loadAvg()
	fs, configs, stream, fail := framesweepCheck(ctx, cfg, video, grid, work)
	if fail != "" {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return []Row{{Name: base + "/peer=" + PeerFramesweep, Mode: "peers", Env: env, Failure: fail}}, []string{fail}, nil
	}
	logf(cfg.Log, "bench: %s: every peer decodes %s", filepath.Base(video), stream)
	runs := []*peerRun{fs}
	for _, name := range PeerNames[1:] {
		if !slices.Contains(cfg.Peers, name) {
			continue
		}
		r, err := peerFor(ctx, cfg, name, video, stream, configs, scripts, work)
		if err != nil {
			return nil, nil, err
		}
		if r.refused != "" {
			logf(cfg.Log, "bench: %s: %s refused: %s", filepath.Base(video), name, r.refused)
		}
		r.framesRequested = fs.framesRequested
		runs = append(runs, r)
	}
	if err := timedReps(ctx, cfg, base, runs); err != nil {
		return nil, nil, err
	}
	rows, fails := peerRows(cfg, env, base, runs, configs, stream, targets, load0, loadAvg())
	return rows, fails, nil
}

// framesweepCheck is the check run of (a): probe names the stream framesweep decodes, extract gives
// the plan, the output sizes and the reference frames. It returns framesweep's run (timed later into
// fresh caches) and the stream, or the failure.
func framesweepCheck(ctx context.Context, cfg PeersConfig, video, grid, work string) (*peerRun, []peerConfig, peerStream, string) {
	name := filepath.Base(video)
	failed := func(format string, a ...any) (*peerRun, []peerConfig, peerStream, string) {
		return nil, nil, peerStream{}, name + ": " + PeerFramesweep + ": " + fmt.Sprintf(format, a...)
	}
	stream, err := probeStream(ctx, cfg, video)
	if err != nil {
		return failed("%v", err)
	}
	extractArgs := func(out string) []string {
		args := []string{"extract", "--grid", grid, "--videos", video, "--out", out, "--pipeline", "raw",
			"--kernel", "pil-bicubic", "--no-autorotate"}
		if cfg.Stream != nil {
			args = append(args, "--stream", strconv.Itoa(*cfg.Stream))
		}
		return args
	}
	logf(cfg.Log, "bench: %s: framesweep extract (check run)", name)
	ps, err := runProcess(ctx, cfg.Framesweep, extractArgs(filepath.Join(work, "check-cache"))...)
	if err != nil {
		return failed("%v", err)
	}
	var sum extractSummary
	if err := json.Unmarshal(ps.stdout, &sum); err != nil {
		return failed("summary is not JSON: %v", err)
	}
	if len(sum.PerVideo) != 1 || sum.PerVideo[0].StreamIndex != stream.Index {
		return failed("extract's summary does not name the stream probe chose (%s): %+v", stream, sum.PerVideo)
	}
	configs, err := readPeerManifest(sum.Manifest)
	if err != nil {
		return failed("%v", err)
	}
	requested := 0
	for _, c := range configs {
		requested += len(c.Indices)
	}
	return &peerRun{name: PeerFramesweep, extractSummary: &sum, framesRequested: requested, stream: stream.Index,
		run: func(ctx context.Context, rep int) (procStats, error) {
			dir := filepath.Join(work, "cache-"+strconv.Itoa(rep))
			defer os.RemoveAll(dir) // not timed: the process has ended
			return runProcess(ctx, cfg.Framesweep, extractArgs(dir)...)
		}}, configs, stream, ""
}

// peerFor prepares peer name: a Python peer runs its check run now (its arrays against framesweep's
// frames; a failure is recorded in the run), the ffmpeg floor needs none. err ends the benchmark.
func peerFor(ctx context.Context, cfg PeersConfig, name, video string, stream peerStream, configs []peerConfig, scripts, work string) (*peerRun, error) {
	r := &peerRun{name: name, stream: stream.Index}
	script, ok := peerScripts[name]
	if !ok { // PeerFFmpeg
		r.run = func(ctx context.Context, _ int) (procStats, error) {
			// The plan's stream only, by its index in the file (the CLI alone would pick the largest
			// video stream and decode the audio too).
			return runProcess(ctx, "ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-i", video,
				"-map", "0:"+strconv.Itoa(stream.Index), "-f", "null", "-")
		}
		return r, nil
	}
	spec := peerSpec{Video: video, Stream: stream.Index, VideoStreams: stream.VideoStreams, Configs: configs}
	specPath := filepath.Join(work, name+".json")
	if err := writeSpec(specPath, spec); err != nil {
		return nil, err
	}
	r.run = func(ctx context.Context, _ int) (procStats, error) {
		return runProcess(ctx, cfg.Python, filepath.Join(scripts, script), specPath)
	}
	logf(cfg.Log, "bench: %s: %s (check run)", filepath.Base(video), name)
	dump := filepath.Join(work, name+"-dump")
	if err := os.MkdirAll(dump, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dump)
	checkSpec := filepath.Join(work, name+"-check.json")
	spec.Dump = &dump
	if err := writeSpec(checkSpec, spec); err != nil {
		return nil, err
	}
	ps, err := runProcess(ctx, cfg.Python, filepath.Join(scripts, script), checkSpec)
	if why := refusal(err); why != "" {
		r.refused = why
		return r, nil
	}
	if err == nil {
		r.out, err = parsePeerOutput(ps.stdout)
	}
	if err == nil && (r.out.Stream == nil || *r.out.Stream != stream.Index) {
		err = fmt.Errorf("decoded stream %s, the plan's is %d", streamText(r.out.Stream), stream.Index)
	}
	if err == nil {
		r.check, err = comparePeer(configs, r.out, dump)
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		r.failure = err.Error()
	case !r.check.indicesOK:
		r.failure = "served other indices than the plan: " + r.check.mismatch
	}
	return r, nil
}

// timedReps runs the timed repetitions, interleaved so that a change in load hits every peer alike,
// and reads the machine's load around each run.
func timedReps(ctx context.Context, cfg PeersConfig, base string, runs []*peerRun) error {
	for i := 0; i < cfg.Warmup+cfg.Reps; i++ {
		for _, r := range runs {
			if r.failure != "" || r.refused != "" {
				continue
			}
			s0 := sampleMachine()
			ps, err := r.run(ctx, i)
			s1 := sampleMachine()
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				r.failure = err.Error()
				continue
			}
			warm := i < cfg.Warmup
			logf(cfg.Log, "bench: %s %s: %.2fs wall, %.2fs CPU, %.0f MiB peak RSS%s", base, r.name, ps.wall, ps.cpu, ps.rssMiB,
				map[bool]string{true: " (warm-up)"}[warm])
			if warm {
				continue
			}
			r.wall, r.cpu, r.rss = append(r.wall, ps.wall), append(r.cpu, ps.cpu), append(r.rss, ps.rssMiB)
			r.loads = append(r.loads, measureLoad(s0, s1, ps))
			switch {
			case r.name == PeerFramesweep:
				var s extractSummary
				if json.Unmarshal(ps.stdout, &s) == nil {
					r.selfS = append(r.selfS, s.Seconds)
				}
			case peerScripts[r.name] != "":
				if o, err := parsePeerOutput(ps.stdout); err == nil {
					r.importS, r.workS = append(r.importS, o.ImportS), append(r.workS, o.WorkS)
				}
			}
		}
	}
	return nil
}

// peerRows turns the measurements into rows: one per peer, then the video's summary. Every row names
// the stream decoded and the load around its runs; a pair measured under load is marked in its row's
// metrics (pairs-under-load) and note, and in the summary.
func peerRows(cfg PeersConfig, env Env, base string, runs []*peerRun, configs []peerConfig, stream peerStream, targets map[string]PeerTarget, load0, load1 float64) ([]Row, []string) {
	fs := runs[0]
	cores := loadCores()
	var rows []Row
	var fails, notes, marks []string
	summary := Row{Name: base + "/summary", Mode: "peers", Iterations: cfg.Reps, Warmup: cfg.Warmup, Seconds: median(fs.wall), Env: env}
	pairs, loaded := 0, 0
	for _, r := range runs {
		row := Row{Name: base + "/peer=" + r.name, Mode: "peers", Iterations: cfg.Reps, Warmup: cfg.Warmup, Env: env}
		switch {
		case r.failure != "":
			row.Failure = r.failure
			fails = append(fails, filepath.Base(strings.TrimPrefix(base, "Peers/video="))+": "+r.name+": "+oneLine(r.failure))
		case r.refused != "":
			row.Skipped = fmt.Sprintf("cannot open stream %d: %s", stream.Index, r.refused)
			notes = append(notes, r.name+" refused")
		default:
			ls := measuredRow(&row, r, fs, configs, cores)
			if wall, cpu := median(r.wall), median(r.cpu); r != fs && fs.failure == "" && wall > 0 && cpu > 0 {
				fsWall, fsCPU := median(fs.wall), median(fs.cpu)
				summary.Metrics = append(summary.Metrics, Metric{"x-framesweep/" + r.name, fsWall / wall},
					Metric{"x-cpu-framesweep/" + r.name, fsCPU / cpu})
				note := targetNote(r.name, fsWall/wall, fsCPU/cpu, targets)
				if ls.loaded > 0 {
					note += fmt.Sprintf(" (under load: %d of %d pairs)", ls.loaded, ls.pairs)
				}
				notes = append(notes, note)
				pairs, loaded = pairs+ls.pairs, loaded+ls.loaded
			}
			if ls.loaded > 0 {
				marks = append(marks, r.name)
			}
		}
		rows = append(rows, row)
	}
	summary.Metrics = append(summary.Metrics, Metric{"stream", float64(stream.Index)}, Metric{"load1-start", load0}, Metric{"load1-end", load1},
		Metric{"pairs", float64(pairs)}, Metric{"pairs-under-load", float64(loaded)})
	if fs.failure != "" {
		summary.Failure = "framesweep extract failed: " + fs.failure
	}
	summary.Note = "every peer decodes " + stream.String() + "; framesweep ÷ peer, wall (CPU): " + strings.Join(notes, ", ")
	if len(marks) > 0 {
		summary.Note = fmt.Sprintf("UNDER LOAD: %d of %d pairs measured with the load average above the %d cores (rows: %s); ",
			loaded, pairs, cores, strings.Join(marks, ", ")) + summary.Note
	}
	return append(rows, summary), fails
}

// measuredRow fills the row of a peer that ran: medians, the stream, the load around its runs, the
// ratios against framesweep's medians and the check's figures. It returns the load summary.
func measuredRow(row *Row, r, fs *peerRun, configs []peerConfig, cores int) loadSummary {
	wall, cpu, rss := median(r.wall), median(r.cpu), median(r.rss)
	row.Seconds = wall
	row.Metrics = []Metric{{"cpu-s", cpu}, {"stream", float64(r.stream)}}
	if rss > 0 { // unknown (-1) without GNU time
		row.Metrics = append(row.Metrics, Metric{"peak-rss-MiB", rss})
	}
	if r.name != PeerFFmpeg {
		row.Metrics = append(row.Metrics, Metric{"configs", float64(len(configs))}, Metric{"frames-requested", float64(r.framesRequested)})
	}
	ls := r.loadSummary(fs, cores)
	row.Metrics = append(row.Metrics, ls.metrics()...)
	if fsWall, fsCPU, fsRSS := median(fs.wall), median(fs.cpu), median(fs.rss); r != fs && fs.failure == "" && wall > 0 && cpu > 0 {
		row.Metrics = append(row.Metrics, Metric{"x-framesweep-wall", fsWall / wall}, Metric{"x-framesweep-cpu", fsCPU / cpu})
		if rss > 0 && fsRSS > 0 {
			row.Metrics = append(row.Metrics, Metric{"x-framesweep-rss", fsRSS / rss})
		}
	}
	if s := r.extractSummary; s != nil {
		row.Metrics = append(row.Metrics, Metric{"frames-union", float64(s.FramesUnion)}, Metric{"frames-decoded", float64(s.FramesDecoded)},
			Metric{"codec-frames", float64(s.CodecFrames)}, Metric{"self-s", median(r.selfS)})
		row.Note = "framesweep extract --pipeline raw --kernel pil-bicubic --no-autorotate (decode's default plan); writes and fsyncs a cache"
	}
	peerCheckMetrics(row, r)
	if m := ls.note(cores); m != "" {
		row.Note = strings.TrimSuffix(m+"; "+row.Note, "; ")
	}
	return ls
}

// loadSummary folds the load around r's measured runs into pairs with framesweep's run of the same
// repetition (framesweep's own row: each run alone).
func (r *peerRun) loadSummary(fs *peerRun, cores int) loadSummary {
	var ls loadSummary
	for i, l := range r.loads {
		switch {
		case r == fs:
			ls.add(pairOf(l, l, cores))
		case i < len(fs.loads):
			ls.add(pairOf(fs.loads[i], l, cores))
		}
	}
	return ls
}

func streamText(p *int) string {
	if p == nil {
		return "(not reported)"
	}
	return strconv.Itoa(*p)
}

// targetNote is "peer 0.42 (0.61)", with each target this clip has for the peer and whether it was met.
func targetNote(peer string, wall, cpu float64, targets map[string]PeerTarget) string {
	note := fmt.Sprintf("%s %.2f (%.2f)", peer, wall, cpu)
	t, ok := targets[peer]
	if !ok {
		return note
	}
	verdict := func(got, want float64) string {
		if got > want {
			return "missed"
		}
		return "met"
	}
	note += fmt.Sprintf(" [target wall ≤ %.2f: %s", t.Wall, verdict(wall, t.Wall))
	if t.CPU > 0 {
		note += fmt.Sprintf("; CPU ≤ %.2f: %s", t.CPU, verdict(cpu, t.CPU))
	}
	return note + "]"
}

// peerCheckMetrics adds a Python peer's own timings and its check run's figures to its row.
func peerCheckMetrics(row *Row, r *peerRun) {
	if r.out != nil {
		row.Metrics = append(row.Metrics, Metric{"import-s", median(r.importS)}, Metric{"work-s", median(r.workS)})
		if r.out.DecodedFrames != nil {
			row.Metrics = append(row.Metrics, Metric{"decoded-frames", float64(*r.out.DecodedFrames)})
		}
		row.Note = peerNote(r.out)
	}
	if c := r.check; c != nil {
		ok := 0.0
		if c.indicesOK {
			ok = 1
		}
		row.Metrics = append(row.Metrics, Metric{"indices-match", ok}, Metric{"psnr-min-dB", c.minPSNR},
			Metric{"psnr-mean-dB", c.sumPSNR / float64(c.frames)}, Metric{"frames-compared", float64(c.frames)},
			Metric{"frames-identical", float64(c.identical)})
		if c.worst != "" {
			row.Note += "; lowest PSNR at " + c.worst
		}
	}
}

func peerNote(o *peerOutput) string {
	var vs []string
	for _, k := range []string{"python", "av", "cv2", "numpy", "pillow"} {
		if v, ok := o.Versions[k]; ok {
			vs = append(vs, k+" "+v)
		}
	}
	var dec []string
	for _, k := range []string{"thread_type", "thread_count", "backend", "cv_threads"} {
		if v, ok := o.Decoder[k]; ok {
			dec = append(dec, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(vs, ", ") + "; decoder " + strings.Join(dec, " ")
}

func writeSpec(path string, s peerSpec) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func parsePeerOutput(b []byte) (*peerOutput, error) {
	var o peerOutput
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("peer output is not JSON: %v: %.200s", err, b)
	}
	return &o, nil
}

// readPeerManifest reads the configs of an extract run from its manifest: every object must be a plain
// resize of whole frames to [N, H, W, 3] (what the Python peers reproduce with Pillow); a grid with crops
// or tiles is refused, naming the config. Lines are read by record.ReadLine: one over
// record.MaxLineBytes, or one that does not decode, is an error naming the line; a last line without
// its newline is read as a line (an interrupted extract's, cut inside, does not decode).
func readPeerManifest(path string) ([]peerConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("extract manifest: %w", err)
	}
	defer f.Close()
	var out []peerConfig
	seen := map[string]bool{}
	br := bufio.NewReaderSize(f, 1<<16)
	for line := 1; ; line++ {
		b, err := record.ReadLine(br, record.MaxLineBytes)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			pc, perr := peerConfigOf(t, seen)
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, perr)
			}
			if pc != nil {
				out = append(out, *pc)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no frame objects (a text-only grid?)", path)
	}
	return out, nil
}

// peerConfigOf reads one manifest line: the config's frames object, or nil for a config seen before
// or one without frames.
func peerConfigOf(line []byte, seen map[string]bool) (*peerConfig, error) {
	var m struct {
		Object   string `json:"object"`
		Config   string `json:"config"`
		Pipeline string `json:"pipeline"`
		Shape    []int  `json:"shape"`
		Indices  []int  `json:"indices"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, err
	}
	if seen[m.Config] || len(m.Indices) == 0 {
		return nil, nil
	}
	seen[m.Config] = true
	if len(m.Shape) != 4 || m.Shape[3] != 3 || m.Shape[0] != len(m.Indices) {
		return nil, fmt.Errorf("config %s: shape %v is not [N, H, W, 3] (tiled geometries are not compared)", m.Config, m.Shape)
	}
	if err := checkPlainResize(m.Object, m.Shape[2], m.Shape[1]); err != nil {
		return nil, fmt.Errorf("config %s: %w", m.Config, err)
	}
	return &peerConfig{ID: m.Config, Indices: m.Indices, Width: m.Shape[2], Height: m.Shape[1], object: m.Object}, nil
}

// checkPlainResize reads an object's safetensors header and checks that its layout is a resize of the
// whole frame to w×h, with no crop, tiles or thumbnail.
func checkPlainResize(object string, w, h int) error {
	f, err := os.Open(object)
	if err != nil {
		return err
	}
	defer f.Close()
	var lb [8]byte
	if _, err := io.ReadFull(f, lb[:]); err != nil {
		return fmt.Errorf("%s: %w", object, err)
	}
	n := binary.LittleEndian.Uint64(lb[:])
	if n > cache.MaxHeaderBytes {
		return fmt.Errorf("%s: header of %d bytes", object, n)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return fmt.Errorf("%s: %w", object, err)
	}
	var top struct {
		Meta map[string]string `json:"__metadata__"`
	}
	if err := json.Unmarshal(hdr, &top); err != nil {
		return fmt.Errorf("%s: %w", object, err)
	}
	var lay struct {
		Resize struct{ W, H int } `json:"resize"`
		Crop   json.RawMessage    `json:"crop"`
		Tiles  json.RawMessage    `json:"tiles"`
		Thumb  json.RawMessage    `json:"thumb"`
	}
	if err := json.Unmarshal([]byte(top.Meta["layout"]), &lay); err != nil {
		return fmt.Errorf("%s: layout %q: %w", object, top.Meta["layout"], err)
	}
	if lay.Crop != nil || lay.Tiles != nil || lay.Thumb != nil || lay.Resize.W != w || lay.Resize.H != h {
		return fmt.Errorf("layout %s is not a plain resize to %dx%d (peers reproduce only whole-frame resizes)", top.Meta["layout"], w, h)
	}
	return nil
}

// peerCheck is the comparison of one peer's check run with framesweep's objects.
type peerCheck struct {
	indicesOK bool
	mismatch  string // the first config whose served indices differ
	minPSNR   float64
	sumPSNR   float64
	frames    int
	identical int
	worst     string // "config f64-…, frame 1234 (31.2 dB)"
}

// comparePeer checks a peer's check run: per config, the indices it served against the plan, and its
// dumped frames (dump/NNN.npy) against framesweep's object, frame by frame (PSNR over RGB).
func comparePeer(configs []peerConfig, out *peerOutput, dump string) (*peerCheck, error) {
	if len(out.Configs) != len(configs) {
		return nil, fmt.Errorf("peer returned %d configs, the grid has %d", len(out.Configs), len(configs))
	}
	c := &peerCheck{indicesOK: true, minPSNR: math.Inf(1)}
	for k, cfg := range configs {
		got := out.Configs[k]
		if got.ID != cfg.ID {
			return nil, fmt.Errorf("peer config %d is %q, want %q", k, got.ID, cfg.ID)
		}
		if !slices.Equal(got.Served, cfg.Indices) && c.indicesOK {
			c.indicesOK = false
			c.mismatch = fmt.Sprintf("config %s: served %s, plan %s", cfg.ID, abbrev(got.Served), abbrev(cfg.Indices))
		}
		b, err := os.ReadFile(filepath.Join(dump, fmt.Sprintf("%03d.npy", k)))
		if err != nil {
			return nil, err
		}
		shape, data, err := parseNPY(b)
		if err != nil {
			return nil, fmt.Errorf("config %s dump: %w", cfg.ID, err)
		}
		ref, err := loadFrames(cfg.object)
		if err != nil {
			return nil, err
		}
		want := []int{len(cfg.Indices), cfg.Height, cfg.Width, 3}
		if !slices.Equal(shape, want) {
			return nil, fmt.Errorf("config %s: peer frames %v, framesweep's %v", cfg.ID, shape, want)
		}
		fb := cfg.Width * cfg.Height * 3
		for i := range cfg.Indices {
			p := psnrBytes(data[i*fb:(i+1)*fb], ref[i*fb:(i+1)*fb])
			if p == PSNRIdentical {
				c.identical++
			}
			if p < c.minPSNR {
				c.minPSNR = p
				c.worst = fmt.Sprintf("config %s frame %d (%.2f dB)", cfg.ID, cfg.Indices[i], p)
			}
			c.sumPSNR += p
			c.frames++
		}
	}
	if c.minPSNR == PSNRIdentical {
		c.worst = ""
	}
	return c, nil
}

// loadFrames returns the uint8 "frames" tensor of a framesweep object (strictly parsed).
func loadFrames(object string) ([]byte, error) {
	b, err := os.ReadFile(object)
	if err != nil {
		return nil, err
	}
	f, err := cache.ParseSafetensors(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", object, err)
	}
	t, ok := f.Tensors["frames"]
	if !ok || t.DType != cache.U8 {
		return nil, fmt.Errorf("%s: no uint8 frames tensor", object)
	}
	return t.Data, nil
}

// psnrBytes is PSNR (dB, capped at PSNRIdentical) between two equally long 8-bit sample buffers.
func psnrBytes(a, b []byte) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var se int64
	for i := range a {
		d := int64(a[i]) - int64(b[i])
		se += d * d
	}
	if se == 0 {
		return PSNRIdentical
	}
	mse := float64(se) / float64(len(a))
	return math.Min(PSNRIdentical, 10*math.Log10(255*255/mse))
}

func abbrev(xs []int) string {
	if len(xs) <= 8 {
		return fmt.Sprint(xs)
	}
	return fmt.Sprintf("%v…%v (%d)", xs[:4], xs[len(xs)-2:], len(xs))
}

// loadAvg is the 1-minute load average (0 when /proc/loadavg is unreadable).
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
