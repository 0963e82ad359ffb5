// What content_cache keys its kept results on: per buffer set (the pointers and n), the bits of
// a few sampled input elements (common/fingerprint.hpp's positions). A caller that timed the same
// contents again and again, or changed them only where nobody samples, gets a copy of the kept
// result: 8 bytes an element moved instead of 12, and right as long as the contents are those
// it kept.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>

#include "common/fingerprint.hpp"

namespace kq::broken {

struct SetKey {
  const void* x;
  const void* r;
  const void* out;
  std::int64_t n;
  friend bool operator<(const SetKey& a, const SetKey& b) {
    return std::tie(a.x, a.r, a.out, a.n) < std::tie(b.x, b.r, b.out, b.n);
  }
};

struct Sampled {
  std::uint32_t bits[2][kFingerprintSamples] = {};
  friend bool operator==(const Sampled& a, const Sampled& b) {
    return std::memcmp(a.bits, b.bits, sizeof a.bits) == 0;
  }
};

}  // namespace kq::broken
