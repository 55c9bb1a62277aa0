//go:build amd64 && cgo && !noasm

// Pillow-exact resampling kernels, AVX2 and AVX-512. Reference: resample_generic.go.
// All arithmetic is int32 as in Pillow's 8bpc path; sums are taken in a different order, which is
// exact because two's-complement addition is associative.
#include <immintrin.h>
#include <string.h>
#include "resample_amd64.h"

#define PRECISION_BITS 22
#define HALF (1 << (PRECISION_BITS - 1))

static inline uint8_t clip8(int32_t v) {
    v >>= PRECISION_BITS;
    return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

// Horizontal pass, AVX2: two taps per vector. Loads 8 bytes at each pixel pair (6 used); the caller
// guarantees 8 readable bytes past the last pixel of every row passed in (see horizontalAsm).
__attribute__((target("avx2")))
static void h_avx2(const uint8_t *src, ptrdiff_t ss, int rows, uint8_t *dst, ptrdiff_t ds, int out_w,
                   const int32_t *xmin, const int32_t *ng, const int32_t *goff, const int32_t *co) {
    const __m256i sh = _mm256_setr_epi32(3, 4, 5, 0, 0, 0, 0, 0);
    for (int y = 0; y < rows; y++) {
        const uint8_t *in = src + y * ss;
        uint8_t *out = dst + y * ds;
        for (int x = 0; x < out_w; x++) {
            const uint8_t *p = in + 3 * xmin[x];
            const int32_t *k = co + goff[x];
            int n = ng[x];
            __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
            int g = 0;
            for (; g + 1 < n; g += 2) {
                __m256i v0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + 6 * g)));
                __m256i v1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + 6 * g + 6)));
                acc0 = _mm256_add_epi32(acc0, _mm256_mullo_epi32(v0, _mm256_loadu_si256((const __m256i *)(k + 8 * g))));
                acc1 = _mm256_add_epi32(acc1, _mm256_mullo_epi32(v1, _mm256_loadu_si256((const __m256i *)(k + 8 * g + 8))));
            }
            if (g < n) {
                __m256i v0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + 6 * g)));
                acc0 = _mm256_add_epi32(acc0, _mm256_mullo_epi32(v0, _mm256_loadu_si256((const __m256i *)(k + 8 * g))));
            }
            acc0 = _mm256_add_epi32(acc0, acc1);
            acc0 = _mm256_add_epi32(acc0, _mm256_permutevar8x32_epi32(acc0, sh));
            int32_t r[8];
            _mm256_storeu_si256((__m256i *)r, acc0);
            out[3 * x + 0] = clip8(r[0] + HALF);
            out[3 * x + 1] = clip8(r[1] + HALF);
            out[3 * x + 2] = clip8(r[2] + HALF);
        }
    }
}

// Horizontal pass, AVX-512: four taps per vector; loads 16 bytes per pixel quad (12 used).
__attribute__((target("avx512f,avx512bw,avx512vl,avx2")))
static void h_avx512(const uint8_t *src, ptrdiff_t ss, int rows, uint8_t *dst, ptrdiff_t ds, int out_w,
                     const int32_t *xmin, const int32_t *ng, const int32_t *goff, const int32_t *co) {
    const __m512i sh6 = _mm512_setr_epi32(6, 7, 8, 9, 10, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i sh3 = _mm256_setr_epi32(3, 4, 5, 0, 0, 0, 0, 0);
    for (int y = 0; y < rows; y++) {
        const uint8_t *in = src + y * ss;
        uint8_t *out = dst + y * ds;
        for (int x = 0; x < out_w; x++) {
            const uint8_t *p = in + 3 * xmin[x];
            const int32_t *k = co + goff[x];
            int n = ng[x];
            __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
            int g = 0;
            for (; g + 1 < n; g += 2) {
                __m512i v0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + 12 * g)));
                __m512i v1 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + 12 * g + 12)));
                acc0 = _mm512_add_epi32(acc0, _mm512_mullo_epi32(v0, _mm512_loadu_si512(k + 16 * g)));
                acc1 = _mm512_add_epi32(acc1, _mm512_mullo_epi32(v1, _mm512_loadu_si512(k + 16 * g + 16)));
            }
            if (g < n) {
                __m512i v0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + 12 * g)));
                acc0 = _mm512_add_epi32(acc0, _mm512_mullo_epi32(v0, _mm512_loadu_si512(k + 16 * g)));
            }
            acc0 = _mm512_add_epi32(acc0, acc1);
            // lanes 0..11 hold R G B for taps 0..3: fold 6..11 onto 0..5, then 3..5 onto 0..2.
            acc0 = _mm512_add_epi32(acc0, _mm512_permutexvar_epi32(sh6, acc0));
            __m256i a = _mm512_castsi512_si256(acc0);
            a = _mm256_add_epi32(a, _mm256_permutevar8x32_epi32(a, sh3));
            int32_t r[8];
            _mm256_storeu_si256((__m256i *)r, a);
            out[3 * x + 0] = clip8(r[0] + HALF);
            out[3 * x + 1] = clip8(r[1] + HALF);
            out[3 * x + 2] = clip8(r[2] + HALF);
        }
    }
}

void native_resample_h(int level, const uint8_t *src, ptrdiff_t src_stride, int rows,
                       uint8_t *dst, ptrdiff_t dst_stride, int out_w,
                       const int32_t *xmin, const int32_t *ngroups, const int32_t *goff,
                       const int32_t *coeffs) {
    if (level >= 2) {
        h_avx512(src, src_stride, rows, dst, dst_stride, out_w, xmin, ngroups, goff, coeffs);
    } else {
        h_avx2(src, src_stride, rows, dst, dst_stride, out_w, xmin, ngroups, goff, coeffs);
    }
}

// Vertical pass, AVX2: 32 bytes of a row per iteration in four 8-lane int32 accumulators, one
// broadcast weight per source row; scalar tail.
__attribute__((target("avx2")))
static void v_avx2(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int rb, int out_h,
                   const int32_t *ymin, const int32_t *nn, const int32_t *kk, int ksize) {
    const __m256i half = _mm256_set1_epi32(HALF);
    for (int yy = 0; yy < out_h; yy++) {
        const uint8_t *in = src + ymin[yy] * ss;
        const int32_t *k = kk + (ptrdiff_t)yy * ksize;
        int n = nn[yy];
        uint8_t *out = dst + yy * ds;
        int i = 0;
        for (; i + 32 <= rb; i += 32) {
            __m256i a0 = half, a1 = half, a2 = half, a3 = half;
            for (int t = 0; t < n; t++) {
                const uint8_t *p = in + t * ss + i;
                __m256i w = _mm256_set1_epi32(k[t]);
                __m128i b0 = _mm_loadu_si128((const __m128i *)p);
                __m128i b1 = _mm_loadu_si128((const __m128i *)(p + 16));
                a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(b0), w));
                a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(b0, 8)), w));
                a2 = _mm256_add_epi32(a2, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(b1), w));
                a3 = _mm256_add_epi32(a3, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(b1, 8)), w));
            }
            a0 = _mm256_srai_epi32(a0, PRECISION_BITS);
            a1 = _mm256_srai_epi32(a1, PRECISION_BITS);
            a2 = _mm256_srai_epi32(a2, PRECISION_BITS);
            a3 = _mm256_srai_epi32(a3, PRECISION_BITS);
            // packs/packus saturate to 0..255, i.e. clip8; they work per 128-bit lane, hence the permute.
            __m256i w01 = _mm256_packs_epi32(a0, a1);
            __m256i w23 = _mm256_packs_epi32(a2, a3);
            __m256i b = _mm256_packus_epi16(w01, w23);
            b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256((__m256i *)(out + i), b);
        }
        for (; i < rb; i++) {
            int32_t s = HALF;
            for (int t = 0; t < n; t++) s += (int32_t)in[t * ss + i] * k[t];
            out[i] = clip8(s);
        }
    }
}

// Vertical pass, AVX-512: 64 bytes per iteration in four 16-lane accumulators.
__attribute__((target("avx512f,avx512bw,avx512vl,avx2")))
static void v_avx512(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int rb, int out_h,
                     const int32_t *ymin, const int32_t *nn, const int32_t *kk, int ksize) {
    const __m512i half = _mm512_set1_epi32(HALF);
    for (int yy = 0; yy < out_h; yy++) {
        const uint8_t *in = src + ymin[yy] * ss;
        const int32_t *k = kk + (ptrdiff_t)yy * ksize;
        int n = nn[yy];
        uint8_t *out = dst + yy * ds;
        int i = 0;
        for (; i + 64 <= rb; i += 64) {
            __m512i a0 = half, a1 = half, a2 = half, a3 = half;
            for (int t = 0; t < n; t++) {
                const uint8_t *p = in + t * ss + i;
                __m512i w = _mm512_set1_epi32(k[t]);
                a0 = _mm512_add_epi32(a0, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)), w));
                a1 = _mm512_add_epi32(a1, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + 16))), w));
                a2 = _mm512_add_epi32(a2, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + 32))), w));
                a3 = _mm512_add_epi32(a3, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + 48))), w));
            }
            // vpmovsdb saturates int32 to int8; clamp to 0..255 first and use the unsigned narrowing.
            const __m512i zero = _mm512_setzero_si512(), max = _mm512_set1_epi32(255);
            a0 = _mm512_min_epi32(_mm512_max_epi32(_mm512_srai_epi32(a0, PRECISION_BITS), zero), max);
            a1 = _mm512_min_epi32(_mm512_max_epi32(_mm512_srai_epi32(a1, PRECISION_BITS), zero), max);
            a2 = _mm512_min_epi32(_mm512_max_epi32(_mm512_srai_epi32(a2, PRECISION_BITS), zero), max);
            a3 = _mm512_min_epi32(_mm512_max_epi32(_mm512_srai_epi32(a3, PRECISION_BITS), zero), max);
            _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi32_epi8(a0));
            _mm_storeu_si128((__m128i *)(out + i + 16), _mm512_cvtepi32_epi8(a1));
            _mm_storeu_si128((__m128i *)(out + i + 32), _mm512_cvtepi32_epi8(a2));
            _mm_storeu_si128((__m128i *)(out + i + 48), _mm512_cvtepi32_epi8(a3));
        }
        for (; i < rb; i++) {
            int32_t s = HALF;
            for (int t = 0; t < n; t++) s += (int32_t)in[t * ss + i] * k[t];
            out[i] = clip8(s);
        }
    }
}

void native_resample_v(int level, const uint8_t *src, ptrdiff_t src_stride,
                       uint8_t *dst, ptrdiff_t dst_stride, int row_bytes, int out_h,
                       const int32_t *ymin, const int32_t *n, const int32_t *k, int ksize) {
    if (level >= 2) {
        v_avx512(src, src_stride, dst, dst_stride, row_bytes, out_h, ymin, n, k, ksize);
    } else {
        v_avx2(src, src_stride, dst, dst_stride, row_bytes, out_h, ymin, n, k, ksize);
    }
}
