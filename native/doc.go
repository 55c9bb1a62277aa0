// Package native holds framesweep's own C kernels (SIMD) and a pure-Go reference for each:
//
//   - Pillow-exact resampling (BILINEAR, BICUBIC a=-0.5, LANCZOS) of packed RGB24 images, bit for bit
//     equal to Pillow 9.4's Image.resize (reference: resample_generic.go);
//   - torchvision's antialiased bicubic resize of uint8 images (reference: torch_generic.go);
//   - the float path: rescale, mean/std normalise, NHWC or NCHW, float32 or IEEE float16
//     (reference: tensor_generic.go).
//
// The fast paths are C with AVX2 and AVX-512 variants (`__attribute__((target(...)))`), built only for
// amd64 with cgo and without the `noasm` tag. The level is chosen once at start-up from klauspost/cpuid
// and can be forced with SetLevel (tests and benchmarks compare every level with the reference).
// Every kernel makes one cgo call per image or plane, never per pixel; C never keeps Go memory past a call.
package native
