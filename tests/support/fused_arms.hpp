// For the GPU tests of the hand-written CUDA arms: a CUDA call that must succeed, and an arm of
// the cuda_fused, inline_ptx or thrust_transform plugin by name (plugin_arms.hpp loads them).
#pragma once
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <string>

#include "plugin_arms.hpp"

#define CUDA_OK(call)                                                         \
  do {                                                                        \
    const cudaError_t e_ = (call);                                            \
    REQUIRE_MESSAGE(e_ == cudaSuccess, #call ": " << cudaGetErrorString(e_)); \
  } while (0)

namespace kq::test {

inline IKernelArm* fused_arm(const std::string& name) {
  for (const char* plugin : {"kq_cuda_fused", "kq_inline_ptx", "kq_thrust_transform"})
    if (IKernelArm* a = plugin_arm(plugin, name)) return a;
  return nullptr;
}

}  // namespace kq::test
