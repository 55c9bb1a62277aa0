package bench

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// machineSample is what the bench reads around every timed run to tell a quiet measurement from one
// taken while other work competed for the cores.
type machineSample struct {
	load1 float64 // 1-minute load average
	busy  float64 // CPU seconds spent by the whole machine, all cores (/proc/stat: not idle, not iowait)
	self  float64 // CPU seconds of this process (it only waits for the child)
	ok    bool    // /proc/stat was readable
}

// userHZ is the unit of /proc/stat: USER_HZ, 100 on every Linux ABI Go supports.
const userHZ = 100

func sampleMachine() machineSample {
	s := machineSample{load1: loadAvg()}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.self = float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return s
	}
	// user nice system idle iowait irq softirq steal (guest time is already inside user). Steal is
	// time other virtual machines took from this one: others' work as much as another process's.
	for i, v := range f[1:9] {
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return s
		}
		s.busy += n / userHZ
	}
	s.ok = true
	return s
}

// runLoad is the machine around one timed run.
type runLoad struct {
	before, after float64 // 1-minute load average just before and just after the run
	others        float64 // CPU seconds other processes (and other VMs' steal) used during the run
	wall          float64
	known         bool // others is measured
}

func measureLoad(s0, s1 machineSample, ps procStats) runLoad {
	l := runLoad{before: s0.load1, after: s1.load1, wall: ps.wall, known: s0.ok && s1.ok}
	if l.known { // the machine's CPU less the child's (rusage) and this process's own
		l.others = max(0, (s1.busy-s0.busy)-ps.cpu-(s1.self-s0.self))
	}
	return l
}

// othersBusy is how many cores' worth of other work, on average over a pair, confirms that a load
// average above the core count came from others. The 1-minute load alone cannot tell: the bench's own
// processes keep two to three threads runnable (extract's two decoders, PyAV's cores+1 frame threads),
// so a quiet 2-core machine ends a run at load 2.0–2.4. Idle system daemons stay far below a quarter core.
const othersBusy = 0.25

// pairLoad is the machine during one interleaved pair: framesweep's run and a peer's run of the same
// repetition (framesweep first).
type pairLoad struct {
	before, after float64 // load average before framesweep's run and after the peer's
	peak          float64 // the highest of the four readings around the two runs
	others        float64 // cores' worth of other work, on average over the two runs (-1: unknown)
	loaded        bool
}

func pairOf(fs, p runLoad, cores int) pairLoad {
	pl := pairLoad{before: fs.before, after: p.after, peak: max(fs.before, fs.after, p.before, p.after), others: -1}
	if fs.known && p.known && fs.wall+p.wall > 0 {
		pl.others = (fs.others + p.others) / (fs.wall + p.wall)
	}
	// Above the core count, and (when measurable) others' work is why.
	pl.loaded = pl.peak > float64(cores) && (pl.others < 0 || pl.others >= othersBusy)
	return pl
}

// loadCores is the core count the load average is compared with.
func loadCores() int { return runtime.NumCPU() }

// loadSummary folds a peer's pairs into its row's metrics, and says in words when some were loaded.
type loadSummary struct {
	pairs, loaded       int
	maxBefore, maxAfter float64
	maxPeak, maxOthers  float64
	othersKnown         bool
}

func (s *loadSummary) add(p pairLoad) {
	if s.pairs == 0 {
		s.maxOthers = -1
	}
	s.pairs++
	if p.loaded {
		s.loaded++
	}
	s.maxBefore, s.maxAfter, s.maxPeak = max(s.maxBefore, p.before), max(s.maxAfter, p.after), max(s.maxPeak, p.peak)
	if p.others >= 0 {
		s.othersKnown = true
		s.maxOthers = max(s.maxOthers, p.others)
	}
}

func (s loadSummary) metrics() []Metric {
	m := []Metric{{"load1-before", s.maxBefore}, {"load1-after", s.maxAfter}, {"pairs-under-load", float64(s.loaded)}}
	if s.othersKnown {
		m = append(m, Metric{"others-cores", s.maxOthers})
	}
	return m
}

// note is "" for a quiet measurement, else the mark every output format carries in the row's note.
func (s loadSummary) note(cores int) string {
	if s.loaded == 0 {
		return ""
	}
	n := fmt.Sprintf("UNDER LOAD: %d of %d pairs measured with the load average above the %d cores (up to %.1f)",
		s.loaded, s.pairs, cores, s.maxPeak)
	if s.othersKnown {
		n += fmt.Sprintf(", other processes using up to %.2f cores", s.maxOthers)
	}
	return n
}
