// The base of the half-precision CPU candidates (f16 and bf16 specs computed in float32). Each
// takes the specs it names (op and dtype), reads its contiguous 16-bit elements, evaluates the
// spec's expression node by node with every value rounded to float32 (each operation's float64
// value rounded once: a correctly rounded float32 library) and rounds the result once to the
// dtype. That is the contract; each candidate breaks one step of it by overriding one hook.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "cpu_common.hpp"
#include "kq/expr_eval.hpp"
#include "kq/half.hpp"

namespace kq::broken::cpu {

// A spec a half candidate takes: the op's name and its dtype.
struct HalfTarget {
  const char* op;
  DType dtype;
};

class HalfArm : public CpuArm {
 public:
  static constexpr std::size_t kMaxNodes = 64;
  static constexpr std::size_t kMaxInputs = 8;

  // `targets`: the specs on which the flaw is observable inside the contract; all are caught by
  // the value checks.
  HalfArm(const char* flaw, std::initializer_list<HalfTarget> targets)
      : CpuArm(flaw, "values"), targets_(targets) {}

 protected:
  Status on_supports(const OpSpec& spec) const override {
    std::string names;
    for (const HalfTarget& t : targets_) {
      if (spec.op == t.op && spec.dtype == t.dtype) return fits(spec);
      names += (names.empty() ? "" : ", ") + std::string(t.op) + " in " +
               std::string(to_string(t.dtype));
    }
    return Status::unsupported("its flaw shows on " + names + " only");
  }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    compute_range(in, out[0], 0, out[0].numel());
    return Status::ok();
  }

  // Elements [begin, end) of contiguous views, through the hooks below.
  void compute_range(std::span<const TensorView> in, const TensorView& out, std::int64_t begin,
                     std::int64_t end) const {
    const DType t = spec().dtype;
    std::array<double, kMaxInputs> args{};
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::size_t k = 0; k < in.size(); ++k) args[k] = load(load_as_double(t, at(in[k], i)));
      store(evaluate(args), at(out, i));
    }
  }

  // An input element (exact, as a double) as the computation sees it.
  virtual double load(double element) const { return element; }
  // A value in the compute precision: every constant and every operation's result.
  virtual double round(double v) const { return static_cast<float>(v); }
  // One operation on its operands' values (node k's value in v[k]), before round().
  virtual double apply(const ExprNode& n, const double* v) const { return ref::apply_node(n, v); }
  // The result, rounded once into one element of the dtype at `dst`.
  virtual void store(double result, void* dst) const { store_rounded(spec().dtype, result, dst); }

 private:
  static Status fits(const OpSpec& spec) {
    if (spec.compute != DType::f32) return Status::unsupported("compute f32 only");
    if (spec.outputs.size() != 1) return Status::unsupported("one output only");
    if (spec.inputs.size() > kMaxInputs || spec.semantics.nodes.size() > kMaxNodes)
      return Status::unsupported("at most 8 inputs and 64 expression nodes");
    return Status::ok();
  }

  double evaluate(const std::array<double, kMaxInputs>& args) const {
    const Expr& e = spec().semantics;
    std::array<double, kMaxNodes> v{};
    for (std::size_t i = 0; i < e.nodes.size(); ++i) {
      const ExprNode& n = e.nodes[i];
      if (n.op == Op::constant)
        v[i] = round(n.value);
      else if (n.op == Op::input)
        v[i] = args[static_cast<std::size_t>(n.input)];
      else
        v[i] = round(apply(n, v.data()));
    }
    return v[e.nodes.size() - 1];
  }

  static void* at(const TensorView& v, std::int64_t i) {
    return static_cast<char*>(v.data) + i * static_cast<std::int64_t>(dtype_size(v.dtype));
  }

  std::vector<HalfTarget> targets_;
};

}  // namespace kq::broken::cpu
