// The nvrtc_jit plugin: the generic compiled baseline, one kernel generated per spec.
//   nvrtc_jit         16-byte vectors where every pointer allows them, scalar or strided otherwise
//   nvrtc_jit_scalar  the same module, never the vector kernels: shows what the vectors gain
#include <memory>

#include "kq/plugin_api.hpp"
#include "nvrtc_arm.hpp"

namespace {

void make_arms(kq::ArmList& out) {
  using kq::nvrtc::ArmConfig;
  using kq::nvrtc::NvrtcArm;
  ArmConfig vec;
  vec.name = "nvrtc_jit";
  out.push_back(std::make_unique<NvrtcArm>(vec));
  ArmConfig scalar = vec;
  scalar.name = "nvrtc_jit_scalar";
  scalar.vector = false;
  out.push_back(std::make_unique<NvrtcArm>(scalar));
}

}  // namespace

KQ_EXPORT_ARMS(make_arms)
