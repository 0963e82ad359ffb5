// Which format-2 (shaped) programs the row generator lowers, and how: the "row form". One
// dim R is the row: every reduction and every scan runs over it alone (a scan being the whole
// right-hand side of a statement assigning an output no later statement reads). The other dims
// F are free: every assigned tensor (temporary or output) has all of F in order, with R among
// them (a row tensor) or not (a per-row scalar), and every input has some of F in the same
// order, with R or not (so w[N] is a row broadcast to every row); an extent of 1 may stand
// anywhere. Collapsing F gives one row index. R may be a group of dims (a sum over (h, w)), all
// of which an assigned row tensor has: in a tensor that has them whole, consecutive and in order
// they are one row of their product, where the view's strides let them collapse (row_launch.hpp
// refuses a call where not); in any other (an input with some of R's dims, R's dims apart or out
// of order) a position along R is decomposed dim by dim into that tensor's strides.
//
// Where R is the innermost extent of every tensor that has it, one block computes a row (the
// row kernel). Where it is the innermost extent of none (a sum over dim 1 of [B, N, K], an RMS
// norm over C of [B, C, H, W]), one thread computes a row, its neighbours the next rows along
// the innermost free dim, so their loads coalesce (the column kernel). argmax and argmin, into
// an integer output, are lowered in both (in the row kernel each thread's first extreme, then
// the block's). Mixed (a matrix product: K innermost in A[M, K], not in B[K, N]) is declined.
//
// With no free dim (a loss: every dim reduced into scalars), the one row is spread over many
// blocks ("split"): each block reduces its share, the last block to finish combines the
// blocks' partials in block order and computes the scalar statements. Lowered where every
// output is a scalar and no reduction's term reads another's result.
//
// A reduction over every free dim (a loss: the mean over rows of a per-row value, cross
// entropy's or a triplet margin's) runs after the rows: each block sums its rows' values, the
// last block combines the blocks' partials and computes the scalar statements that follow
// ("over_rows"). A per-row expression may read an input along R at a gathered position
// (x[m, t[m]], t an integer input with free dims alone).
//
// lower_rows() says why a program is not in row form, naming the statement and the construct
// (a scan inside an expression, a gather, index arithmetic, a reduction over a second dim or
// over a free dim, an argmax over every element, float64), so that supports() can decline
// precisely.
#pragma once
#include <string>
#include <vector>

#include "kq/indexed.hpp"
#include "kq/op_spec.hpp"

namespace kq::nvrtc {

inline constexpr int kMaxRowTensors = 16;  // inputs + outputs of a row module
inline constexpr int kMaxRowDims = 16;     // dims a row program declares (their values are passed)

struct RowTensor {
  int slot = -1;     // kernel pointer: inputs 0.., then outputs; -1 for a temporary
  bool row = false;  // R's dims (some or all) are among its extents
  int r_at = -1;     // where R's dims run whole, consecutive and in order: the first's position
  // Per dim of R: its position in the shape, or -1. `r_general`: not R whole, consecutive and in
  // order (batch norm's x[b, c, h, w] over (b, h, w), a weight [G, CG] of a norm over (CG, H,
  // W)): a position j along R is decomposed dim by dim into the tensor's strides (row_launch.hpp:
  // group_stride), not j times one stride.
  std::vector<int> r_positions;
  bool r_general = false;
  std::vector<int> free_at;   // per free dim it has, outermost first: its place in F
  std::vector<int> free_pos;  // ... and its position in the tensor's shape
  bool after_rows = false;    // a scalar assigned once every row is done (from over_rows)
};

struct RowPlan {
  bool columns = false;            // one thread a row (R is no tensor's innermost extent)
  bool split = false;              // no free dim: the one row's reductions spread over blocks
  std::vector<int> over_rows;      // reductions over every free dim (node ids): a loss's mean
  std::vector<int> r_dims;         // R: decls.dims indices, outermost first (most often one)
  std::vector<int> free_dims;      // F, outermost first (decls.dims indices)
  std::vector<RowTensor> tensors;  // one per decls.tensors entry
  int num_inputs = 0;
  int num_outputs = 0;
};

inline bool is_arg_reduction(ix::Reduction r) {
  return r == ix::Reduction::argmax || r == ix::Reduction::argmin;
}

// Empty when spec.program is in row form (then `plan` is filled), else the reason, e.g.
// "line 1 `y[m, n] = 2 * cumsum(n, x[m, n])`: a cumsum inside an expression is not lowered".
std::string lower_rows(const OpSpec& spec, RowPlan& plan);

}  // namespace kq::nvrtc
