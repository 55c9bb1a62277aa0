// Declarations of the tensor and torch-bicubic C kernels (references: tensor_generic.go, torch_generic.go).
#include <stdint.h>
#include <stddef.h>

void native_tensor(const uint8_t *src, ptrdiff_t stride, int w, int h, float *f32, uint16_t *f16,
                   int nchw, double scale, const float *norm);
void native_f32_to_f16(const float *src, uint16_t *dst, ptrdiff_t n);
void native_torch_h(const uint8_t *src, ptrdiff_t ss, int rows, float *tmp, uint8_t *dst, ptrdiff_t ds,
                    int out_w, const int32_t *xmin, const int32_t *nn, const float *w, int ksize);
void native_torch_v(const float *srcf, const uint8_t *src8, ptrdiff_t ss, int rb, uint8_t *dst, ptrdiff_t ds,
                    int out_h, const int32_t *start, const int32_t *nn, const float *w, int ksize);
