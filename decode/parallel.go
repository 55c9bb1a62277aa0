package decode

import (
	"errors"
	"sync"
	"sync/atomic"
)

// readParallel decodes the schedule's segments on p.workers decoders at once, each with a demuxer of its
// own (the first borrows v's), taking the segments in order as they come free. Frames reach fn in
// index order from this goroutine: the segment being delivered streams, later segments' frames wait,
// converted, up to parallelBuffer bytes (a decoder ahead of that stops until its segment's turn).
func (v *Video) readParallel(p *schedule, results []segResult, fn func(*Frame) error, st *Stats) error {
	o := newOrderer(len(p.segments), parallelBuffer)
	readers := make([]*reader, p.workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range readers {
		r := v.newReader(p, nil)
		r.stopped = o.stopped.Load
		readers[w] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.work(r, w > 0, p, results, o, &next)
		}()
	}
	err := o.deliver(fn)
	o.stop()
	wg.Wait()
	for _, r := range readers {
		st.add(&r.st)
		r.close()
	}
	return err
}

// work is one decoder's loop: take the next segment, decode it into the orderer, until none is left,
// the Read stops, or an error ends this reader (the error is its segment's: delivered in turn).
func (v *Video) work(r *reader, ownDemuxer bool, p *schedule, results []segResult, o *orderer, next *atomic.Int64) {
	opened := false
	for !o.stopped.Load() {
		s := int(next.Add(1) - 1)
		if s >= len(p.segments) {
			return
		}
		if !opened {
			opened = true
			if err := r.useDemuxer(ownDemuxer); err != nil {
				o.finish(s, err)
				return
			}
		}
		r.fn = func(f *Frame) error { return o.put(s, f) }
		err := r.runSegment(&p.segments[s], &results[s])
		o.finish(s, err)
		if err != nil {
			return
		}
	}
}

// orderer hands frames from segments decoded at once to the caller in segment order.
type orderer struct {
	mu       sync.Mutex
	cond     sync.Cond
	head     int        // the segment being delivered
	queue    [][]*Frame // by segment: converted frames waiting
	done     []bool     // by segment: its reader finished it
	err      []error    // by segment: the error that ended it
	buffered int        // bytes of frames waiting
	limit    int
	free     [][]byte // pixel buffers delivered, for reuse
	stopped  atomic.Bool
}

func newOrderer(segments, limit int) *orderer {
	o := &orderer{queue: make([][]*Frame, segments), done: make([]bool, segments), err: make([]error, segments), limit: limit}
	o.cond.L = &o.mu
	return o
}

// put queues a copy of segment s's frame. A segment ahead of the one being delivered waits while
// the frames already waiting fill the buffer; the one being delivered never waits.
func (o *orderer) put(s int, f *Frame) error {
	size := len(f.Pix)
	o.mu.Lock()
	for s != o.head && o.buffered > 0 && o.buffered+size > o.limit && !o.stopped.Load() {
		o.cond.Wait()
	}
	if o.stopped.Load() {
		o.mu.Unlock()
		return errStopped
	}
	o.buffered += size
	var buf []byte
	for i, b := range o.free {
		if cap(b) >= size {
			buf = b[:size]
			o.free[i] = o.free[len(o.free)-1]
			o.free = o.free[:len(o.free)-1]
			break
		}
	}
	o.mu.Unlock()
	if buf == nil {
		buf = make([]byte, size)
	}
	c := *f
	copy(buf, f.Pix)
	c.Pix = buf
	o.mu.Lock()
	o.queue[s] = append(o.queue[s], &c)
	o.cond.Broadcast()
	o.mu.Unlock()
	return nil
}

// finish records that segment s's reader is done with it (err: what ended it, nil when it ran out).
func (o *orderer) finish(s int, err error) {
	o.mu.Lock()
	o.done[s] = true
	if !errors.Is(err, errStopped) {
		o.err[s] = err
	}
	o.cond.Broadcast()
	o.mu.Unlock()
}

// stop ends the Read for every reader: those waiting to queue a frame return errStopped, the others
// stop at their next packet.
func (o *orderer) stop() {
	o.mu.Lock()
	o.stopped.Store(true)
	o.cond.Broadcast()
	o.mu.Unlock()
}

// deliver calls fn on every segment's frames, segment after segment, and returns the first error: a
// segment's (after its frames before the error) or fn's.
func (o *orderer) deliver(fn func(*Frame) error) error {
	for s := range o.queue {
		o.mu.Lock()
		o.head = s
		o.cond.Broadcast()
		for {
			for len(o.queue[s]) == 0 && !o.done[s] {
				o.cond.Wait()
			}
			if len(o.queue[s]) == 0 {
				err := o.err[s]
				o.mu.Unlock()
				if err != nil {
					return err
				}
				break
			}
			f := o.queue[s][0]
			o.queue[s] = o.queue[s][1:]
			o.mu.Unlock()
			err := fn(f)
			o.mu.Lock()
			o.buffered -= len(f.Pix)
			o.free = append(o.free, f.Pix)
			o.cond.Broadcast()
			if err != nil {
				o.mu.Unlock()
				return err
			}
		}
	}
	return nil
}
