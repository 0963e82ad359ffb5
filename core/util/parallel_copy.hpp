// memcpy and memset on every core for big host buffers: one core moves about 10 GB/s, and the
// page faults of fresh memory are served on the core that touches it; a case's tensors are
// gigabytes. Small ones stay on the calling thread.
#pragma once
#include <cstddef>

namespace kq {

void parallel_memcpy(void* to, const void* from, std::size_t bytes);
void parallel_memset(void* to, unsigned char value, std::size_t bytes);

}  // namespace kq
