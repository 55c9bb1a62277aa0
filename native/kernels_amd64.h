// Declarations of the YUV and tensor C kernels (references: yuv_generic.go, tensor_generic.go).
#include <stdint.h>
#include <stddef.h>

void native_yuv420_rgb(const uint8_t *Y, ptrdiff_t ys, const uint8_t *U, ptrdiff_t us,
                       const uint8_t *V, ptrdiff_t vs, int w, int h, uint8_t *dst, ptrdiff_t ds);
void native_tensor(const uint8_t *src, ptrdiff_t stride, int w, int h, float *f32, uint16_t *f16,
                   int nchw, double scale, const float *norm);
void native_f32_to_f16(const float *src, uint16_t *dst, ptrdiff_t n);
void native_torch_h(const uint8_t *src, ptrdiff_t ss, int rows, float *tmp, uint8_t *dst, ptrdiff_t ds,
                    int out_w, const int32_t *xmin, const int32_t *nn, const float *w, int ksize);
void native_torch_v(const float *srcf, const uint8_t *src8, ptrdiff_t ss, int rb, uint8_t *dst, ptrdiff_t ds,
                    int out_h, const int32_t *start, const int32_t *nn, const float *w, int ksize);
