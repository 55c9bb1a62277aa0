package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/framesweep/framesweep/cache"
)

// StoreSink writes every job's object into a content-addressed store, streaming the frames tensor
// into a spool as frames arrive and publishing the object (header ‖ spool ‖ indices) when the last
// one has: memory holds no configuration's tensor, whatever the grid.
type StoreSink struct {
	Ctx   context.Context
	Store *cache.Store
	// Written, when set, is called after each object is published (from the pass's goroutines); an
	// error stops the pass.
	Written func(r *Result, ref cache.Ref) error
}

// Begin implements Sink.
func (s *StoreSink) Begin(j *Job) (JobWriter, error) {
	if j.Key == "" {
		return nil, fmt.Errorf("config %s: the job has no content key (PlanFrames): it cannot be stored", j.Config.ID)
	}
	sp, err := s.Store.NewSpool()
	if err != nil {
		return nil, err
	}
	return &storeWriter{s: s, sp: sp}, nil
}

type storeWriter struct {
	s  *StoreSink
	sp *cache.Spool
}

func (w *storeWriter) Frame(_ int, data []byte) error {
	_, err := w.sp.Write(data)
	return err
}

func (w *storeWriter) Done(r *Result) error {
	defer w.sp.Close()
	head, err := ObjectHeader(r)
	if err != nil {
		return err
	}
	ctx := w.s.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ref, err := w.s.Store.PutSpooled(ctx, r.Job.Key, head, w.sp, IndicesData(r.Job))
	if err != nil {
		return err
	}
	if w.s.Written != nil {
		return w.s.Written(r, ref)
	}
	return nil
}

func (w *storeWriter) Abort(error) { w.sp.Close() }

// Object is one job's input held in memory: the stored-object bytes are Header ‖ Data ‖ Tail.
type Object struct {
	Result *Result
	Header []byte
	Data   []byte // the frames tensor
	Tail   []byte // the indices tensor
	// DataSHA256 is the hex sha256 of Data: for uint8 jobs, the digest of exactly the RGB frames a
	// model is fed (a sweep record's input_sha256).
	DataSHA256 string
}

// Bytes is the whole object (a copy).
func (o *Object) Bytes() []byte {
	out := make([]byte, 0, len(o.Header)+len(o.Data)+len(o.Tail))
	return append(append(append(out, o.Header...), o.Data...), o.Tail...)
}

// Input parses the object back into its input (frames aliasing a copy of the bytes).
func (o *Object) Input() (*Input, error) {
	f, err := cache.ParseSafetensors(o.Bytes())
	if err != nil {
		return nil, err
	}
	return ReadInput(f)
}

// MemorySink keeps each job's tensor in memory and hands the finished Object to Done, for callers
// that feed a model or answer a request right away. It holds every unfinished job's tensor, so size
// the jobs of one pass to the memory at hand.
type MemorySink struct {
	// Done is called once per finished job, from the pass's goroutines; an error stops the pass.
	Done func(o *Object) error
}

// Begin implements Sink.
func (m *MemorySink) Begin(j *Job) (JobWriter, error) {
	return &memWriter{m: m, data: make([]byte, 0, j.TensorBytes()), h: sha256.New()}, nil
}

type memWriter struct {
	m    *MemorySink
	data []byte
	h    hash.Hash
}

func (w *memWriter) Frame(_ int, data []byte) error {
	w.data = append(w.data, data...)
	w.h.Write(data)
	return nil
}

func (w *memWriter) Done(r *Result) error {
	head, err := ObjectHeader(r)
	if err != nil {
		return err
	}
	o := &Object{Result: r, Header: head, Data: w.data, Tail: IndicesData(r.Job), DataSHA256: hex.EncodeToString(w.h.Sum(nil))}
	w.data = nil
	if w.m.Done == nil {
		return nil
	}
	return w.m.Done(o)
}

func (w *memWriter) Abort(error) { w.data = nil }
