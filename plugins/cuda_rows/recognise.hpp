// Which format-2 specs a cuda_rows arm computes: recognised by the program's structure alone
// (kq::ix::computes against the canonical text `kq check-spec SPEC` prints), never by the op's
// or the file's name, then the contract the kernels keep, as the Triton arms of
// plugins/python/arms/triton_shaped.py state it: every input and output f32, f16 or bf16,
// computed in f32, finite inputs only (the max reductions do not propagate NaN as kq's
// reference does), contiguous rows, eps the spec's first param by position. The kernels are
// built per element type of x and y, so those two must agree. Pure C++: the unit tests check it
// without a GPU.
#pragma once
#include <string>
#include <vector>

#include "kq/indexed_text.hpp"
#include "kq/op_spec.hpp"
#include "kq/status.hpp"
#include "row_args.hpp"

namespace kq::rows {

inline constexpr const char* kSoftmax = R"(
  tmp0[i0] = max(i1, in0[i0, i1])
  tmp1[i0, i1] = exp(sub(in0[i0, i1], tmp0[i0]))
  tmp2[i0] = sum(i1, tmp1[i0, i1])
  out0[i0, i1] = div(tmp1[i0, i1], tmp2[i0])
  shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0, d1] tmp2[d0]
)";

inline constexpr const char* kLogSoftmax = R"(
  tmp0[i0] = max(i1, in0[i0, i1])
  tmp1[i0] = log(sum(i1, exp(sub(in0[i0, i1], tmp0[i0]))))
  out0[i0, i1] = sub(sub(in0[i0, i1], tmp0[i0]), tmp1[i0])
  shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0]
)";

// y, mean and rstd over the last dim.
inline constexpr const char* kLayerNorm = R"(
  out1[i0] = div(sum(i1, in0[i0, i1]), d1)
  tmp0[i0] = div(sum(i1, mul(sub(in0[i0, i1], out1[i0]), sub(in0[i0, i1], out1[i0]))), d1)
  out2[i0] = div(1, sqrt(add(tmp0[i0], p0)))
  out0[i0, i1] = add(mul(mul(sub(in0[i0, i1], out1[i0]), out2[i0]), in1[i1]), in2[i1])
  shapes: in0[d0, d1] in1[d1] in2[d1] out0[d0, d1] out1[d0] out2[d0] tmp0[d0]
)";

// y alone, over the three trailing dims of a 4-d tensor (KernelBench's 40_layer_norm): each
// row is C * H * W contiguous elements, weight and bias as many.
inline constexpr const char* kLayerNorm3d = R"(
  tmp0[i0] = div(sum((i1, i2, i3), in0[i0, i1, i2, i3]), mul(mul(d1, d2), d3))
  tmp1[i0] = div(sum((i1, i2, i3), mul(sub(in0[i0, i1, i2, i3], tmp0[i0]), sub(in0[i0, i1, i2, i3], tmp0[i0]))), mul(mul(d1, d2), d3))
  tmp2[i0] = div(1, sqrt(add(tmp1[i0], p0)))
  out0[i0, i1, i2, i3] = add(mul(mul(sub(in0[i0, i1, i2, i3], tmp0[i0]), tmp2[i0]), in1[i1, i2, i3]), in2[i1, i2, i3])
  shapes: in0[d0, d1, d2, d3] in1[d1, d2, d3] in2[d1, d2, d3] out0[d0, d1, d2, d3] tmp0[d0] tmp1[d0] tmp2[d0]
)";

inline constexpr const char* kRmsNorm = R"(
  tmp0[i0] = div(1, sqrt(add(div(sum(i1, mul(in0[i0, i1], in0[i0, i1])), d1), p0)))
  out0[i0, i1] = mul(mul(in0[i0, i1], tmp0[i0]), in1[i1])
  shapes: in0[d0, d1] in1[d1] out0[d0, d1] tmp0[d0]
)";

// The canonical texts an op's arm takes.
inline std::vector<const char*> canonical_forms(RowOp op) {
  switch (op) {
    case RowOp::softmax:
      return {kSoftmax};
    case RowOp::log_softmax:
      return {kLogSoftmax};
    case RowOp::layer_norm:
      return {kLayerNorm, kLayerNorm3d};
    case RowOp::rms_norm:
      return {kRmsNorm};
  }
  return {};
}

inline const char* what(RowOp op) {
  switch (op) {
    case RowOp::softmax:
      return "softmax over the last dim";
    case RowOp::log_softmax:
      return "log-softmax over the last dim";
    case RowOp::layer_norm:
      return "layer norm over the last dim (y, mean, rstd; weight and bias) or over the three "
             "trailing dims (y; weight and bias)";
    case RowOp::rms_norm:
      return "RMS norm over the last dim, x * rsqrt(mean(x^2) + eps) * w";
  }
  return "?";
}

inline bool uses_eps(RowOp op) { return op == RowOp::layer_norm || op == RowOp::rms_norm; }

inline bool is_float_dtype(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16;
}

// ok where the arm of `op` computes `spec`, else unsupported with the reason.
inline Status recognise(RowOp op, const OpSpec& spec) {
  if (!spec.program) return Status::unsupported("format-2 (shaped) specs only");
  const ix::Program& p = *spec.program;
  bool known = false;
  for (const char* form : canonical_forms(op)) known = known || ix::computes(p, form);
  if (!known)
    return Status::unsupported(std::string("computes ") + what(op) +
                               " only (format-2 statements of that canonical form)");
  const ix::TensorDecl* x = nullptr;
  const ix::TensorDecl* y = nullptr;
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role == ix::Role::temporary) continue;
    if (!is_float_dtype(t.dtype))
      return Status::unsupported(std::string(ix::to_string(t.role)) + " " + t.name + " is " +
                                 std::string(to_string(t.dtype)) +
                                 ": the kernel loads and stores f32, f16 and bf16 only");
    if (t.role == ix::Role::input && x == nullptr) x = &t;
    if (t.role == ix::Role::output && y == nullptr) y = &t;
  }
  if (spec.compute != DType::f32)
    return Status::unsupported("computes in float32 only, and the spec's compute type is " +
                               std::string(to_string(spec.compute)));
  if (spec.domain != Domain::finite)
    return Status::unsupported(
        "finite inputs only: the kernel's max and sums do not propagate NaN as kq does");
  if (!spec.layouts.contiguous_only)
    return Status::unsupported("contiguous rows only, and the spec admits strided views");
  if (uses_eps(op) && p.decls.params.empty())
    return Status::unsupported("needs eps, the spec's first param");
  if (x && y && x->dtype != y->dtype)
    return Status::unsupported("input " + x->name + " is " + std::string(to_string(x->dtype)) +
                               " and output " + y->name + " " + std::string(to_string(y->dtype)) +
                               ": the kernels are built for one element type in and out");
  return Status::ok();
}

}  // namespace kq::rows
