package serve

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Memory. The heap of a server is mostly the objects' tensors: a few large pointer-free byte slices,
// each built, sent and then dropped (or kept by the LRU until evicted). Left to itself the Go collector
// starts a cycle when the heap has doubled since the last one, and an idle process runs none for two
// minutes and then returns freed pages to the OS slowly: with four requests of 500 MB objects the heap
// grew to twice the live objects (4.7 GB of RSS for 2.1 GB of objects, measured) and stayed there idle.
// So the server counts the bytes of the objects it lets go — a response's object the LRU does not hold,
// an object the LRU evicts, a build that failed — and once reclaimThreshold of them are pending it
// collects at once, in the request that let go, before that request frees its slot: the next object is
// then built in the memory the last one left, and the objects alive never exceed the slots' plus the
// LRU's. When the last request in progress ends, what the collections freed goes back to the OS
// (debug.FreeOSMemory). Marking a heap of pointer-free slices takes milliseconds.

// reclaimThreshold is how many bytes of dropped objects may wait for a collection.
const reclaimThreshold = 32 << 20

// reclaimer collects once enough has been dropped, and returns memory to the OS when idle.
type reclaimer struct {
	mu       sync.Mutex   // one collection at a time
	pending  atomic.Int64 // bytes dropped since the last collection
	returned atomic.Bool  // the last collection's freed pages went back to the OS
	runs     atomic.Int64 // collections
}

// dropped records n bytes the server no longer holds and collects when enough are pending.
func (r *reclaimer) dropped(n int64) {
	if r.pending.Add(n) < reclaimThreshold {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending.Load() < reclaimThreshold {
		return // collected while this one waited
	}
	r.pending.Store(0)
	runtime.GC()
	r.runs.Add(1)
	r.returned.Store(false)
}

// idle returns what the collections freed to the OS, once after each collection, in the background:
// nothing is being served, so nothing would reuse it soon.
func (r *reclaimer) idle() {
	if r.returned.Swap(true) {
		return
	}
	go func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.pending.Store(0)
		debug.FreeOSMemory()
	}()
}
