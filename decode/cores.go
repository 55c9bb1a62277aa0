package decode

import (
	"runtime"
	"sync"
)

// CorePool is a budget of CPU cores shared by the Reads that draw on it: each Read takes what its schedule
// can use (its segments' decoders × their threads, docs/decode.md "Parallel segments") when it starts
// and gives it back when it ends. Share one pool between everything that decodes at once in a process
// (e.g. the videos of `extract --jobs N`) so that videos in parallel and segments within a video add up
// to the machine, not to N machines. Safe for concurrent use.
type CorePool struct {
	mu    sync.Mutex
	size  int
	inUse int
}

// NewCorePool returns a pool of n cores (n < 1 counts as 1).
func NewCorePool(n int) *CorePool { return &CorePool{size: max(n, 1)} }

var defaultPool = sync.OnceValue(func() *CorePool { return NewCorePool(runtime.GOMAXPROCS(0)) })

// DefaultCorePool is the process's pool, sized runtime.GOMAXPROCS(0) at first use: the one a Read
// draws on when Options.Cores is nil.
func DefaultCorePool() *CorePool { return defaultPool() }

// Size is the pool's number of cores.
func (p *CorePool) Size() int { return p.size }

// Take takes up to want cores (want < 1 counts as 1) and returns how many it took: at least 1 even
// when none is free, since the caller runs anyway (it holds a job slot of its own); it never waits.
// Give back exactly what Take returned.
func (p *CorePool) Take(want int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(max(want, 1), max(p.size-p.inUse, 1))
	p.inUse += n
	return n
}

// Give returns n cores taken with Take.
func (p *CorePool) Give(n int) {
	p.mu.Lock()
	p.inUse -= n
	p.mu.Unlock()
}

// Free is the number of cores not taken now (negative when Reads run on more than the pool has).
func (p *CorePool) Free() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size - p.inUse
}

// takeExactly takes n cores whether or not they are free (tests forcing a schedule).
func (p *CorePool) takeExactly(n int) int {
	p.mu.Lock()
	p.inUse += n
	p.mu.Unlock()
	return n
}
