// Running a typed program over a whole problem: the element range is cut into blocks of kBlock<T>
// elements (block indices and offsets are std::int64_t, so more than 2^31 elements is fine) and TBB
// spreads stretches of blocks over its workers. Small problems run on the calling thread, where
// waking the workers would cost more than the work.
#pragma once
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "block_eval.hpp"
#include "fp_env.hpp"

namespace kq::cpu {

// Below this many elements the run stays on the calling thread.
inline constexpr std::int64_t kSerialBelow = 16384;

// Scratch memory of one thread, kept between runs (TBB workers persist), 64-byte aligned.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() { release(); }

  void* get(std::size_t bytes) {
    if (bytes > size_) {
      release();
      p_ = ::operator new (bytes, std::align_val_t{64});
      size_ = bytes;
    }
    return p_;
  }

 private:
  void release() {
    if (p_) ::operator delete (p_, std::align_val_t{64});
    p_ = nullptr;
    size_ = 0;
  }
  void* p_ = nullptr;
  std::size_t size_ = 0;
};

using ScratchPool = tbb::enumerable_thread_specific<ScratchBuffer>;

// Runs `p`, computing in T, over views whose elements are of type S.
template <class T, class S>
void execute(const TypedProgram<T>& p, const RunViews<S>& v, ScratchPool& pool) {
  const std::int64_t n = v.numel;
  if (n <= 0) return;
  const std::int64_t nblocks = (n - 1) / kBlock<T> + 1;
  const std::size_t bytes = BlockEvaluator<T, S>::scratch_elements(p) * sizeof(T);

  auto stretch = [&](std::int64_t b0, std::int64_t b1) {
    T* scratch = static_cast<T*>(pool.local().get(bytes));
    BlockEvaluator<T, S> ev(p, v, scratch);
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t start = b * kBlock<T>;
      ev.run(start, std::min(kBlock<T>, n - start));
    }
  };

  IeeeFpEnv env;
  if (n < kSerialBelow) {
    stretch(0, nblocks);
    return;
  }
  // An isolated context starts faster from an external thread; fp_settings makes the workers
  // compute in this thread's (just set) floating-point environment.
  tbb::task_group_context ctx(
      tbb::task_group_context::isolated,
      tbb::task_group_context::default_traits | tbb::task_group_context::fp_settings);
  ctx.capture_fp_settings();
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, nblocks, 1),
      [&](const tbb::blocked_range<std::int64_t>& r) { stretch(r.begin(), r.end()); },
      tbb::auto_partitioner(), ctx);
}

}  // namespace kq::cpu
