// The row kernel's launch from the views alone: host-side, pure, no allocation beyond the dims
// (run() uses it on every call).
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "kq/op_spec.hpp"
#include "kq/tensor.hpp"
#include "row_codegen.hpp"
#include "row_lower.hpp"

namespace kq::nvrtc {

// Fills `L` for `inputs` -> `outputs` (already checked by check_shaped_contract): the free
// dims' extents, each pointer slot's strides, the dims' values. Returns an empty string, or
// why the call is refused (a dim no view binds).
std::string plan_rows(const OpSpec& spec, const RowPlan& plan, std::span<const TensorView> inputs,
                      std::span<const TensorView> outputs, RowLayout& L);

// Threads per block for rows of `len` elements: about 4 elements a thread, a multiple of 32 in
// [32, kRowMaxBlock].
int row_block(std::int64_t len);

struct RowGrid {
  std::int64_t blocks = 0;
  int block = 0;
};

// The launch of `L`'s rows (L.rows > 0): the row kernel a block per row (row_block threads),
// grid-stride beyond 8 waves of resident blocks (or `waves` when positive); the column kernel a
// thread per row (kColBlock a block), likewise; a split plan one wave of blocks, each thread 4
// positions or more. `blocks_per_sm`: resident blocks of the compiled block size.
RowGrid row_grid(const RowPlan& plan, const RowLayout& L, int sms, int blocks_per_sm, int waves);

// The most blocks row_grid gives `plan` on a device: the partials a launch of a split plan, or
// of one with reductions over the rows, stores per reduction.
std::int64_t max_grid_blocks(const RowPlan& plan, int sms, int blocks_per_sm, int waves);

}  // namespace kq::nvrtc
