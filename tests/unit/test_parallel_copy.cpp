// util/parallel_copy: the same bytes as memcpy and memset on both sides of the size from which
// the work is shared among cores, at odd lengths and misaligned pointers.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "util/parallel_copy.hpp"

TEST_CASE("parallel_memcpy and parallel_memset give memcpy's and memset's bytes") {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  std::vector<unsigned char> src(40 * kMiB + 7);
  std::mt19937 rng(3);
  for (auto& b : src) b = static_cast<unsigned char>(rng());
  for (std::size_t n :
       {std::size_t{0}, std::size_t{1}, 8 * kMiB - 1, 8 * kMiB, 8 * kMiB + 1, 33 * kMiB + 513}) {
    for (std::size_t off : {std::size_t{0}, std::size_t{3}}) {
      INFO("bytes " << n << ", offset " << off);
      std::vector<unsigned char> dst(n + 2 * off + 2, 0xEE), want = dst;
      std::memcpy(want.data() + off + 1, src.data() + off, n);
      kq::parallel_memcpy(dst.data() + off + 1, src.data() + off, n);
      CHECK(dst == want);
      std::memset(want.data() + off + 1, 0x5A, n);
      kq::parallel_memset(dst.data() + off + 1, 0x5A, n);
      CHECK(dst == want);
    }
  }
}
