// Host-side facts about the tensor views an arm is given, for choosing a kernel path after
// kq::check_contract has admitted them: contiguity, the offset of each pointer from 16 bytes,
// overlap between an output and the inputs, and outputs that overlap themselves.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <utility>

#include "kq/contract.hpp"
#include "kq/tensor.hpp"

namespace kq::fused {

inline bool all_contiguous(std::span<const TensorView> views) {
  return std::all_of(views.begin(), views.end(),
                     [](const TensorView& v) { return v.is_contiguous(); });
}

inline std::uintptr_t address(const TensorView& v) {
  return reinterpret_cast<std::uintptr_t>(v.data);
}

// The number of leading elements (fewer than 16 bytes' worth: 0-3 floats, 0-7 halves) before
// every pointer reaches a 16-byte boundary, or -1 when the pointers sit at different offsets from
// 16 bytes (no common vector path) or are not aligned to their element size. Capped at n.
inline std::int64_t common_head(std::span<const TensorView> views, std::int64_t n) {
  if (views.empty()) return -1;
  const std::uintptr_t es = dtype_size(views[0].dtype);
  const std::uintptr_t r = address(views[0]) % 16;
  for (const TensorView& v : views)
    if (address(v) % 16 != r || address(v) % es != 0) return -1;
  return std::min<std::int64_t>(static_cast<std::int64_t>((16 - r) % 16 / es), n);
}

inline bool aligned16(std::span<const TensorView> views) {
  return std::all_of(views.begin(), views.end(),
                     [](const TensorView& v) { return address(v) % 16 == 0; });
}

// Whether two views touch a common byte.
inline bool overlap(const TensorView& a, const TensorView& b) {
  std::uintptr_t alo, ahi, blo, bhi;
  contract_detail::byte_span(a, alo, ahi);
  contract_detail::byte_span(b, blo, bhi);
  return alo < bhi && blo < ahi;
}

inline bool output_overlaps_inputs(std::span<const TensorView> inputs, const TensorView& out) {
  return std::any_of(inputs.begin(), inputs.end(),
                     [&](const TensorView& v) { return overlap(v, out); });
}

// True when two different indices of `v` reach the same element (a stride-0 or folded output):
// writing it would race. Dimensions sorted by |stride|; each must step past everything the
// smaller ones span.
// (A fixed array, not a vector: this runs inside run(), which allocates nothing.)
inline bool overlaps_itself(const TensorView& v) {
  std::array<std::pair<std::int64_t, std::int64_t>, kMaxRank> dims{};  // |stride|, extent
  int k = 0;
  for (int d = 0; d < v.rank && d < kMaxRank; ++d) {
    if (v.shape[d] == 0) return false;
    if (v.shape[d] > 1) dims[k++] = {std::llabs(v.strides[d]), v.shape[d]};
  }
  std::sort(dims.begin(), dims.begin() + k);
  std::int64_t span = 0;  // elements spanned by the dimensions seen so far, minus one
  for (int i = 0; i < k; ++i) {
    if (dims[i].first <= span) return true;
    span += dims[i].first * (dims[i].second - 1);
  }
  return false;
}

}  // namespace kq::fused
