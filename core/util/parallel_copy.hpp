// memcpy in parallel chunks of 4 MiB (TBB): host copies of a large case's data use every core.
#pragma once
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstddef>
#include <cstring>

namespace kq {

inline void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t kChunk = std::size_t{4} << 20;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bytes, kChunk),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      std::memcpy(static_cast<char*>(dst) + r.begin(),
                                  static_cast<const char*>(src) + r.begin(), r.end() - r.begin());
                    });
}

}  // namespace kq
