// Declarations of the C kernels in resample_amd64.c (references: resample_generic.go).
#include <stdint.h>
#include <stddef.h>

void native_resample_h(int level, const uint8_t *src, ptrdiff_t src_stride, int rows,
                       uint8_t *dst, ptrdiff_t dst_stride, int out_w,
                       const int32_t *xmin, const int32_t *ngroups, const int32_t *goff,
                       const int16_t *coeffs);
void native_resample_v(int level, const uint8_t *src, ptrdiff_t src_stride,
                       uint8_t *dst, ptrdiff_t dst_stride, int row_bytes, int out_h,
                       const int32_t *ymin, const int32_t *n, const int32_t *k, int ksize);
