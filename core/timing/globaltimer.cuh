// The GPU's global nanosecond timer (%globaltimer), for the host's own small kernels.
#pragma once

namespace kq {

__device__ inline unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace kq
