package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/pipeline"
)

// object is one configuration's stored-object bytes, Header ‖ Data ‖ Tail, with what a response
// names of it. It is immutable once built and shared by every response (and the LRU) that serves it.
type object struct {
	Key     string
	Header  []byte // safetensors header (8-byte length, JSON with the provenance, padding)
	Data    []byte // the frames tensor
	Tail    []byte // the indices tensor
	Meta    map[string]string
	Shape   []int
	DType   cache.DType
	Indices []int
	// DataSHA256 is the hex sha256 of Data (a sweep record's input_sha256 for uint8 frames).
	DataSHA256 string
}

// size is the whole object's length.
func (o *object) size() int64 { return int64(len(o.Header) + len(o.Data) + len(o.Tail)) }

// fromPipeline wraps a MemorySink object.
func fromPipeline(po *pipeline.Object) *object {
	j := po.Result.Job
	return &object{Key: j.Key, Header: po.Header, Data: po.Data, Tail: po.Tail, Meta: pipeline.ObjectMetadata(po.Result),
		Shape: j.Shape(), DType: j.DType, Indices: j.Selection.Indices, DataSHA256: po.DataSHA256}
}

// fromStored wraps the verified bytes of a stored object (cache.Store.Get): a framesweep object whose
// frames and indices tensors are its data section, in that order.
func fromStored(key string, b []byte) (*object, error) {
	f, err := cache.ParseSafetensors(b)
	if err != nil {
		return nil, err
	}
	fr, ok1 := f.Tensors["frames"]
	ix, ok2 := f.Tensors["indices"]
	if !ok1 || !ok2 || len(f.Tensors) != 2 || f.Metadata["format"] != pipeline.Format || f.Metadata["key"] != key {
		return nil, fmt.Errorf("object of key %s is not a %s object for that key", key, pipeline.Format)
	}
	off := len(b) - len(fr.Data) - len(ix.Data)
	if off <= 0 || len(fr.Data) == 0 || len(ix.Data) == 0 || &b[off] != &fr.Data[0] || &b[off+len(fr.Data)] != &ix.Data[0] {
		return nil, fmt.Errorf("object of key %s: tensors are not frames then indices at the end", key)
	}
	o := &object{Key: key, Header: b[:off], Data: fr.Data, Tail: ix.Data, Meta: f.Metadata, Shape: fr.Shape, DType: fr.DType}
	if err := json.Unmarshal([]byte(f.Metadata["indices"]), &o.Indices); err != nil {
		return nil, fmt.Errorf("object of key %s: metadata indices: %v", key, err)
	}
	sum := sha256.Sum256(fr.Data)
	o.DataSHA256 = hex.EncodeToString(sum[:])
	return o, nil
}
