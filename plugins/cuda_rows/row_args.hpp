// The cuda_rows kernels' arguments as plain C++, so that the host side (the arm classes) fills
// them without CUDA headers: one row-wise operation over the last dim of an (M, N) row-major
// matrix, x and y of one element type, the per-column vectors (w, b) and the per-row outputs
// (mean, rstd) each of its own.
#pragma once
#include <cstdint>

#include "kq/tensor.hpp"

namespace kq::rows {

enum class RowOp : std::uint8_t { softmax, log_softmax, layer_norm, rms_norm };

inline const char* to_string(RowOp op) {
  switch (op) {
    case RowOp::softmax:
      return "softmax";
    case RowOp::log_softmax:
      return "log_softmax";
    case RowOp::layer_norm:
      return "layer_norm";
    case RowOp::rms_norm:
      return "rms_norm";
  }
  return "?";
}

// f32, f16 or bf16: what the kernels load and store (the arms decline every other dtype).
using ElemType = DType;

struct RowArgs {
  const void* x = nullptr;  // [rows, n], element type t
  void* y = nullptr;        // [rows, n], element type t
  const void* w = nullptr;  // [n] (layer_norm, rms_norm), element type wt
  const void* b = nullptr;  // [n] (layer_norm), element type bt
  void* mean = nullptr;     // [rows] (layer_norm; null: not an output), element type mean_t
  void* rstd = nullptr;     // [rows] (layer_norm; null: not an output), element type rstd_t
  ElemType t = DType::f32, wt = DType::f32, bt = DType::f32;
  ElemType mean_t = DType::f32, rstd_t = DType::f32;
  std::int64_t rows = 0, n = 0;
  float inv_n = 0;  // 1 / n rounded once from double (float(n) is inexact above 2^24)
  float eps = 0;
  // w and b can be read as 16-byte vectors alongside x (same element type, 16-byte aligned).
  bool w_vec = false, b_vec = false;
};

}  // namespace kq::rows
