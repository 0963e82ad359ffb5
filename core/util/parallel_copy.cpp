#include "util/parallel_copy.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cstring>

namespace kq {
namespace {

constexpr std::size_t kGrain = std::size_t{512} << 10;
constexpr std::size_t kAlone = std::size_t{8} << 20;  // below this, one thread

// Isolated: while the caller waits for the other threads it runs none of its own caller's
// other tasks, one of which might want a lock the caller holds.
template <typename F>
void in_parallel(std::size_t bytes, F&& f) {
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bytes, kGrain),
                      [&](const tbb::blocked_range<std::size_t>& r) { f(r.begin(), r.size()); });
  });
}

}  // namespace

void parallel_memcpy(void* to, const void* from, std::size_t bytes) {
  if (bytes < kAlone) {
    if (bytes) std::memcpy(to, from, bytes);
    return;
  }
  in_parallel(bytes, [&](std::size_t at, std::size_t n) {
    std::memcpy(static_cast<char*>(to) + at, static_cast<const char*>(from) + at, n);
  });
}

void parallel_memset(void* to, unsigned char value, std::size_t bytes) {
  if (bytes < kAlone) {
    if (bytes) std::memset(to, value, bytes);
    return;
  }
  in_parallel(bytes, [&](std::size_t at, std::size_t n) {
    std::memset(static_cast<char*>(to) + at, value, n);
  });
}

}  // namespace kq
