// Kernel arguments and access policies of the cuda_fused kernels, as plain C++ so that the host
// side (fused_arm.cpp) can fill them without CUDA headers.
#pragma once
#include <cstdint>

#include "kq/tensor.hpp"  // kq::kMaxRank

namespace kq::fused {

// How loads and stores are issued. cs = "cache streaming" (ld.global.cs / st.global.cs: evict
// first, each byte is touched once); nc = the read-only path (ld.global.nc), valid only while no
// thread of the kernel writes what it reads, so it is never used when an output aliases an input.
enum class Load : std::uint8_t { plain, cs, nc };
enum class Store : std::uint8_t { plain, cs };

// A contiguous problem of float, __half or __nv_bfloat16 elements (the kernel's element type
// says which); in1 is unused by one-input ops. `head` elements (fewer than 16 bytes' worth) come
// before the first 16-byte boundary, the same for every pointer (vector_kernel only; 0 for
// scalar_kernel).
struct FlatArgs {
  const void* in0 = nullptr;
  const void* in1 = nullptr;
  void* out = nullptr;
  std::int64_t n = 0;
  std::int64_t head = 0;
};

// Any strides (in elements; 0 broadcasts, negative runs backwards), one shape for all tensors.
struct StridedArgs {
  const void* in0 = nullptr;
  const void* in1 = nullptr;
  void* out = nullptr;
  std::int64_t n = 0;
  int rank = 0;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t stride0[kMaxRank] = {};
  std::int64_t stride1[kMaxRank] = {};
  std::int64_t stride_out[kMaxRank] = {};
};

}  // namespace kq::fused
