// refuses_unaligned's refusal, in both versions: every pointer 16-byte aligned (what a vector
// kernel without its scalar fallback needs), or unsupported, though the spec admits 4-byte
// alignment. Compiled by the C++ compiler (kq_broken_cpu) and by nvcc (kq_broken_cuda).
#pragma once
#include <cstdint>
#include <span>

#include "kq/plugin_api.hpp"

namespace kq::broken {

inline Status aligned_16(std::span<const TensorView> a, std::span<const TensorView> b) {
  for (std::span<const TensorView> views : {a, b})
    for (const TensorView& v : views)
      if (reinterpret_cast<std::uintptr_t>(v.data) % 16 != 0)
        return Status::unsupported("needs 16-byte aligned pointers");
  return Status::ok();
}

}  // namespace kq::broken
