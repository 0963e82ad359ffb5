// Which format-2 (shaped) programs the row generator lowers, and how: the "row form". One
// dim R is the row: every reduction runs over it alone and it is the innermost extent of every
// tensor that has it. The other dims F are free: every assigned tensor (temporary or output)
// is [F..., R] (a row tensor) or [F...] (a per-row scalar), and every input has some of F in the
// same order, then R or not (so w[N] is a row broadcast to every row). Collapsing F gives one
// row index; one block computes a row.
//
// lower_rows() says why a program is not in row form, naming the statement and the construct
// (a scan, argmax, a gather, index arithmetic, a reduction over several indices or over a free
// dim, R not innermost, an integer tensor, float64), so that supports() can decline precisely.
#pragma once
#include <string>
#include <vector>

#include "kq/indexed.hpp"
#include "kq/op_spec.hpp"

namespace kq::nvrtc {

inline constexpr int kMaxRowTensors = 16;  // inputs + outputs of a row module
inline constexpr int kMaxRowDims = 16;     // dims a row program declares (their values are passed)

struct RowTensor {
  int slot = -1;             // kernel pointer: inputs 0.., then outputs; -1 for a temporary
  bool row = false;          // R is its innermost extent
  std::vector<int> free_at;  // per dimension before R (or all, for a per-row scalar): place in F
};

struct RowPlan {
  int r_dim = -1;                  // R, an index into decls.dims
  std::vector<int> free_dims;      // F, outermost first (decls.dims indices)
  std::vector<RowTensor> tensors;  // one per decls.tensors entry
  int num_inputs = 0;
  int num_outputs = 0;
};

// Empty when spec.program is in row form (then `plan` is filled), else the reason, e.g.
// "line 1 `y[m, n] = cumsum(n, x[m, n])`: a scan (cumsum) is not lowered".
std::string lower_rows(const OpSpec& spec, RowPlan& plan);

}  // namespace kq::nvrtc
