// Checking a problem's tensor views against the prepared spec, before anything is read or written.
// Two kinds of answer, as the arm contract asks:
//   error        the call is malformed: wrong counts, dtype, shapes, a null pointer with data;
//   unsupported  a well-formed call this arm refuses: a non-CPU device, a layout outside the
//                spec's layout contract, a misaligned element, an output that overlaps itself,
//                or an output that overlaps an input other than an exact, declared alias.
// Everything here is O(tensors x rank), cheap enough to repeat on every run().
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kq/op_spec.hpp"
#include "kq/status.hpp"
#include "kq/tensor.hpp"

namespace kq::cpu {

// What run() needs to know about the spec; copied in prepare() because the host owns the OpSpec.
struct SpecFacts {
  DType dtype = DType::f32;
  std::vector<std::string> input_names;
  std::string output_name;
  std::vector<char> may_alias;  // per input: outputs[0] may share memory with it (exactly)
  LayoutContract layouts;
};

// Status::error when the spec's aliasing names an unknown input.
Status make_spec_facts(const OpSpec& spec, SpecFacts& out);

struct CheckedViews {
  std::int64_t numel = 0;
  // Per input: the output is exactly this input's memory (allowed by may_alias).
  std::vector<char> aliased;
  bool any_alias = false;
};

Status check_views(const SpecFacts& facts, std::span<const TensorView> inputs,
                   std::span<const TensorView> outputs, CheckedViews& out);

// True when two logical elements of `v` may share memory (a zero stride on an extent above 1,
// interleaved strides): an output like that would be written by two threads at once.
bool view_self_overlaps(const TensorView& v);

}  // namespace kq::cpu
