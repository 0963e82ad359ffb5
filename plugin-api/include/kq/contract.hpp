// A ready check of a problem against the spec's declared contract, for arms to call from
// prepare() and run(): tensor counts, dtype, device, equal shapes, ranks, layouts (contiguity,
// alignment) and aliasing. It returns unsupported with a reason for anything the contract does
// not admit, so that an arm refuses instead of computing garbage. Arms with stricter needs
// (16-byte alignment for vector loads, say) add their own checks or fall back.
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "kq/op_spec.hpp"
#include "kq/status.hpp"
#include "kq/tensor.hpp"

namespace kq {

namespace contract_detail {

// The byte range [lo, hi) a view can touch; an empty view touches nothing.
inline void byte_span(const TensorView& v, std::uintptr_t& lo, std::uintptr_t& hi) {
  auto base = reinterpret_cast<std::uintptr_t>(v.data);
  std::int64_t min_off = 0, max_off = 0;
  for (int i = 0; i < v.rank; ++i) {
    if (v.shape[i] == 0) {
      lo = hi = base;
      return;
    }
    std::int64_t reach = (v.shape[i] - 1) * v.strides[i];
    (reach < 0 ? min_off : max_off) += reach;
  }
  auto es = static_cast<std::int64_t>(dtype_size(v.dtype));
  lo = base + static_cast<std::uintptr_t>(min_off * es);
  hi = base + static_cast<std::uintptr_t>((max_off + 1) * es);
}

inline bool same_layout(const TensorView& a, const TensorView& b) {
  if (a.data != b.data || a.rank != b.rank || a.dtype != b.dtype) return false;
  for (int i = 0; i < a.rank; ++i)
    if (a.shape[i] != b.shape[i] || a.strides[i] != b.strides[i]) return false;
  return true;
}

inline Status check_view(const OpSpec& spec, const TensorView& v, const std::string& name,
                         Device device) {
  if (v.dtype != spec.dtype)
    return Status::unsupported(name + ": dtype " + std::string(to_string(v.dtype)) +
                               ", the spec declares " + std::string(to_string(spec.dtype)));
  if (v.device != device)
    return Status::unsupported(name + ": on " + std::string(to_string(v.device)) +
                               ", this arm runs on " + std::string(to_string(device)));
  if (std::find(spec.layouts.ranks.begin(), spec.layouts.ranks.end(), v.rank) ==
      spec.layouts.ranks.end())
    return Status::unsupported(name + ": rank " + std::to_string(v.rank) +
                               " is outside the spec's ranks");
  if (v.numel() > 0 && v.data == nullptr) return Status::unsupported(name + ": null data");
  if (spec.layouts.contiguous_only && !v.is_contiguous())
    return Status::unsupported(name + ": strided view, the spec admits contiguous views only");
  if (v.numel() > 0 && static_cast<std::int64_t>(v.alignment()) < spec.layouts.min_alignment_bytes)
    return Status::unsupported(name + ": aligned to " + std::to_string(v.alignment()) +
                               " bytes, the spec requires " +
                               std::to_string(spec.layouts.min_alignment_bytes));
  return Status::ok();
}

}  // namespace contract_detail

inline Status check_contract(const OpSpec& spec, std::span<const TensorView> inputs,
                             std::span<const TensorView> outputs, Device device) {
  using namespace contract_detail;
  if (inputs.size() != spec.inputs.size() || outputs.size() != spec.outputs.size())
    return Status::unsupported("expected " + std::to_string(spec.inputs.size()) + " inputs and " +
                               std::to_string(spec.outputs.size()) + " outputs");
  if (outputs.empty()) return Status::unsupported("no output");
  const TensorView& ref = outputs[0];
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Status s = check_view(spec, inputs[i], "input " + spec.inputs[i], device);
    if (!s.is_ok()) return s;
  }
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    Status s = check_view(spec, outputs[o], "output " + spec.outputs[o].name, device);
    if (!s.is_ok()) return s;
  }
  for (auto views : {inputs, outputs}) {
    for (const TensorView& v : views) {
      if (v.rank != ref.rank) return Status::unsupported("tensors of different ranks");
      for (int d = 0; d < v.rank; ++d)
        if (v.shape[d] != ref.shape[d]) return Status::unsupported("tensors of different shapes");
    }
  }
  // Overlap between an output and anything else is admitted only as an exact alias of an input
  // the spec names in may_alias.
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    std::uintptr_t olo, ohi;
    byte_span(outputs[o], olo, ohi);
    if (olo == ohi) continue;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      std::uintptr_t ilo, ihi;
      byte_span(inputs[i], ilo, ihi);
      if (ilo >= ohi || olo >= ihi) continue;
      const auto& allowed = spec.outputs[o].may_alias;
      bool named = std::find(allowed.begin(), allowed.end(), spec.inputs[i]) != allowed.end();
      if (!named)
        return Status::unsupported("output " + spec.outputs[o].name + " overlaps input " +
                                   spec.inputs[i] + ", which the spec does not allow");
      if (!same_layout(outputs[o], inputs[i]))
        return Status::unsupported("output " + spec.outputs[o].name + " partially overlaps input " +
                                   spec.inputs[i]);
    }
  }
  return Status::ok();
}

}  // namespace kq
