// Fenced allocations: the usable bytes end exactly where unmapped memory begins (or begin right
// after it), so a read or write one element past the end (or before the start) faults at once:
// SIGSEGV on the host, an illegal address on a CUDA device. Guard zones with patterns only
// catch writes; a fence catches reads too.
#pragma once
#include <cstddef>

#include "kq/tensor.hpp"

namespace kq {

enum class Fence { none, before, after };

struct FencedBlock {
  void* data = nullptr;      // the first usable byte
  void* reserved = nullptr;  // what to release
  std::size_t reserved_bytes = 0;
  std::size_t mapped_bytes = 0;
  unsigned long long handle = 0;  // CUDA: the physical allocation
};

// Throws std::runtime_error when the platform cannot fence (the caller then skips the case).
FencedBlock fenced_alloc(Device device, std::size_t bytes, Fence fence);
void fenced_free(Device device, FencedBlock& block);

}  // namespace kq
