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

// Horizontal pass: four taps per 256-bit vector with vpmaddwd. Each 22-bit weight k is split exactly
// as k = hi*2^15 + lo (lo in 0..32767, hi = k>>15), so two 16x16->32 multiply-adds reproduce the int32
// product sums mod 2^32, which is all Pillow's int32 arithmetic keeps. One 16-byte load covers the four
// pixels (12 bytes); a shuffle makes 16-bit words [Ra Rb Ga Gb Ba Bb 0 0] per 128-bit lane (taps 0,1 in
// lane 0, taps 2,3 in lane 1). Coefficients per group: 16 words lo, then 16 words hi (buildSIMDCoeffs).
// The caller guarantees 16 readable bytes past the last pixel of every row passed in.
__attribute__((target("avx2")))
static void h_avx2(const uint8_t *src, ptrdiff_t ss, int rows, uint8_t *dst, ptrdiff_t ds, int out_w,
                   const int32_t *xmin, const int32_t *ng, const int32_t *goff, const int16_t *co) {
    const __m256i ctl = _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,
                                         6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1);
    const __m128i half = _mm_set1_epi32(HALF);
    for (int y = 0; y < rows; y++) {
        const uint8_t *in = src + y * ss;
        uint8_t *out = dst + y * ds;
        for (int x = 0; x < out_w; x++) {
            const uint8_t *p = in + 3 * xmin[x];
            const __m256i *k = (const __m256i *)(co + 32 * (ptrdiff_t)goff[x]);
            int n = ng[x];
            __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
            for (int g = 0; g < n; g++) {
                __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p + 12 * g)));
                v = _mm256_shuffle_epi8(v, ctl);
                lo = _mm256_add_epi32(lo, _mm256_madd_epi16(v, _mm256_loadu_si256(k + 2 * g)));
                hi = _mm256_add_epi32(hi, _mm256_madd_epi16(v, _mm256_loadu_si256(k + 2 * g + 1)));
            }
            __m256i s = _mm256_add_epi32(_mm256_slli_epi32(hi, 15), lo);
            __m128i r = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            r = _mm_srai_epi32(_mm_add_epi32(r, half), PRECISION_BITS);
            r = _mm_packus_epi16(_mm_packs_epi32(r, r), r); // saturating packs == clip8
            uint32_t px = (uint32_t)_mm_cvtsi128_si32(r);
            if (x + 1 < out_w) {
                memcpy(out + 3 * x, &px, 4); // the 4th byte is overwritten by the next pixel
            } else {
                out[3 * x] = (uint8_t)px;
                out[3 * x + 1] = (uint8_t)(px >> 8);
                out[3 * x + 2] = (uint8_t)(px >> 16);
            }
        }
    }
}

// Horizontal pass, AVX-512: the same four-tap groups for two source rows at once (row y in the low
// 256 bits, row y+1 in the high 256 bits), sharing each coefficient load.
__attribute__((target("avx512f,avx512bw,avx512vl,avx2")))
static void h_avx512(const uint8_t *src, ptrdiff_t ss, int rows, uint8_t *dst, ptrdiff_t ds, int out_w,
                     const int32_t *xmin, const int32_t *ng, const int32_t *goff, const int16_t *co) {
    const __m512i ctl = _mm512_broadcast_i64x4(_mm256_setr_epi8(
        0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,
        6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1));
    const __m128i half = _mm_set1_epi32(HALF);
    int y = 0;
    for (; y + 1 < rows; y += 2) {
        const uint8_t *in0 = src + y * ss, *in1 = in0 + ss;
        uint8_t *out0 = dst + y * ds, *out1 = out0 + ds;
        for (int x = 0; x < out_w; x++) {
            const uint8_t *p0 = in0 + 3 * xmin[x], *p1 = in1 + 3 * xmin[x];
            const int16_t *k = co + 32 * (ptrdiff_t)goff[x];
            int n = ng[x];
            __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
            for (int g = 0; g < n; g++) {
                __m512i v = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(p0 + 12 * g)));
                v = _mm512_mask_broadcast_i32x4(v, 0xFF00, _mm_loadu_si128((const __m128i *)(p1 + 12 * g)));
                v = _mm512_shuffle_epi8(v, ctl);
                __m512i kl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(k + 32 * g)));
                __m512i kh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(k + 32 * g + 16)));
                lo = _mm512_add_epi32(lo, _mm512_madd_epi16(v, kl));
                hi = _mm512_add_epi32(hi, _mm512_madd_epi16(v, kh));
            }
            __m512i s = _mm512_add_epi32(_mm512_slli_epi32(hi, 15), lo);
            // lanes (128-bit): 0,1 = row y; 2,3 = row y+1.
            __m256i a = _mm512_castsi512_si256(s), b = _mm512_extracti64x4_epi64(s, 1);
            __m128i r0 = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
            __m128i r1 = _mm_add_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
            r0 = _mm_srai_epi32(_mm_add_epi32(r0, half), PRECISION_BITS);
            r1 = _mm_srai_epi32(_mm_add_epi32(r1, half), PRECISION_BITS);
            __m128i r = _mm_packus_epi16(_mm_packs_epi32(r0, r1), r0);
            uint64_t px = (uint64_t)_mm_cvtsi128_si64(r);
            if (x + 1 < out_w) {
                uint32_t a0 = (uint32_t)px, a1 = (uint32_t)(px >> 32);
                memcpy(out0 + 3 * x, &a0, 4);
                memcpy(out1 + 3 * x, &a1, 4);
            } else {
                out0[3 * x] = (uint8_t)px;
                out0[3 * x + 1] = (uint8_t)(px >> 8);
                out0[3 * x + 2] = (uint8_t)(px >> 16);
                out1[3 * x] = (uint8_t)(px >> 32);
                out1[3 * x + 1] = (uint8_t)(px >> 40);
                out1[3 * x + 2] = (uint8_t)(px >> 48);
            }
        }
    }
    if (y < rows) {
        h_avx2(src + y * ss, ss, rows - y, dst + y * ds, ds, out_w, xmin, ng, goff, co);
    }
}

// Horizontal pass, AVX-512 with VNNI: h_avx512 with vpdpwssd (multiply-add and accumulate in one
// instruction; same exact int32 arithmetic), used at the avx512 level when the CPU has AVX512_VNNI.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2")))
static void h_avx512vnni(const uint8_t *src, ptrdiff_t ss, int rows, uint8_t *dst, ptrdiff_t ds, int out_w,
                     const int32_t *xmin, const int32_t *ng, const int32_t *goff, const int16_t *co) {
    const __m512i ctl = _mm512_broadcast_i64x4(_mm256_setr_epi8(
        0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,
        6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1));
    const __m128i half = _mm_set1_epi32(HALF);
    int y = 0;
    for (; y + 1 < rows; y += 2) {
        const uint8_t *in0 = src + y * ss, *in1 = in0 + ss;
        uint8_t *out0 = dst + y * ds, *out1 = out0 + ds;
        for (int x = 0; x < out_w; x++) {
            const uint8_t *p0 = in0 + 3 * xmin[x], *p1 = in1 + 3 * xmin[x];
            const int16_t *k = co + 32 * (ptrdiff_t)goff[x];
            int n = ng[x];
            __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
            for (int g = 0; g < n; g++) {
                __m512i v = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(p0 + 12 * g)));
                v = _mm512_mask_broadcast_i32x4(v, 0xFF00, _mm_loadu_si128((const __m128i *)(p1 + 12 * g)));
                v = _mm512_shuffle_epi8(v, ctl);
                __m512i kl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(k + 32 * g)));
                __m512i kh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(k + 32 * g + 16)));
                lo = _mm512_dpwssd_epi32(lo, v, kl);
                hi = _mm512_dpwssd_epi32(hi, v, kh);
            }
            __m512i s = _mm512_add_epi32(_mm512_slli_epi32(hi, 15), lo);
            // lanes (128-bit): 0,1 = row y; 2,3 = row y+1.
            __m256i a = _mm512_castsi512_si256(s), b = _mm512_extracti64x4_epi64(s, 1);
            __m128i r0 = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
            __m128i r1 = _mm_add_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
            r0 = _mm_srai_epi32(_mm_add_epi32(r0, half), PRECISION_BITS);
            r1 = _mm_srai_epi32(_mm_add_epi32(r1, half), PRECISION_BITS);
            __m128i r = _mm_packus_epi16(_mm_packs_epi32(r0, r1), r0);
            uint64_t px = (uint64_t)_mm_cvtsi128_si64(r);
            if (x + 1 < out_w) {
                uint32_t a0 = (uint32_t)px, a1 = (uint32_t)(px >> 32);
                memcpy(out0 + 3 * x, &a0, 4);
                memcpy(out1 + 3 * x, &a1, 4);
            } else {
                out0[3 * x] = (uint8_t)px;
                out0[3 * x + 1] = (uint8_t)(px >> 8);
                out0[3 * x + 2] = (uint8_t)(px >> 16);
                out1[3 * x] = (uint8_t)(px >> 32);
                out1[3 * x + 1] = (uint8_t)(px >> 40);
                out1[3 * x + 2] = (uint8_t)(px >> 48);
            }
        }
    }
    if (y < rows) {
        h_avx2(src + y * ss, ss, rows - y, dst + y * ds, ds, out_w, xmin, ng, goff, co);
    }
}

void native_resample_h(int level, const uint8_t *src, ptrdiff_t src_stride, int rows,
                       uint8_t *dst, ptrdiff_t dst_stride, int out_w,
                       const int32_t *xmin, const int32_t *ngroups, const int32_t *goff,
                       const int16_t *coeffs) {
    if (level >= 3) {
        h_avx512vnni(src, src_stride, rows, dst, dst_stride, out_w, xmin, ngroups, goff, coeffs);
    } else if (level >= 2) {
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
