// vec8.h — eight floats as one value for the CPU loops (GCC/Clang vector extension: an AVX register in
// the AVX2 clone, two SSE registers in the baseline) and the few functions on it they share. Included
// only by the -O3 loop files (cpu_loops.cpp, mamba1/selective_loops.cpp); no LibTorch.
#pragma once
#include <cstdint>

// The hot loops are compiled twice on x86-64 (AVX2 + FMA and the baseline) and picked at load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STATESCOPE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define STATESCOPE_CLONES
#endif

namespace statescope::cpu {

constexpr int W = 8;  // lanes of a partial sum (one AVX register of floats)

typedef float v8 __attribute__((vector_size(32), aligned(4)));  // loads and stores need no alignment
typedef int32_t v8i __attribute__((vector_size(32), aligned(4)));

inline v8 load(const float* p) { return *reinterpret_cast<const v8*>(p); }
inline void store(float* p, v8 v) { *reinterpret_cast<v8*>(p) = v; }
inline v8 splat(float f) { return v8{f, f, f, f, f, f, f, f}; }
inline float hsum(v8 v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }

// exp(x) on eight floats with plain vector arithmetic (Cephes' expf: x = n ln2 + r with ln2 in two
// parts, |r| <= ln2/2, a degree-5 polynomial, times 2^n from the exponent bits; within 2 ulp of
// std::exp; inputs clamped to [-87.3, 88.7], so no inf or denormal appears).
inline v8 vexp(v8 x) {
  const v8 lo = splat(-87.33654f), hi = splat(88.72283f);
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  const v8 fx = x * 1.44269504088896341f + 0.5f;
  v8i n = __builtin_convertvector(fx, v8i);                  // truncation, then floor:
  n += (__builtin_convertvector(n, v8) > fx);               // (true is -1)
  const v8 nf = __builtin_convertvector(n, v8);
  const v8 r = (x - nf * 0.693359375f) - nf * -2.12194440e-4f;
  const v8 z = r * r;
  v8 p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  return p * reinterpret_cast<v8>((n + 127) << 23);
}

inline v8 vsigmoid(v8 x) { return 1.0f / (1.0f + vexp(-x)); }
// The same functions on one float (the tails of rows), so every element rounds alike.
inline float sigmoid(float x) { return vsigmoid(splat(x))[0]; }
inline float expf8(float x) { return vexp(splat(x))[0]; }

}  // namespace statescope::cpu
