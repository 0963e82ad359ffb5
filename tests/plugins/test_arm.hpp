// A minimal CPU arm for the loader tests: out = scale * in0, elementwise, on contiguous f32 host
// tensors. Header-only so each test plugin is one small .cpp.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "kq/arm.hpp"

namespace kq_test {

class ScaleArm : public kq::IKernelArm {
 public:
  ScaleArm(std::string name, float scale) : name_(std::move(name)), scale_(scale) {}

  kq::ArmIdentity identity() const override {
    kq::ArmIdentity id;
    id.name = name_;
    id.family = "test";
    id.device = kq::Device::cpu;
    id.version = "1.2.3";
    id.sources = {{"tests/plugins/test_arm.hpp", "not-hashed"}};
    id.compile_flags = "test-flags";
    return id;
  }

  kq::Status supports(const kq::OpSpec& spec) const override {
    if (spec.program) return kq::Status::unsupported("elementwise specs only");
    if (spec.dtype != kq::DType::f32) return kq::Status::unsupported("f32 only");
    if (spec.inputs.empty() || spec.outputs.size() != 1) {
      return kq::Status::unsupported("needs an input and exactly one output");
    }
    return kq::Status::ok();
  }

  kq::Status prepare(const kq::Problem& problem) override {
    if (problem.inputs.empty() || problem.outputs.size() != 1) {
      return kq::Status::unsupported("needs an input and exactly one output");
    }
    if (!usable(problem.inputs[0]) || !usable(problem.outputs[0]) ||
        problem.inputs[0].numel() != problem.outputs[0].numel()) {
      return kq::Status::unsupported("contiguous f32 host tensors of one size only");
    }
    prepared_ = true;
    return kq::Status::ok();
  }

  kq::Status run(std::span<const kq::TensorView> inputs, std::span<const kq::TensorView> outputs,
                 void* /*stream*/) override {
    if (!prepared_) return kq::Status::error("run() before prepare()");
    if (inputs.empty() || outputs.size() != 1 || !usable(inputs[0]) || !usable(outputs[0]) ||
        inputs[0].numel() != outputs[0].numel()) {
      return kq::Status::unsupported("contiguous f32 host tensors of one size only");
    }
    const auto* in = static_cast<const float*>(inputs[0].data);
    auto* out = static_cast<float*>(outputs[0].data);
    for (std::int64_t i = 0, n = inputs[0].numel(); i < n; ++i) out[i] = scale_ * in[i];
    return kq::Status::ok();
  }

 private:
  static bool usable(const kq::TensorView& v) {
    return v.data != nullptr && v.dtype == kq::DType::f32 && v.device == kq::Device::cpu &&
           v.is_contiguous();
  }

  std::string name_;
  float scale_;
  bool prepared_ = false;
};

}  // namespace kq_test
