// What pointer_cache keys its replayed result on, in both versions: the pointers and the element
// count of the last call whose result it kept, and nothing of the data behind them (the flaw).
// Compiled by the C++ compiler (kq_broken_cpu) and by nvcc (kq_broken_cuda).
#pragma once
#include <cstdint>

#include "common/broken_arm.hpp"

namespace kq::broken {

// The largest result pointer_cache keeps, in elements.
inline constexpr std::int64_t kMaxCached = std::int64_t{1} << 22;

class LastCall {
 public:
  // Nothing remembered (prepare() calls it: a new problem).
  void forget() { valid_ = false; }
  // Whether d has the pointers and size of the call remember() was given last.
  bool same(const Dense2& d) const { return valid_ && key(d) == key_; }
  void remember(const Dense2& d) {
    key_ = key(d);
    valid_ = true;
  }

 private:
  struct Key {
    const void *x, *r, *out;
    std::int64_t n;
    bool operator==(const Key&) const = default;
  };
  static Key key(const Dense2& d) { return {d.x, d.r, d.out, d.n}; }

  Key key_{};
  bool valid_ = false;
};

}  // namespace kq::broken
