//go:build amd64 && cgo && !noasm

// Planar YUV 4:2:0 → RGB24, AVX2. Reference: yuv_generic.go (same integer formula, so equal bytes).
#include <immintrin.h>
#include "kernels_amd64.h"

// pshufb masks that interleave 16 R, 16 G, 16 B bytes into 48 RGB bytes: kIlv[3*k + c] selects channel
// c's bytes for output block k (bytes 16k..16k+15).
static const int8_t kIlv[9][16] = {
    {0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, 5},
    {-1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1},
    {-1, -1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1},
    {-1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10, -1},
    {5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10},
    {-1, 5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1},
    {-1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1, -1},
    {-1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1},
    {10, -1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15}
};

static inline uint8_t clampb(int32_t v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

__attribute__((target("avx2")))
static inline __m128i pack16(__m256i a, __m256i b) {
    __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
    return _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
}

__attribute__((target("avx2")))
void native_yuv420_rgb(const uint8_t *Y, ptrdiff_t ys, const uint8_t *U, ptrdiff_t us,
                       const uint8_t *V, ptrdiff_t vs, int w, int h, uint8_t *dst, ptrdiff_t ds) {
    const __m256i k16 = _mm256_set1_epi32(16), k128 = _mm256_set1_epi32(128);
    const __m256i k298 = _mm256_set1_epi32(298), k409 = _mm256_set1_epi32(409), k100 = _mm256_set1_epi32(100);
    const __m256i k208 = _mm256_set1_epi32(208), k516 = _mm256_set1_epi32(516);
    __m128i m[9];
    for (int i = 0; i < 9; i++) m[i] = _mm_loadu_si128((const __m128i *)kIlv[i]);
    for (int y = 0; y < h; y++) {
        const uint8_t *yr = Y + y * ys, *ur = U + (y / 2) * us, *vr = V + (y / 2) * vs;
        uint8_t *out = dst + y * ds;
        int x = 0;
        for (; x + 16 <= w; x += 16) {
            __m128i yy = _mm_loadu_si128((const __m128i *)(yr + x));
            __m128i uu = _mm_loadl_epi64((const __m128i *)(ur + x / 2));
            __m128i vv = _mm_loadl_epi64((const __m128i *)(vr + x / 2));
            uu = _mm_unpacklo_epi8(uu, uu);
            vv = _mm_unpacklo_epi8(vv, vv);
            __m256i r[2], g[2], b[2];
            for (int hh = 0; hh < 2; hh++) {
                __m128i ys8 = hh ? _mm_srli_si128(yy, 8) : yy;
                __m128i us8 = hh ? _mm_srli_si128(uu, 8) : uu;
                __m128i vs8 = hh ? _mm_srli_si128(vv, 8) : vv;
                __m256i c = _mm256_mullo_epi32(_mm256_sub_epi32(_mm256_cvtepu8_epi32(ys8), k16), k298);
                __m256i d = _mm256_sub_epi32(_mm256_cvtepu8_epi32(us8), k128);
                __m256i e = _mm256_sub_epi32(_mm256_cvtepu8_epi32(vs8), k128);
                __m256i c1 = _mm256_add_epi32(c, k128);
                r[hh] = _mm256_srai_epi32(_mm256_add_epi32(c1, _mm256_mullo_epi32(e, k409)), 8);
                g[hh] = _mm256_srai_epi32(_mm256_sub_epi32(_mm256_sub_epi32(c1, _mm256_mullo_epi32(d, k100)),
                                                           _mm256_mullo_epi32(e, k208)), 8);
                b[hh] = _mm256_srai_epi32(_mm256_add_epi32(c1, _mm256_mullo_epi32(d, k516)), 8);
            }
            __m128i R = pack16(r[0], r[1]), G = pack16(g[0], g[1]), B = pack16(b[0], b[1]);
            for (int k = 0; k < 3; k++) {
                __m128i o = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(R, m[3 * k]), _mm_shuffle_epi8(G, m[3 * k + 1])),
                                         _mm_shuffle_epi8(B, m[3 * k + 2]));
                _mm_storeu_si128((__m128i *)(out + 3 * x + 16 * k), o);
            }
        }
        for (; x < w; x++) {
            int32_t c = 298 * ((int32_t)yr[x] - 16), d = (int32_t)ur[x / 2] - 128, e = (int32_t)vr[x / 2] - 128;
            out[3 * x] = clampb((c + 409 * e + 128) >> 8);
            out[3 * x + 1] = clampb((c - 100 * d - 208 * e + 128) >> 8);
            out[3 * x + 2] = clampb((c + 516 * d + 128) >> 8);
        }
    }
}
