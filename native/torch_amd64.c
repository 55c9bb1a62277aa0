//go:build amd64 && cgo && !noasm

// torchvision's antialiased bicubic, AVX2 + FMA. Reference: torch_generic.go. Each element is computed
// with the same float32 operations in the same order as the reference (the first product; then, for
// taps 1 … split, a rounded product added; after that, fused multiply-adds, as torch's build does), so
// implicit contraction into FMA must stay off: the fused steps are explicit.
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>
#include <string.h>
#include "kernels_amd64.h"

static inline uint8_t tround(float v) {
    if (!(v > 0.0f)) return 0;
    if (v >= 255.0f) return 255;
    return (uint8_t)_mm_cvtss_si32(_mm_set_ss(v)); // MXCSR default: round half to even
}

__attribute__((target("avx2")))
static inline uint32_t load32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

// Width pass, two rows per 256-bit vector: lanes [R G B x] of row y and of row y+1, one broadcast weight
// per tap. Loads 4 bytes per pixel (3 used); the caller guarantees 1 readable byte past each row.
// split is how many taps after the first add a separately rounded product (torchSplit).
static inline int split_of(int n) { return (n - 1) / 4 * 4; }

__attribute__((target("avx2,fma")))
void native_torch_h(const uint8_t *src, ptrdiff_t ss, int rows, float *tmp, uint8_t *dst, ptrdiff_t ds,
                    int out_w, const int32_t *xmin, const int32_t *nn, const float *w, int ksize) {
    int y = 0;
    for (; y < rows; y += 2) {
        const int two = y + 1 < rows;
        const uint8_t *in0 = src + y * ss, *in1 = two ? in0 + ss : in0;
        for (int x = 0; x < out_w; x++) {
            const uint8_t *p0 = in0 + 3 * xmin[x], *p1 = in1 + 3 * xmin[x];
            const float *k = w + (ptrdiff_t)x * ksize;
            int n = nn[x], sp = split_of(n);
            __m128i b = _mm_insert_epi32(_mm_cvtsi32_si128((int)load32(p0)), (int)load32(p1), 1);
            __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), _mm256_set1_ps(k[0]));
            for (int j = 1; j < n; j++) {
                b = _mm_insert_epi32(_mm_cvtsi32_si128((int)load32(p0 + 3 * j)), (int)load32(p1 + 3 * j), 1);
                __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b));
                t = j <= sp ? _mm256_add_ps(t, _mm256_mul_ps(v, _mm256_set1_ps(k[j]))) : _mm256_fmadd_ps(v, _mm256_set1_ps(k[j]), t);
            }
            float r[8];
            _mm256_storeu_ps(r, t);
            for (int h = 0; h <= two; h++) {
                if (tmp) {
                    float *o = tmp + ((ptrdiff_t)(y + h) * out_w + x) * 3;
                    o[0] = r[4 * h], o[1] = r[4 * h + 1], o[2] = r[4 * h + 2];
                } else {
                    uint8_t *o = dst + (y + h) * ds + 3 * x;
                    o[0] = tround(r[4 * h]), o[1] = tround(r[4 * h + 1]), o[2] = tround(r[4 * h + 2]);
                }
            }
        }
    }
}

// Height pass: 8 elements of a row per vector, from float rows (srcf) or from bytes (src8).
__attribute__((target("avx2,fma")))
void native_torch_v(const float *srcf, const uint8_t *src8, ptrdiff_t ss, int rb, uint8_t *dst, ptrdiff_t ds,
                    int out_h, const int32_t *start, const int32_t *nn, const float *w, int ksize) {
    const __m256 zero = _mm256_setzero_ps(), max = _mm256_set1_ps(255.0f);
    for (int yy = 0; yy < out_h; yy++) {
        const float *k = w + (ptrdiff_t)yy * ksize;
        int s = start[yy], n = nn[yy], sp = split_of(n);
        uint8_t *o = dst + yy * ds;
        int i = 0;
        for (; i + 8 <= rb; i += 8) {
            __m256 t;
#define ROW(r) (srcf ? _mm256_loadu_ps(srcf + (ptrdiff_t)(r) * ss + i) \
                     : _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(src8 + (ptrdiff_t)(r) * ss + i)))))
            t = _mm256_mul_ps(ROW(s), _mm256_set1_ps(k[0]));
            for (int j = 1; j < n; j++)
                t = j <= sp ? _mm256_add_ps(t, _mm256_mul_ps(ROW(s + j), _mm256_set1_ps(k[j]))) : _mm256_fmadd_ps(ROW(s + j), _mm256_set1_ps(k[j]), t);
#undef ROW
            t = _mm256_min_ps(_mm256_max_ps(t, zero), max); // max_ps(NaN, 0) = 0, as the reference
            __m256i v = _mm256_cvtps_epi32(t);               // round half to even
            __m128i p = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
            _mm_storel_epi64((__m128i *)(o + i), _mm_packus_epi16(p, p));
        }
        for (; i < rb; i++) {
            float t = (srcf ? srcf[(ptrdiff_t)s * ss + i] : (float)src8[(ptrdiff_t)s * ss + i]) * k[0];
            for (int j = 1; j < n; j++) {
                float v = srcf ? srcf[(ptrdiff_t)(s + j) * ss + i] : (float)src8[(ptrdiff_t)(s + j) * ss + i];
                t = j <= sp ? t + v * k[j] : _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(v), _mm_set_ss(k[j]), _mm_set_ss(t)));
            }
            o[i] = tround(t);
        }
    }
}
