// The fingerprint reuse_unchanged keys its skipped calls on, and the recent calls it remembers: the
// pointers, the element count and the bits of a few sampled elements of each input (the first, the
// last and evenly spaced ones between), which is all a cheap "has anything changed?" test looks at.
// Compiled by the C++ compiler and by nvcc (the CUDA arm samples on the device).
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

// The last kRecentCalls distinct fingerprints and how many calls had each (up to 2): enough to
// follow a caller that takes a few buffer sets in turn, as kq's timing does.
inline constexpr int kRecentCalls = 8;
struct RecentCalls {
  Fingerprint fp[kRecentCalls];
  int seen[kRecentCalls];
  int used;  // entries in use
  int next;  // the entry a new fingerprint replaces once all are used
};

KQ_BROKEN_HD inline void forget(RecentCalls& m) { m.used = m.next = 0; }

// Records a call; returns how many calls before it had its fingerprint (0, 1, or 2 for more).
KQ_BROKEN_HD inline int remember(RecentCalls& m, const Fingerprint& fp) {
  for (int i = 0; i < m.used; ++i)
    if (same(fp, m.fp[i])) {
      const int before = m.seen[i];
      m.seen[i] = before < 2 ? before + 1 : 2;
      return before;
    }
  const int i = m.used < kRecentCalls ? m.used++ : m.next;
  m.next = (i + 1) % kRecentCalls;
  m.fp[i] = fp;
  m.seen[i] = 1;
  return 0;
}

#undef KQ_BROKEN_HD

}  // namespace kq::broken
