package sweep

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/framesweep/framesweep/record"
)

// Bar draws the sweep's progress on a terminal: pairs done of the total, pairs/s, ETA and failures.
type Bar struct {
	w      io.Writer
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	failed int
}

// NewBar draws on w (a terminal's stderr).
func NewBar(w io.Writer) *Bar { return &Bar{w: w} }

func (b *Bar) Start(total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription("pairs"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("pairs"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

func (b *Bar) Pair(r *record.Full) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.Status == record.StatusError {
		b.failed++
		b.bar.Describe("pairs (" + strconv.Itoa(b.failed) + " failed)")
	}
	_ = b.bar.Add(1)
}

func (b *Bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		_ = b.bar.Finish()
	}
}

// LogProgress writes one slog line every Every (and at the end): for logs and CI, where a bar would
// be noise.
type LogProgress struct {
	Log   *slog.Logger
	Every time.Duration

	mu          sync.Mutex
	total, done int
	failed      int
	start, last time.Time
}

func (p *LogProgress) Start(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.start, p.last = total, time.Now(), time.Now()
	if p.Every == 0 {
		p.Every = 10 * time.Second
	}
}

func (p *LogProgress) Pair(r *record.Full) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if r.Status == record.StatusError {
		p.failed++
	}
	if time.Since(p.last) >= p.Every {
		p.last = time.Now()
		p.line("progress")
	}
}

func (p *LogProgress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line("finished")
}

func (p *LogProgress) line(msg string) {
	el := time.Since(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.done) / el
	}
	eta := "unknown"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-p.done)/rate) * time.Second).Round(time.Second).String()
	}
	p.Log.Info(msg, "pairs_done", p.done, "pairs_total", p.total, "pairs_failed", p.failed, "pairs_per_s", float64(int(rate*100))/100, "eta", eta)
}
