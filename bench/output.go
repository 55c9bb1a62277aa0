package bench

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Metric is one measured or derived value of a row.
type Metric struct {
	Name  string  `json:"name"` // unit-like and space-free, as benchstat wants ("x-ffmpeg-t1", "frames/s")
	Value float64 `json:"value"`
}

// Row is one benchmark result. Name follows Go's convention with its parameters
// ("Grid/gop=250/ladder=linspace/variant=once/threads=1").
type Row struct {
	Name       string   `json:"name"`
	Mode       string   `json:"mode"`
	Iterations int      `json:"iterations"` // measured repetitions (the wall time is their median)
	Warmup     int      `json:"warmup"`     // unmeasured runs before them
	Seconds    float64  `json:"seconds"`    // median wall time of one repetition
	Metrics    []Metric `json:"metrics,omitempty"`
	Note       string   `json:"note,omitempty"`    // context, e.g. the hardware fallback reason
	Failure    string   `json:"failure,omitempty"` // why the row has no valid measurement
	// Skipped says why a variant was not run at all (a peer that cannot open the stream): no
	// measurement, and not a failure.
	Skipped string `json:"skipped,omitempty"`
	Env     Env    `json:"env"`
}

// Metric returns the named metric's value.
func (r Row) Metric(name string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// Formats accepted by Write.
var Formats = []string{"json", "benchstat", "csv"}

// ErrFormat is returned by Write for an unknown format.
var ErrFormat = errors.New("unknown output format")

// Write prints rows in format: "json" (an array), "benchstat" (Go benchmark text with the environment
// as key: value configuration lines, notes, failures and skips as comments) or "csv" (one line per
// metric, long form, the row's note, failure and skip on each).
func Write(w io.Writer, format string, rows []Row) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []Row{}
		}
		return enc.Encode(rows)
	case "benchstat":
		return writeBenchstat(w, rows)
	case "csv":
		return writeCSV(w, rows)
	}
	return fmt.Errorf("%w %q (want %s)", ErrFormat, format, strings.Join(Formats, ", "))
}

func writeBenchstat(w io.Writer, rows []Row) error {
	var b strings.Builder
	var last Env
	for i, r := range rows {
		if i == 0 || r.Env != last {
			e := r.Env
			fmt.Fprintf(&b, "goos: %s\ngoarch: %s\ncpu: %s\ncommit: %s\ngo: %s\nffmpeg: %s\ngo-astiav: %s\nopencv: %s\nffmpeg-cli: %s\ncpus: %d\n",
				e.GOOS, e.GOARCH, e.CPU, e.Commit, e.Go, e.FFmpeg, e.GoAstiav, e.OpenCV, e.FFmpegCLI, e.CPUs)
			last = e
		}
		if r.Failure != "" {
			// benchstat ignores lines that are not results; keep the reason visible.
			fmt.Fprintf(&b, "# Benchmark%s failed: %s\n", r.Name, oneLine(r.Failure))
			continue
		}
		if r.Skipped != "" {
			fmt.Fprintf(&b, "# Benchmark%s skipped: %s\n", r.Name, oneLine(r.Skipped))
			continue
		}
		if r.Note != "" {
			fmt.Fprintf(&b, "# Benchmark%s: %s\n", r.Name, oneLine(r.Note))
		}
		iters := r.Iterations
		if iters < 1 {
			iters = 1
		}
		fmt.Fprintf(&b, "Benchmark%s \t%d\t%.0f ns/op", r.Name, iters, r.Seconds*1e9)
		for _, m := range r.Metrics {
			fmt.Fprintf(&b, "\t%s %s", strconv.FormatFloat(m.Value, 'g', 6, 64), m.Name)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"name", "mode", "metric", "value", "iterations", "warmup", "commit", "cpu", "cpus",
		"go", "ffmpeg", "go_astiav", "opencv", "ffmpeg_cli", "failure", "skipped", "note"})
	for _, r := range rows {
		e := r.Env
		emit := func(metric string, v float64) {
			_ = cw.Write([]string{r.Name, r.Mode, metric, strconv.FormatFloat(v, 'g', 8, 64),
				strconv.Itoa(r.Iterations), strconv.Itoa(r.Warmup), e.Commit, e.CPU, strconv.Itoa(e.CPUs), e.Go,
				e.FFmpeg, e.GoAstiav, e.OpenCV, e.FFmpegCLI, oneLine(r.Failure), oneLine(r.Skipped), oneLine(r.Note)})
		}
		if r.Failure != "" || r.Skipped != "" {
			emit("", 0)
			continue
		}
		emit("seconds", r.Seconds)
		for _, m := range r.Metrics {
			emit(m.Name, m.Value)
		}
	}
	cw.Flush()
	return cw.Error()
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
