// CUDA C++ for a format-2 program in row form (row_lower.hpp): one kernel, kq_rows, that
// computes whole rows, grid-stride over rows, 64-bit offsets throughout: one block per row (the
// row kernel) or, where R is no tensor's innermost extent, one thread per row (the column
// kernel: its loops are the thread's own, its reductions need no combining, and it lowers argmax
// and argmin); with no free dim, one row spread over the grid, the last block combining the
// blocks' partials (row_lower.hpp, "split"), as it does for reductions over the rows
// ("over_rows"). A pure function of the spec, like codegen.hpp, so it
// is tested without a GPU and its text is the compile-cache key.
//
// Per row, the statements run in order (as the row kernel does them):
//   - a reduction (sum, prod, max, min over R) loops over the row, each thread over a strided
//     share of it, computing its term by inlining the row temporaries it reads (recomputed from
//     global loads: the row stays in L1/L2), then combines the threads' partials with warp
//     shuffles and 32 floats of shared memory; every thread gets the result;
//   - a per-row scalar is a register every thread computes alike (a per-row output is stored by
//     thread 0);
//   - a row temporary is never stored: it is inlined where it is read;
//   - row outputs are written in one final loop over the row; a scan's output in a loop of its
//     own (chunks of kRowUnroll positions a thread, a block scan of the threads' totals, the
//     chunks' running total);
// Every loop over the row takes kRowUnroll positions a thread at a time while they fit, then one
// at a time: the loads of a step are in flight together, in the plain loop's order.
// Everything is computed in float32 (the compute type of f32, f16 and bf16 tensors): each input
// widened exactly, the _rn helpers of codegen.hpp (no FMA contraction), max and min
// propagating NaN as the reference does (so a max reduction is right in domain ieee too),
// params and numbers rounded to float, each output rounded once to its dtype.
#pragma once
#include <cstdint>
#include <string>

#include "codegen.hpp"
#include "row_lower.hpp"

namespace kq::nvrtc {

inline constexpr const char* kRowKernel = "kq_rows";
inline constexpr int kRowMaxBlock = 512;  // the kernel's __launch_bounds__
inline constexpr int kRowUnroll = 4;      // row positions a thread loads together
// Blocks of kRowMaxBlock an SM the kernel is compiled for: without it ptxas aims at four (32
// registers) and spilled the unrolled step of swish; two keep 32 warps an SM resident.
inline constexpr int kRowMinBlocks = 2;
inline constexpr int kColBlock = 256;  // the column kernel's block (one row a thread)

// kq_rows's by-value parameter; the generated struct is the same (a static_assert checks its
// size). Strides in elements, per kernel pointer slot (inputs, then outputs).
struct RowLayout {
  std::int64_t rows = 0;  // the product of the free dims' extents
  std::int64_t len = 0;   // R's extent
  std::int64_t free_extent[kMaxRank] = {};
  std::int64_t free_stride[kMaxRowTensors][kMaxRank] = {};  // 0 where a tensor lacks the dim
  std::int64_t row_stride[kMaxRowTensors] = {};             // along R; 0 for a per-row tensor
  float dim_value[kMaxRowDims] = {};                        // each dim as a number
  // R's dims one by one, for the tensors whose positions along R are decomposed (r_general).
  std::int64_t group_extent[kMaxRank] = {};
  std::int64_t group_stride[kMaxRowTensors][kMaxRank] = {};  // 0 where a tensor lacks the dim
};

// The module for `spec`, lowered as `plan` says (lower_rows). Generated::rows is true.
Generated generate_rows(const OpSpec& spec, const RowPlan& plan);

}  // namespace kq::nvrtc
