#include "util/host_buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>

namespace kq {

void* host_alloc(std::size_t bytes) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  std::size_t n = bytes == 0 ? 256 : (bytes + 255) / 256 * 256;
  const bool huge = n >= 2 * kHuge;
  if (huge) n = (n + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(huge ? kHuge : 256, n);
  if (p == nullptr) throw std::bad_alloc();
  if (huge) ::madvise(p, n, MADV_HUGEPAGE);  // advice only: its failure changes nothing
  return p;
}

void host_free(void* p) noexcept { std::free(p); }

}  // namespace kq
