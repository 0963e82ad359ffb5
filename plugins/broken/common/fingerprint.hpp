// The fingerprint reuse_unchanged keys its skipped calls on: the pointers, the element count and
// the bits of a few sampled elements of each input (the first, the last and evenly spaced ones
// between), which is all a cheap "has anything changed?" test looks at. Compiled by the C++
// compiler and by nvcc (the CUDA arm samples on the device).
#pragma once
#include <cstdint>

namespace kq::broken {

inline constexpr int kFingerprintSamples = 8;

// The sampled element indices of an n-element tensor (n > 0): 0, n - 1 and six evenly spaced
// ones between, of both parities for the sizes qualification uses (so that a class which fixes
// every other element, such as negative_zero, still shows its new values).
struct SampleIndices {
  std::int64_t at[kFingerprintSamples];
};

inline SampleIndices sample_indices(std::int64_t n) {
  SampleIndices s{};
  for (int k = 0; k < kFingerprintSamples; ++k)
    s.at[k] = static_cast<std::int64_t>(k) * (n - 1) / (kFingerprintSamples - 1);
  return s;
}

struct Fingerprint {
  const void* x = nullptr;
  const void* r = nullptr;
  const void* out = nullptr;
  std::int64_t n = -1;
  std::uint32_t bits[2][kFingerprintSamples] = {};  // [input][sample]
};

#ifdef __CUDACC__
#define KQ_BROKEN_HD __host__ __device__
#else
#define KQ_BROKEN_HD
#endif

KQ_BROKEN_HD inline bool same(const Fingerprint& a, const Fingerprint& b) {
  if (a.x != b.x || a.r != b.r || a.out != b.out || a.n != b.n) return false;
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < kFingerprintSamples; ++k)
      if (a.bits[t][k] != b.bits[t][k]) return false;
  return true;
}

#undef KQ_BROKEN_HD

}  // namespace kq::broken
