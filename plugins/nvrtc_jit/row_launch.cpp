#include "row_launch.hpp"

#include <algorithm>
#include <vector>

#include "kq/shaped_contract.hpp"

namespace kq::nvrtc {

std::string plan_rows(const OpSpec& spec, const RowPlan& plan, std::span<const TensorView> inputs,
                      std::span<const TensorView> outputs, RowLayout& L) {
  L = RowLayout{};
  std::vector<std::int64_t> dims;
  if (Status s = bind_dims(spec, inputs, outputs, dims); !s.is_ok()) return s.message();
  const ix::Program& p = *spec.program;
  auto unbound = [&](int d) {
    return "dim " + p.decls.dims[static_cast<std::size_t>(d)].name +
           " is bound by no input or output";
  };
  for (const ix::Node& n : p.nodes)
    if (n.kind == ix::NodeKind::dim && dims[static_cast<std::size_t>(n.ref)] < 0)
      return unbound(n.ref);
  for (std::size_t d = 0; d < dims.size(); ++d) L.dim_value[d] = static_cast<float>(dims[d]);
  L.rows = 1;
  for (std::size_t f = 0; f < plan.free_dims.size(); ++f) {
    const std::int64_t e = dims[static_cast<std::size_t>(plan.free_dims[f])];
    if (e < 0) return unbound(plan.free_dims[f]);
    L.free_extent[f] = e;
    L.rows *= e;
  }
  L.len = 1;
  for (std::size_t k = 0; k < plan.r_dims.size(); ++k) {
    const std::int64_t e = dims[static_cast<std::size_t>(plan.r_dims[k])];
    if (e < 0) return unbound(plan.r_dims[k]);
    L.group_extent[k] = e;
    L.len *= e;
  }
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t) {
    const RowTensor& rt = plan.tensors[t];
    if (rt.slot < 0) continue;
    const TensorView& v = rt.slot < plan.num_inputs
                              ? inputs[static_cast<std::size_t>(rt.slot)]
                              : outputs[static_cast<std::size_t>(rt.slot - plan.num_inputs)];
    for (std::size_t k = 0; k < rt.free_at.size(); ++k)
      L.free_stride[rt.slot][rt.free_at[k]] = v.strides[rt.free_pos[k]];
    if (!rt.row) continue;
    if (rt.r_general) {  // decomposed dim by dim (row_codegen.cpp: along_r)
      for (std::size_t k = 0; k < plan.r_dims.size(); ++k)
        if (rt.r_positions[k] >= 0) L.group_stride[rt.slot][k] = v.strides[rt.r_positions[k]];
      continue;
    }
    // R's dims as one: each dim's stride its inner neighbour's times that one's extent (a
    // dim of extent 1 goes with any stride).
    const int last = rt.r_at + static_cast<int>(plan.r_dims.size()) - 1;
    for (int k = rt.r_at; k < last; ++k)
      if (v.shape[k] != 1 && v.shape[k + 1] != 1 &&
          v.strides[k] != v.strides[k + 1] * v.shape[k + 1])
        return "the reduced dims of " + p.decls.tensors[t].name +
               " do not collapse into one row in this view (strides " +
               std::to_string(v.strides[k]) + " and " + std::to_string(v.strides[k + 1]) +
               " over extent " + std::to_string(v.shape[k + 1]) + ")";
    L.row_stride[rt.slot] = v.strides[last];
  }
  return {};
}

int row_block(std::int64_t len) {
  const std::int64_t threads = ((len + 3) / 4 + 31) / 32 * 32;
  return static_cast<int>(std::clamp<std::int64_t>(threads, 32, kRowMaxBlock));
}

RowGrid row_grid(const RowPlan& plan, const RowLayout& L, int sms, int blocks_per_sm, int waves) {
  RowGrid g;
  const bool columns = plan.columns;
  g.block = columns ? kColBlock : row_block(L.len);
  // Occupancy was asked for the compiled block size; smaller row blocks fit more an SM.
  const std::int64_t per_sm = std::int64_t{blocks_per_sm} * (columns ? 1 : kRowMaxBlock / g.block);
  if (plan.split) {
    const std::int64_t per_block = std::int64_t{g.block} * kRowUnroll;
    g.blocks = std::clamp<std::int64_t>((L.len + per_block - 1) / per_block, 1,
                                        std::int64_t{sms} * per_sm);
    return g;
  }
  const std::int64_t wanted = columns ? (L.rows + g.block - 1) / g.block : L.rows;
  const std::int64_t cap = std::int64_t{sms} * per_sm * (waves > 0 ? waves : 8);
  g.blocks = std::clamp<std::int64_t>(std::min(wanted, cap), 1, 0x7fffffff);
  return g;
}

std::int64_t max_grid_blocks(const RowPlan& plan, int sms, int blocks_per_sm, int waves) {
  // Blocks of 32 threads fit kRowMaxBlock / 32 times as many an SM as the compiled size.
  const std::int64_t per_sm = std::int64_t{blocks_per_sm} * (kRowMaxBlock / 32);
  if (plan.split) return std::int64_t{sms} * per_sm;
  return std::int64_t{sms} * per_sm * (waves > 0 ? waves : 8);
}

}  // namespace kq::nvrtc
