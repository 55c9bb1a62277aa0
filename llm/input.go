package llm

// TensorInput is implemented by a runtime that takes the engine's tensor itself (Request.Tensors)
// rather than frames (llm/onnx). Input says how that tensor is built; a caller plans the runtime's
// inputs with these values (pipeline.Options and a grid's resolution), so the bytes the model consumes
// are the frames tensor whose sha256 a record stores as input_sha256 — no resize or conversion of
// the runtime's own in between.
type TensorInput interface {
	Input() InputSpec
}

// InputSpec is how the engine builds a tensor runtime's input, in the names grids and
// pipeline.Options use.
type InputSpec struct {
	Geometry string // resize/geom spec of what the model sees, e.g. "pad:192x48"
	Kernel   string // resize kernel, e.g. "cv-linear"
	DType    string // tensor dtype: "F32"
	Norm     string // normalisation, e.g. "half" or "mean=M|M|M,std=S|S|S" (pipeline.ParseNorm)
	Layout   string // tensor layout: "NCHW" or "NHWC"
}
