// Package onnx is the ONNX Runtime backend of llm (github.com/yalue/onnxruntime_go v1.27.0 with
// libonnxruntime.so.1 1.30.0): an image classifier answers a multiple-choice question by mapping option i
// to the model's class i. The question text does not reach the model; options must be listed in class
// order (for the PP-OCR text-orientation classifier: "A. upright (0°)", "B. upside down (180°)").
//
// Spec: onnx:model=PATH[,size=HxW,layout=nchw|nhwc,threads=N,lib=PATH,mean=M|M|M,std=S|S|S,resize=pad|stretch,kernel=K]
//
// Input: one float32 tensor of rank 4, NCHW [N,3,H,W] or NHWC [N,H,W,3], read from the model; when the
// model leaves H and W dynamic (PP-OCR cls does), size=HxW gives them (48x192 for PP-OCR cls). When dims
// 1 and 3 are both 3 the layout is ambiguous and layout= must say which. The runtime preprocesses
// nothing: it takes exactly one tensor (Request.Tensors) of that shape, the engine's, and says how to
// build it (Runtime.Input, llm.TensorInput): geometry pad:WxH (height H, aspect kept, zero-padded on the
// right after normalisation, as PaddleOCR's resize_norm_img) or, with resize=stretch, WxH; kernel K
// (default cv-linear, cv2.resize); float32; (x/255 - mean)/std per channel (default mean 0.5, std 0.5,
// PP-OCR's); the model's layout. So the bytes the model consumes are the frames tensor whose sha256 a
// record stores as input_sha256. Frames are refused (llm.ErrBadRequest naming the input to build).
// Output: one float32 tensor [N,K]; rows that are not already probabilities get a softmax; the answer's
// probabilities are the mean over the N images.
//
// The ONNX Runtime environment is process-wide: the first Open initialises it and the last Close
// destroys it. LiveHandles counts sessions and the environment reference.
package onnx
