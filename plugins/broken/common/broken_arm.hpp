// What every known-broken candidate shares: which specs it takes (matched by op name and by the
// expression's structure), its identity, and the careful boundary (status codes, the contract
// check, no exception across the plugin boundary), so that each arm's file holds its flaw alone.
// Compiled by the C++ compiler (kq_broken_cpu) and by nvcc (kq_broken_cuda).
#pragma once
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <utility>

#include "kq/plugin_api.hpp"

namespace kq::broken {

// The specs a candidate takes. It must take only specs on which its flaw is observable inside
// the contract: a broken arm has to be rejected on every spec it supports.
enum class Takes {
  residual_relu,           // relu(x + residual), f32, either domain
  residual_relu_ieee,      // the same, domain ieee only (flaws about NaN and infinities)
  leaky_relu,              // select(x > 0, x, 0.01 * x), f32: strided views are in its contract
  residual_relu_half,      // relu(x + residual) in f16 or bf16 (computed in f32), either domain
  residual_relu_f16_ieee,  // the same in f16, domain ieee only (NaN flaws of half arithmetic)
};

namespace detail {

inline bool is_input(const Expr& e, int node, int input) {
  return node >= 0 && node < static_cast<int>(e.nodes.size()) && e.nodes[node].op == Op::input &&
         e.nodes[node].input == input;
}

inline bool is_constant(const Expr& e, int node, double value) {
  return node >= 0 && node < static_cast<int>(e.nodes.size()) && e.nodes[node].op == Op::constant &&
         e.nodes[node].value == value;
}

inline const ExprNode* node(const Expr& e, int i) {
  return i >= 0 && i < static_cast<int>(e.nodes.size()) ? &e.nodes[i] : nullptr;
}

// relu(add(x, residual)), the add's operands in either order.
inline bool is_relu_of_sum(const Expr& e) {
  const ExprNode* root = node(e, e.root());
  if (!root || root->op != Op::relu) return false;
  const ExprNode* add = node(e, root->args[0]);
  if (!add || add->op != Op::add) return false;
  return (is_input(e, add->args[0], 0) && is_input(e, add->args[1], 1)) ||
         (is_input(e, add->args[0], 1) && is_input(e, add->args[1], 0));
}

// select(gt(x, 0), x, mul(0.01, x)), the mul's operands in either order.
inline bool is_leaky_relu(const Expr& e) {
  const ExprNode* root = node(e, e.root());
  if (!root || root->op != Op::select) return false;
  const ExprNode* cond = node(e, root->args[0]);
  if (!cond || cond->op != Op::gt || !is_input(e, cond->args[0], 0) ||
      !is_constant(e, cond->args[1], 0.0))
    return false;
  if (!is_input(e, root->args[1], 0)) return false;
  const ExprNode* mul = node(e, root->args[2]);
  if (!mul || mul->op != Op::mul) return false;
  return (is_constant(e, mul->args[0], 0.01) && is_input(e, mul->args[1], 0)) ||
         (is_input(e, mul->args[0], 0) && is_constant(e, mul->args[1], 0.01));
}

}  // namespace detail

inline Status takes(Takes what, const OpSpec& spec) {
  const bool half = what == Takes::residual_relu_half || what == Takes::residual_relu_f16_ieee;
  if (!half && spec.dtype != DType::f32) return Status::unsupported("f32 only");
  if (half && (!is_half(spec.dtype) || spec.compute != DType::f32))
    return Status::unsupported("f16 and bf16 (computed in f32) only");
  if (what == Takes::residual_relu_f16_ieee && spec.dtype != DType::f16)
    return Status::unsupported("its flaw is in f16 arithmetic: f16 only");
  if (spec.outputs.size() != 1) return Status::unsupported("one output only");
  switch (what) {
    case Takes::residual_relu:
    case Takes::residual_relu_ieee:
    case Takes::residual_relu_half:
    case Takes::residual_relu_f16_ieee:
      if (spec.op != "residual_relu" || spec.inputs.size() != 2 ||
          !detail::is_relu_of_sum(spec.semantics))
        return Status::unsupported("implements relu(x + residual) (op residual_relu) only");
      if ((what == Takes::residual_relu_ieee || what == Takes::residual_relu_f16_ieee) &&
          spec.domain != Domain::ieee)
        return Status::unsupported(
            "its flaw shows only on NaN or infinite inputs: ieee domain only");
      return Status::ok();
    case Takes::leaky_relu:
      if (spec.op != "leaky_relu" || spec.inputs.size() != 1 ||
          !detail::is_leaky_relu(spec.semantics))
        return Status::unsupported("implements select(x > 0, x, 0.01 * x) (op leaky_relu) only");
      return Status::ok();
  }
  return Status::unsupported("unknown spec kind");
}

// The base of every candidate: kq's guarded boundary (kq/guarded_arm.hpp: status codes, the
// contract check, no exception across the plugin boundary, ok for an empty problem) with the
// candidate's identity and the specs it takes; the arm supplies compute() and, where it needs
// one, on_prepare().
class BrokenArm : public GuardedArm {
 public:
  // `flaw` names the arm (broken_<cpu|cuda>_<flaw>); `expected` is the check that must reject it.
  BrokenArm(Device device, const char* flaw, const char* expected, Takes what)
      : GuardedArm(device), flaw_(flaw), expected_(expected), takes_(what) {}

  ArmIdentity identity() const override {
    ArmIdentity id = build::identity(
        std::string("broken_") + (device() == Device::cpu ? "cpu_" : "cuda_") + flaw_, "broken",
        device(), "1");
    id.expected_rejection = expected_;
    return id;
  }

 protected:
  Status on_supports(const OpSpec& spec) const override { return takes(takes_, spec); }
  Status on_run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                void* stream) final {
    return compute(inputs, outputs, stream);
  }
  // Called with checked, non-empty views; `stream` is the caller's cudaStream_t for CUDA arms.
  virtual Status compute(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                         void* stream) = 0;

 private:
  const char* flaw_;
  const char* expected_;
  Takes takes_;
};

// Contiguous f32 views of relu(x + residual): the flat element pointers and count.
struct Dense2 {
  const float* x;
  const float* r;
  float* out;
  std::int64_t n;
};

inline Dense2 dense2(std::span<const TensorView> in, std::span<const TensorView> out) {
  return {static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
          static_cast<float*>(out[0].data), out[0].numel()};
}

// The byte range [lo, hi) a non-empty view reaches.
inline std::pair<std::uintptr_t, std::uintptr_t> byte_range(const TensorView& v) {
  std::uintptr_t lo = 0, hi = 0;
  contract_detail::byte_span(v, lo, hi);
  return {lo, hi};
}

inline bool overlaps(const TensorView& a, const TensorView& b) {
  auto [alo, ahi] = byte_range(a);
  auto [blo, bhi] = byte_range(b);
  return alo < bhi && blo < ahi;
}

}  // namespace kq::broken
