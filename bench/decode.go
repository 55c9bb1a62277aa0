package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/rgb"
)

// DecodeConfig configures the decode benchmark. Zero values take the defaults noted.
type DecodeConfig struct {
	Video    string    // the video; "" = the generated 60 s 1080p30 H.264 GOP 250 clip
	Threads  []int     // decoder thread counts (0 = FFmpeg's default); default 1 and 0
	HWAccel  string    // when set ("cuda", "vaapi", "auto"): also decode on that device and compare with the CPU
	Compare  int       // frames sampled uniformly for the PSNR comparison (default 32)
	Reps     int       // measured repetitions (median reported; default 1)
	Warmup   int       // unmeasured repetitions first
	CacheDir string    // where the default clip is generated
	Log      io.Writer // progress lines; nil = quiet
}

// PSNRIdentical is reported for identical frames (PSNR is infinite; JSON has no infinity).
const PSNRIdentical = 100.0

// Decode times decoding every frame of the video to RGB24 against `ffmpeg -threads T -i V -pix_fmt
// rgb24 -f null -` (the same work: decode plus conversion), per thread count. With HWAccel it also
// decodes on the device (and times ffmpeg -hwaccel) and checks the result against the CPU: the frame
// counts must be equal, and the "check=hwaccel-vs-cpu" row reports the minimum and mean PSNR over
// Compare sampled frames, plus the fallback reason (Note) when the device could not take the stream.
func Decode(ctx context.Context, cfg DecodeConfig) ([]Row, error) {
	if len(cfg.Threads) == 0 {
		cfg.Threads = []int{1, 0}
	}
	if cfg.Compare <= 0 {
		cfg.Compare = 32
	}
	if cfg.Reps <= 0 {
		cfg.Reps = 1
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = CacheDir()
	}
	path := cfg.Video
	if path == "" {
		var err error
		if path, err = EnsureClip(ctx, cfg.CacheDir, BenchClip(250)); err != nil {
			return nil, err
		}
	}
	hw, err := decode.ParseHWAccel(cfg.HWAccel)
	if err != nil {
		return nil, err
	}
	info, err := describe(path)
	if err != nil {
		return nil, err
	}
	n := info.Frames
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	env := CurrentEnv()
	base := "Decode/video=" + filepath.Base(path)
	var rows []Row

	type pair struct{ ff, dec *variant }
	var pairs []pair
	stats := map[*variant]*decode.Stats{}
	for _, t := range cfg.Threads {
		t := t
		ffT := t
		if t == 0 {
			ffT = -1
		}
		st := &decode.Stats{}
		p := pair{
			ff: &variant{name: "variant=ffmpeg-rgb24/threads=" + threadsName(t), run: func(ctx context.Context) error {
				return ffmpegNull(ctx, path, ffT, "-pix_fmt", "rgb24")
			}},
			dec: &variant{name: "variant=decode/threads=" + threadsName(t), run: func(context.Context) (err error) {
				*st, err = decodeOnce(path, pipeline.Options{Threads: t}, all)
				return err
			}},
		}
		stats[p.dec] = st
		pairs = append(pairs, p)
	}
	var vs []*variant
	for _, p := range pairs {
		vs = append(vs, p.ff, p.dec)
	}
	if err := measure(ctx, cfg.Log, base, vs, cfg.Warmup, cfg.Reps); err != nil {
		return nil, err
	}
	for _, p := range pairs {
		ff, dec := median(p.ff.secs), median(p.dec.secs)
		rows = append(rows,
			Row{Name: base + "/" + p.ff.name, Mode: "decode", Iterations: cfg.Reps, Warmup: cfg.Warmup, Seconds: ff, Env: env,
				Metrics: []Metric{{"frames/s", float64(n) / ff}, {"cpu-s", median(p.ff.cpu)}}},
			Row{Name: base + "/" + p.dec.name, Mode: "decode", Iterations: cfg.Reps, Warmup: cfg.Warmup, Seconds: dec, Env: env,
				Metrics: []Metric{{"frames/s", float64(n) / dec}, {"x-ffmpeg-rgb24", dec / ff},
					{"served-frames", float64(stats[p.dec].Converted)}, {"cpu-s", median(p.dec.cpu)},
					{"x-cpu-ffmpeg-rgb24", median(p.dec.cpu) / median(p.ff.cpu)}}})
	}
	if hw == decode.HWNone {
		return rows, nil
	}
	hwRows, err := decodeHW(ctx, cfg, path, hw, all, env, base)
	return append(rows, hwRows...), err
}

// decodeHW times hardware decoding against the CPU (default threads) and compares frames.
func decodeHW(ctx context.Context, cfg DecodeConfig, path string, hw decode.HWAccel, all []int, env Env, base string) ([]Row, error) {
	n := len(all)
	var hwSt, cpuSt decode.Stats
	var ffErr error
	vs := []*variant{
		{name: "variant=ffmpeg-rgb24/hwaccel=" + string(hw), run: func(ctx context.Context) error {
			ffErr = ffmpegNullArgs(ctx, []string{"-hwaccel", string(hw), "-i", path, "-pix_fmt", "rgb24"})
			return nil // a failing CLI baseline is recorded in its row, not fatal
		}},
		{name: "variant=decode/hwaccel=" + string(hw), run: func(context.Context) (err error) {
			hwSt, err = decodeOnce(path, pipeline.Options{HWAccel: string(hw)}, all)
			return err
		}},
		{name: "variant=decode/hwaccel=none", run: func(context.Context) (err error) {
			cpuSt, err = decodeOnce(path, pipeline.Options{}, all)
			return err
		}},
	}
	if err := measure(ctx, cfg.Log, base, vs, cfg.Warmup, cfg.Reps); err != nil {
		return nil, err
	}
	ff, hws, cpu := median(vs[0].secs), median(vs[1].secs), median(vs[2].secs)
	note := "device=" + hwSt.HWAccel
	if hwSt.HWFallback != "" {
		note += "; fallback: " + hwSt.HWFallback
	}
	ffRow := Row{Name: base + "/" + vs[0].name, Mode: "decode", Iterations: cfg.Reps, Warmup: cfg.Warmup, Seconds: ff, Env: env,
		Metrics: []Metric{{"frames/s", float64(n) / ff}}}
	if ffErr != nil {
		ffRow.Failure = ffErr.Error()
	}
	rows := []Row{ffRow,
		{Name: base + "/" + vs[1].name, Mode: "decode", Iterations: cfg.Reps, Warmup: cfg.Warmup, Seconds: hws, Env: env, Note: note,
			Metrics: []Metric{{"frames/s", float64(n) / hws}, {"x-cpu", hws / cpu}, {"served-frames", float64(hwSt.Converted)}}},
		{Name: base + "/" + vs[2].name, Mode: "decode", Iterations: cfg.Reps, Warmup: cfg.Warmup, Seconds: cpu, Env: env,
			Metrics: []Metric{{"frames/s", float64(n) / cpu}, {"served-frames", float64(cpuSt.Converted)}}},
	}
	check, err := compareHW(path, hw, cfg.Compare, n)
	check.Name, check.Mode, check.Env, check.Note = base+"/check=hwaccel-vs-cpu/hwaccel="+string(hw), "decode", env, note
	used := 0.0
	if hwUsed(hwSt) {
		used = 1 // the device decoded; 0 means decode fell back to the CPU (Note says why)
	}
	check.Metrics = append(check.Metrics, Metric{"frames-cpu", float64(cpuSt.Converted)}, Metric{"frames-hw", float64(hwSt.Converted)},
		Metric{"hw-used", used})
	if err == nil && hwSt.Converted != cpuSt.Converted {
		err = fmt.Errorf("%s: hwaccel %s served %d frames, the CPU %d", path, hw, hwSt.Converted, cpuSt.Converted)
	}
	if err != nil {
		check.Failure = err.Error()
	}
	return append(rows, check), err
}

// hwUsed reports whether a Read decoded on the device. Stats.HWAccel names the device that was opened;
// when the decoder then declined it for the stream (HWFallback set) the frames came from the CPU.
func hwUsed(st decode.Stats) bool {
	return st.HWAccel != "" && st.HWAccel != string(decode.HWNone) && st.HWFallback == ""
}

// compareHW reads k uniformly sampled frames on the CPU and on the device and reports their PSNR.
func compareHW(path string, hw decode.HWAccel, k, n int) (Row, error) {
	if k > n {
		k = n
	}
	idx, err := BudgetIndices(LadderLinspace, n, k)
	if err != nil {
		return Row{}, err
	}
	cpu := map[int]*rgb.Image{}
	if _, err := readFrames(path, pipeline.Options{}, idx, func(f *decode.Frame) error {
		cpu[f.Index] = f.Image.Clone()
		return nil
	}); err != nil {
		return Row{}, err
	}
	minP, sumP, cnt := math.Inf(1), 0.0, 0
	_, err = readFrames(path, pipeline.Options{HWAccel: string(hw)}, idx, func(f *decode.Frame) error {
		ref := cpu[f.Index]
		if ref == nil || ref.W != f.W || ref.H != f.H {
			return fmt.Errorf("frame %d: device frame %dx%d vs CPU frame", f.Index, f.W, f.H)
		}
		p := PSNR(ref, &f.Image)
		minP, sumP, cnt = math.Min(minP, p), sumP+p, cnt+1
		return nil
	})
	row := Row{Iterations: 1}
	if cnt > 0 {
		row.Metrics = []Metric{{"psnr-min-dB", minP}, {"psnr-mean-dB", sumP / float64(cnt)}, {"frames-compared", float64(cnt)}}
	}
	if err == nil && cnt != len(idx) {
		err = fmt.Errorf("%s: %d of %d sampled frames compared", path, cnt, len(idx))
	}
	return row, err
}

// PSNR is rgb.PSNR in dB, capped at PSNRIdentical (JSON has no infinity); 0 when the sizes differ.
func PSNR(a, b *rgb.Image) float64 {
	db, ok := rgb.PSNR(a, b)
	if !ok {
		return 0
	}
	return math.Min(PSNRIdentical, db)
}
