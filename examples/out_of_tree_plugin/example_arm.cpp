// An arm in a plugin of its own, built against kq's installed SDK (CMakeLists.txt beside it):
// relu(x + residual) on the CPU, f32 or f64, on the views the spec's contract admits.
// kq::matches recognises the spec by its expression tree (kq/expr_match.hpp), kq::GuardedArm
// refuses everything else (kq/guarded_arm.hpp); kq::build::identity adds this file's SHA-256 and
// the compile flags, which kq_add_plugin embeds.
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "kq/expr_match.hpp"
#include "kq/plugin_api.hpp"

namespace {

template <typename T>
void residual_relu(const kq::TensorView& x, const kq::TensorView& r, const kq::TensorView& out) {
  const auto* a = static_cast<const T*>(x.data);
  const auto* b = static_cast<const T*>(r.data);
  auto* o = static_cast<T*>(out.data);
  for (std::int64_t i = 0, n = out.numel(); i < n; ++i) {
    const T s = a[i] + b[i];
    o[i] = (s > T(0) || std::isnan(s)) ? s : T(0);  // relu(-0) = +0; NaN stays NaN
  }
}

class ExampleResidualRelu : public kq::GuardedArm {
 public:
  ExampleResidualRelu() : GuardedArm(kq::Device::cpu) {}

  kq::ArmIdentity identity() const override {
    return kq::build::identity("example_residual_relu", "example", kq::Device::cpu, "1");
  }

 protected:
  kq::Status on_supports(const kq::OpSpec& spec) const override {
    // The expression tree, not its text: relu(in0 + in1), whatever the inputs are named.
    static const kq::Pattern residual_relu =
        kq::node(kq::Op::relu, {kq::node(kq::Op::add, {kq::in(0), kq::in(1)})});
    if (!kq::matches(spec, residual_relu))
      return kq::Status::unsupported("relu(x + residual) only");
    if (spec.dtype != kq::DType::f32 && spec.dtype != kq::DType::f64)
      return kq::Status::unsupported("f32 and f64 only");
    return kq::Status::ok();
  }

  kq::Status on_run(std::span<const kq::TensorView> in, std::span<const kq::TensorView> out,
                    void* /*stream*/) override {
    if (spec().dtype == kq::DType::f32)
      residual_relu<float>(in[0], in[1], out[0]);
    else
      residual_relu<double>(in[0], in[1], out[0]);
    return kq::Status::ok();
  }
};

void make_arms(kq::ArmList& out) { out.push_back(std::make_unique<ExampleResidualRelu>()); }

}  // namespace

KQ_EXPORT_ARMS(make_arms)
