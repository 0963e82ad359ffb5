#include "validate.hpp"

#include <algorithm>
#include <array>

namespace kq::cpu {
namespace {

std::string describe(const SpecFacts& f, int input) {
  if (input < 0) return "output '" + f.output_name + "'";
  return "input '" + f.input_names[input] + "'";
}

// [lo, hi) in bytes of the memory a non-empty view can touch; false when it cannot be computed
// without overflow (no real buffer is that large, so the view is malformed).
bool extent(const TensorView& v, std::uintptr_t& lo, std::uintptr_t& hi) {
  std::int64_t min_off = 0, max_off = 0;
  for (int d = 0; d < v.rank; ++d) {
    std::int64_t span;
    if (__builtin_mul_overflow(v.strides[d], v.shape[d] - 1, &span)) return false;
    if (span < 0) {
      if (__builtin_add_overflow(min_off, span, &min_off)) return false;
    } else {
      if (__builtin_add_overflow(max_off, span, &max_off)) return false;
    }
  }
  const auto es = static_cast<std::int64_t>(dtype_size(v.dtype));
  std::int64_t lo_b, hi_b;
  if (__builtin_mul_overflow(min_off, es, &lo_b) || __builtin_mul_overflow(max_off + 1, es, &hi_b))
    return false;
  const auto p = reinterpret_cast<std::uintptr_t>(v.data);
  lo = p + static_cast<std::uintptr_t>(lo_b);  // two's complement wrap gives p - |lo_b|
  hi = p + static_cast<std::uintptr_t>(hi_b);
  return true;
}

// True when two logical elements of `v` share memory (a zero stride on an extent above 1, or
// strides that interleave). Dimensions sorted by |stride| must each step past everything the
// smaller ones reach; this refuses a few exotic non-overlapping layouts, never accepts an
// overlapping one.
bool self_overlaps(const TensorView& v) {
  std::array<std::pair<std::int64_t, std::int64_t>, kMaxRank> dims{};
  int r = 0;
  for (int d = 0; d < v.rank; ++d) {
    if (v.shape[d] > 1) dims[r++] = {v.strides[d] < 0 ? -v.strides[d] : v.strides[d], v.shape[d]};
  }
  std::sort(dims.begin(), dims.begin() + r);
  std::int64_t reach = 0;
  for (int i = 0; i < r; ++i) {
    if (dims[i].first <= reach) return true;
    reach += dims[i].first * (dims[i].second - 1);
  }
  return false;
}

bool same_layout(const TensorView& a, const TensorView& b) {
  if (a.data != b.data || a.rank != b.rank) return false;
  for (int d = 0; d < a.rank; ++d) {
    if (a.shape[d] != b.shape[d]) return false;
    if (a.shape[d] != 1 && a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

bool rank_allowed(const LayoutContract& c, int rank) {
  return c.ranks.empty() || std::find(c.ranks.begin(), c.ranks.end(), rank) != c.ranks.end();
}

// Checks one view on its own. `input` is its index, or -1 for the output.
Status check_one(const SpecFacts& f, const TensorView& v, int input, std::int64_t& numel) {
  const std::string who = describe(f, input);
  if (v.device != Device::cpu) {
    return Status::unsupported(who + " is on device " + std::string(to_string(v.device)) +
                               "; cpu_tbb reads and writes host memory only");
  }
  if (v.dtype != f.dtype) {
    return Status::error(who + " has dtype " + std::string(to_string(v.dtype)) +
                         " but the spec's dtype is " + std::string(to_string(f.dtype)));
  }
  if (v.rank < 0 || v.rank > kMaxRank) {
    return Status::error(who + " has rank " + std::to_string(v.rank) + " outside [0, " +
                         std::to_string(kMaxRank) + "]");
  }
  numel = 1;
  for (int d = 0; d < v.rank; ++d) {
    if (v.shape[d] < 0) return Status::error(who + " has a negative extent");
    if (__builtin_mul_overflow(numel, v.shape[d], &numel)) {
      return Status::error(who + " has more elements than fit in 64 bits");
    }
  }
  if (numel > 0 && v.data == nullptr) {
    return Status::error(who + " has a null data pointer and " + std::to_string(numel) +
                         " elements");
  }
  if (!rank_allowed(f.layouts, v.rank)) {
    return Status::unsupported(who + " has rank " + std::to_string(v.rank) +
                               ", not among the spec's layout ranks");
  }
  if (numel > 0 && f.layouts.contiguous_only && !v.is_contiguous()) {
    return Status::unsupported(who + " is strided, transposed or broadcast, but the spec's " +
                               "layout contract is contiguous_only");
  }
  if (numel > 0 && reinterpret_cast<std::uintptr_t>(v.data) % dtype_size(v.dtype) != 0) {
    return Status::unsupported(who + " is not aligned to its element size");
  }
  // This arm computes any alignment, but the contract is the spec's: outside it, refuse.
  if (numel > 0 && static_cast<std::int64_t>(v.alignment()) < f.layouts.min_alignment_bytes) {
    return Status::unsupported(who + " is aligned to " + std::to_string(v.alignment()) +
                               " bytes; the spec requires " +
                               std::to_string(f.layouts.min_alignment_bytes));
  }
  return Status::ok();
}

}  // namespace

Status make_spec_facts(const OpSpec& spec, SpecFacts& out) {
  out = SpecFacts{};
  out.dtype = spec.dtype;
  out.input_names = spec.inputs;
  out.output_name = spec.outputs.empty() ? "out" : spec.outputs[0].name;
  out.layouts = spec.layouts;
  out.may_alias.assign(spec.inputs.size(), 0);
  if (!spec.outputs.empty()) {
    for (const std::string& name : spec.outputs[0].may_alias) {
      auto it = std::find(spec.inputs.begin(), spec.inputs.end(), name);
      if (it == spec.inputs.end()) {
        return Status::error("may_alias of output '" + out.output_name + "' names '" + name +
                             "', which is not an input");
      }
      out.may_alias[it - spec.inputs.begin()] = 1;
    }
  }
  return Status::ok();
}

Status check_views(const SpecFacts& f, std::span<const TensorView> inputs,
                   std::span<const TensorView> outputs, CheckedViews& out) {
  if (inputs.size() != f.input_names.size()) {
    return Status::error("expected " + std::to_string(f.input_names.size()) + " inputs, got " +
                         std::to_string(inputs.size()));
  }
  if (outputs.size() != 1) {
    return Status::error("expected 1 output, got " + std::to_string(outputs.size()));
  }
  const TensorView& o = outputs[0];
  std::int64_t numel = 0;
  if (Status s = check_one(f, o, -1, numel); !s.is_ok()) return s;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::int64_t in_numel = 0;
    const int idx = static_cast<int>(i);
    if (Status s = check_one(f, inputs[i], idx, in_numel); !s.is_ok()) return s;
    bool same_shape = inputs[i].rank == o.rank;
    for (int d = 0; same_shape && d < o.rank; ++d) same_shape = inputs[i].shape[d] == o.shape[d];
    if (!same_shape) {
      return Status::error(describe(f, idx) + " does not have the output's shape (broadcast " +
                           "is expressed with zero strides, not with smaller shapes)");
    }
  }
  out.numel = numel;
  out.aliased.assign(inputs.size(), 0);
  out.any_alias = false;
  if (numel == 0) return Status::ok();

  if (self_overlaps(o)) {
    return Status::unsupported("output '" + f.output_name + "' has elements that share memory " +
                               "(zero or interleaving strides); results would race");
  }
  std::uintptr_t olo, ohi;
  if (!extent(o, olo, ohi)) return Status::error("output strides overflow the address space");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::uintptr_t lo, hi;
    if (!extent(inputs[i], lo, hi)) {
      return Status::error(describe(f, static_cast<int>(i)) +
                           " strides overflow the address space");
    }
    if (hi <= olo || ohi <= lo) continue;
    const std::string who = describe(f, static_cast<int>(i));
    if (!f.may_alias[i]) {
      return Status::unsupported("output '" + f.output_name + "' overlaps the memory of " + who +
                                 ", and the spec's may_alias does not name it (out-of-place only)");
    }
    if (!same_layout(o, inputs[i])) {
      return Status::unsupported("output '" + f.output_name + "' partially overlaps " + who +
                                 "; in-place is allowed only as an exact alias with the same " +
                                 "pointer, shape and strides");
    }
    out.aliased[i] = 1;
    out.any_alias = true;
  }
  return Status::ok();
}

bool view_self_overlaps(const TensorView& v) { return self_overlaps(v); }

}  // namespace kq::cpu
