// check_contract for format-2 (shaped) specs: each tensor against its own declaration (dtype,
// rank, extents bound consistently to the dims), the layouts the spec admits and overlaps
// between tensors; and the dims' values a problem binds. Arms call it from prepare() and run(),
// so that a view outside the contract is refused with a reason, never computed wrongly.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kq/contract.hpp"
#include "kq/indexed.hpp"
#include "kq/op_spec.hpp"
#include "kq/status.hpp"
#include "kq/tensor.hpp"

namespace kq {

namespace shaped_detail {

inline std::string dtype_text(DType t) { return std::string(to_string(t)); }

// Binds the dims t's extents name to t's shape in `dims` (-1: not bound yet); a message when a
// rank, a constant extent or a dim bound earlier disagrees.
inline std::string bind(const ix::TensorDecl& d, const TensorView& v,
                        std::vector<std::int64_t>& dims, const std::vector<ix::DimDecl>& names) {
  if (v.rank != static_cast<int>(d.shape.size()))
    return d.name + ": rank " + std::to_string(v.rank) + ", the spec declares " +
           std::to_string(d.shape.size());
  for (int i = 0; i < v.rank; ++i) {
    const ix::Extent& e = d.shape[static_cast<std::size_t>(i)];
    if (!e.is_dim()) {
      if (v.shape[i] != e.constant)
        return d.name + ": extent " + std::to_string(v.shape[i]) + " in dimension " +
               std::to_string(i) + ", the spec declares " + std::to_string(e.constant);
      continue;
    }
    std::int64_t& bound = dims[static_cast<std::size_t>(e.dim)];
    if (bound < 0) bound = v.shape[i];
    if (bound != v.shape[i])
      return d.name + ": " + names[static_cast<std::size_t>(e.dim)].name + " = " +
             std::to_string(v.shape[i]) + " in dimension " + std::to_string(i) +
             ", another tensor gives " + std::to_string(bound);
  }
  return {};
}

}  // namespace shaped_detail

// The value of every dim (in program->decls.dims order) that the views bind, or a message
// saying which tensor disagrees; a dim no tensor names stays -1.
inline Status bind_dims(const OpSpec& spec, std::span<const TensorView> inputs,
                        std::span<const TensorView> outputs, std::vector<std::int64_t>& dims) {
  const ix::Program& p = *spec.program;
  dims.assign(p.decls.dims.size(), -1);
  std::size_t in = 0, out = 0;
  for (const ix::TensorDecl& d : p.decls.tensors) {
    if (d.role == ix::Role::temporary) continue;
    const bool input = d.role == ix::Role::input;
    if ((input ? in >= inputs.size() : out >= outputs.size()))
      return Status::unsupported("expected " + std::to_string(spec.inputs.size()) + " inputs and " +
                                 std::to_string(spec.outputs.size()) + " outputs");
    const TensorView& v = input ? inputs[in++] : outputs[out++];
    if (auto m = shaped_detail::bind(d, v, dims, p.decls.dims); !m.empty())
      return Status::unsupported(m);
  }
  if (in != inputs.size() || out != outputs.size())
    return Status::unsupported("expected " + std::to_string(spec.inputs.size()) + " inputs and " +
                               std::to_string(spec.outputs.size()) + " outputs");
  return Status::ok();
}

// Every view against its declaration and the layouts; outputs may overlap nothing.
inline Status check_shaped_contract(const OpSpec& spec, std::span<const TensorView> inputs,
                                    std::span<const TensorView> outputs, Device device) {
  if (!spec.program) return Status::unsupported("not a format-2 (shaped) spec");
  std::vector<std::int64_t> dims;
  if (Status s = bind_dims(spec, inputs, outputs, dims); !s.is_ok()) return s;
  const ix::Program& p = *spec.program;
  std::size_t in = 0, out = 0;
  for (const ix::TensorDecl& d : p.decls.tensors) {
    if (d.role == ix::Role::temporary) continue;
    const TensorView& v = d.role == ix::Role::input ? inputs[in++] : outputs[out++];
    const std::string name = std::string(ix::to_string(d.role)) + " " + d.name;
    if (v.dtype != d.dtype)
      return Status::unsupported(name + ": dtype " + shaped_detail::dtype_text(v.dtype) +
                                 ", the spec declares " + shaped_detail::dtype_text(d.dtype));
    if (v.device != device)
      return Status::unsupported(name + ": on " + std::string(to_string(v.device)) +
                                 ", this arm runs on " + std::string(to_string(device)));
    if (v.numel() > 0 && v.data == nullptr) return Status::unsupported(name + ": null data");
    if (spec.layouts.contiguous_only && !v.is_contiguous())
      return Status::unsupported(name + ": strided view, the spec admits contiguous views only");
    const auto align = static_cast<std::int64_t>(v.alignment());
    if (v.numel() > 0 && align < spec.layouts.min_alignment_bytes)
      return Status::unsupported(name + ": aligned to " + std::to_string(align) +
                                 " bytes, the spec requires " +
                                 std::to_string(spec.layouts.min_alignment_bytes));
  }
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    std::uintptr_t olo, ohi;
    contract_detail::byte_span(outputs[o], olo, ohi);
    if (olo == ohi) continue;
    auto overlaps = [&](const TensorView& v) {
      std::uintptr_t lo, hi;
      contract_detail::byte_span(v, lo, hi);
      return lo < hi && lo < ohi && olo < hi;
    };
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (overlaps(inputs[i]))
        return Status::unsupported("output " + spec.outputs[o].name + " overlaps input " +
                                   spec.inputs[i]);
    for (std::size_t k = 0; k < outputs.size(); ++k)
      if (k != o && overlaps(outputs[k]))
        return Status::unsupported("output " + spec.outputs[o].name + " overlaps output " +
                                   spec.outputs[k].name);
  }
  return Status::ok();
}

}  // namespace kq
