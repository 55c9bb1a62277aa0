//go:build amd64 && cgo && !noasm

// The float path, AVX2 + F16C. Reference: tensor_generic.go. Every element is computed as
// ((float)((double)v * scale) - mean) / std with each operation rounded (HF rescale multiplies in
// double), so FMA contraction must stay off.
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>
#include "kernels_amd64.h"

// norm = {mean0, mean1, mean2, std0, std1, std2}; scale is a double.
__attribute__((target("avx2,f16c")))
static inline __m256 nvec(__m128i b8, __m256d scale, __m256 mean, __m256 std) {
    // v * scale in double (exact int, one rounding), then rounded once to float.
    __m256i v32 = _mm256_cvtepu8_epi32(b8);
    __m128 lo = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(v32)), scale));
    __m128 hi = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(v32, 1)), scale));
    __m256 x = _mm256_set_m128(hi, lo);
    return _mm256_div_ps(_mm256_sub_ps(x, mean), std);
}

__attribute__((target("avx2,f16c")))
static inline float nscalar(uint8_t v, double scale, float mean, float std) {
    // Through the vector unit too, so scalar and vector elements round identically.
    __m128d d = _mm_mul_sd(_mm_set_sd((double)v), _mm_set_sd(scale));
    __m128 x = _mm_cvtsd_ss(_mm_setzero_ps(), d);
    x = _mm_div_ss(_mm_sub_ss(x, _mm_set_ss(mean)), _mm_set_ss(std));
    return _mm_cvtss_f32(x);
}

__attribute__((target("avx2,f16c")))
static inline void put(float *f32, uint16_t *f16, ptrdiff_t i, __m256 v) {
    if (f32) {
        _mm256_storeu_ps(f32 + i, v);
    } else {
        _mm_storeu_si128((__m128i *)(f16 + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
}

__attribute__((target("avx2,f16c")))
static inline void put1(float *f32, uint16_t *f16, ptrdiff_t i, float v) {
    if (f32) {
        f32[i] = v;
    } else {
        f16[i] = _cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
}

__attribute__((target("avx2,f16c")))
void native_tensor(const uint8_t *src, ptrdiff_t stride, int w, int h, float *f32, uint16_t *f16,
                   int nchw, double sc, const float *norm) {
    const __m256d scale = _mm256_set1_pd(sc);
    if (!nchw) {
        // 24 interleaved bytes = three vectors whose channel pattern repeats: c(i) = i % 3.
        __m256 mean[3], std[3];
        for (int k = 0; k < 3; k++) {
            float m[8], s[8];
            for (int j = 0; j < 8; j++) {
                m[j] = norm[(8 * k + j) % 3];
                s[j] = norm[3 + (8 * k + j) % 3];
            }
            mean[k] = _mm256_loadu_ps(m);
            std[k] = _mm256_loadu_ps(s);
        }
        const int rb = 3 * w;
        for (int y = 0; y < h; y++) {
            const uint8_t *in = src + y * stride;
            ptrdiff_t o = (ptrdiff_t)y * rb;
            int i = 0;
            for (; i + 24 <= rb; i += 24) {
                for (int k = 0; k < 3; k++) {
                    __m128i b8 = _mm_loadl_epi64((const __m128i *)(in + i + 8 * k));
                    put(f32, f16, o + i + 8 * k, nvec(b8, scale, mean[k], std[k]));
                }
            }
            for (; i < rb; i++) {
                put1(f32, f16, o + i, nscalar(in[i], sc, norm[i % 3], norm[3 + i % 3]));
            }
        }
        return;
    }
    const ptrdiff_t plane = (ptrdiff_t)w * h;
    __m256 mean[3], std[3];
    for (int c = 0; c < 3; c++) {
        mean[c] = _mm256_set1_ps(norm[c]);
        std[c] = _mm256_set1_ps(norm[3 + c]);
    }
    for (int y = 0; y < h; y++) {
        const uint8_t *in = src + y * stride;
        ptrdiff_t o = (ptrdiff_t)y * w;
        int x = 0;
        for (; x + 8 <= w; x += 8) {
            uint8_t ch[3][8];
            for (int j = 0; j < 8; j++) {
                ch[0][j] = in[3 * (x + j)];
                ch[1][j] = in[3 * (x + j) + 1];
                ch[2][j] = in[3 * (x + j) + 2];
            }
            for (int c = 0; c < 3; c++) {
                __m128i b8 = _mm_loadl_epi64((const __m128i *)ch[c]);
                put(f32, f16, c * plane + o + x, nvec(b8, scale, mean[c], std[c]));
            }
        }
        for (; x < w; x++) {
            for (int c = 0; c < 3; c++) {
                put1(f32, f16, c * plane + o + x, nscalar(in[3 * x + c], sc, norm[c], norm[3 + c]));
            }
        }
    }
}

__attribute__((target("avx2,f16c")))
void native_f32_to_f16(const float *src, uint16_t *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(src + i);
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    for (; i < n; i++) dst[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
