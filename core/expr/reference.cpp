#include "expr/reference.hpp"

#include "kq/half.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "expr/batch_program.hpp"
#include "expr/odometer.hpp"
#include "kq/expr_checks.hpp"
#include "kq/expr_eval.hpp"

namespace kq {
namespace {

// Elements per TBB task at least: enough to amortise a task's setup (one BatchProgram).
constexpr std::int64_t kGrain = 16384;

[[noreturn]] void invalid(const std::string& what) {
  throw std::invalid_argument("eval_reference: " + what);
}

std::string shape_text(const TensorView& t) {
  std::string s = "[";
  for (int d = 0; d < t.rank; ++d) s += (d ? ", " : "") + std::to_string(t.shape[d]);
  return s + "]";
}

// The number of inputs the expression reads: its largest input index + 1.
std::size_t inputs_read(const Expr& e) {
  std::size_t inputs = 0;
  for (const ExprNode& n : e.nodes)
    if (n.op == Op::input && n.input >= 0)
      inputs = std::max(inputs, static_cast<std::size_t>(n.input) + 1);
  return inputs;
}

void check_view(const TensorView& t, const std::string& name) {
  if (t.device != Device::cpu)
    invalid(name + " is on device " + std::string(to_string(t.device)) +
            "; the reference reads and writes host memory only");
  if (dtype_size(t.dtype) == 0) invalid(name + " has an unknown dtype");
  if (t.rank < 0 || t.rank > kMaxRank)
    invalid(name + " has rank " + std::to_string(t.rank) + ", outside 0.." +
            std::to_string(kMaxRank));
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] < 0) invalid(name + " has a negative extent: shape " + shape_text(t));
  if (t.data == nullptr && t.numel() > 0)
    invalid(name + " has no data pointer but " + std::to_string(t.numel()) + " elements");
}

void check_arguments(const Expr& e, std::span<const TensorView> inputs, const TensorView& out) {
  const std::size_t wanted = inputs_read(e);
  if (std::string why = expr_problem(e, wanted); !why.empty()) invalid(why);
  if (inputs.size() != wanted)
    invalid("the expression reads " + std::to_string(wanted) + " input(s) but " +
            std::to_string(inputs.size()) + " tensor(s) were given");
  check_view(out, "out");
  // Overlapping output elements would be written by several threads at once.
  for (int d = 0; d < out.rank; ++d)
    if (out.strides[d] == 0 && out.shape[d] > 1)
      invalid("out has stride 0 in dimension " + std::to_string(d) + " of extent " +
              std::to_string(out.shape[d]) + ": its elements would overlap");
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const TensorView& in = inputs[k];
    const std::string name = "input " + std::to_string(k);
    check_view(in, name);
    if (in.rank != out.rank ||
        !std::equal(in.shape.begin(), in.shape.begin() + in.rank, out.shape.begin()))
      invalid(name + " has shape " + shape_text(in) + " but out has shape " + shape_text(out) +
              " (broadcast is written as stride 0, with the output's shape)");
  }
}

// Reads `lanes` elements of `t` into doubles: exact for every dtype.
void load_contiguous(const TensorView& t, std::int64_t start, int lanes, double* dst) {
  with_dtype(t.dtype, [&]<typename T>(T) {
    const T* p = static_cast<const T*>(t.data) + start;
    for (int l = 0; l < lanes; ++l) dst[l] = static_cast<double>(p[l]);
  });
}

// The one rounding of the reference: double to the output's dtype, to nearest even.
void store_contiguous(const TensorView& t, std::int64_t start, int lanes, const double* src) {
  with_dtype(t.dtype, [&]<typename T>(T) {
    T* p = static_cast<T*>(t.data) + start;
    for (int l = 0; l < lanes; ++l) p[l] = static_cast<T>(src[l]);
  });
}

void load_strided(const TensorView& t, const std::int64_t* offsets, int lanes, double* dst) {
  with_dtype(t.dtype, [&]<typename T>(T) {
    const T* p = static_cast<const T*>(t.data);
    for (int l = 0; l < lanes; ++l) dst[l] = static_cast<double>(p[offsets[l]]);
  });
}

void store_strided(const TensorView& t, const std::int64_t* offsets, int lanes, const double* src) {
  with_dtype(t.dtype, [&]<typename T>(T) {
    T* p = static_cast<T*>(t.data);
    for (int l = 0; l < lanes; ++l) p[offsets[l]] = static_cast<T>(src[l]);
  });
}

// Every tensor dense in row-major order: the linear index is the offset in each of them.
void eval_contiguous(const Expr& e, std::span<const TensorView> inputs, const TensorView& out,
                     std::int64_t begin, std::int64_t end) {
  constexpr int kBatch = ref::BatchProgram::kBatch;
  ref::BatchProgram program(e, static_cast<int>(inputs.size()));
  for (std::int64_t start = begin; start < end; start += kBatch) {
    const int lanes = static_cast<int>(std::min<std::int64_t>(kBatch, end - start));
    for (std::size_t k = 0; k < inputs.size(); ++k)
      load_contiguous(inputs[k], start, lanes, program.input(static_cast<int>(k)));
    store_contiguous(out, start, lanes, program.run(lanes));
  }
}

void eval_strided(const Expr& e, std::span<const TensorView> inputs, const TensorView& out,
                  std::int64_t begin, std::int64_t end) {
  constexpr int kBatch = ref::BatchProgram::kBatch;
  ref::BatchProgram program(e, static_cast<int>(inputs.size()));
  // Tensor t's offsets for the batch at t * kBatch; the output is the last tensor.
  std::vector<const TensorView*> tensors;
  for (const TensorView& in : inputs) tensors.push_back(&in);
  tensors.push_back(&out);
  std::vector<std::int64_t> offsets(tensors.size() * kBatch);
  ref::Odometer odometer(out.rank, out.shape, tensors, begin);

  for (std::int64_t start = begin; start < end; start += kBatch) {
    const int lanes = static_cast<int>(std::min<std::int64_t>(kBatch, end - start));
    for (int l = 0; l < lanes; ++l) {
      for (std::size_t t = 0; t < tensors.size(); ++t) offsets[t * kBatch + l] = odometer.offset(t);
      odometer.step();
    }
    for (std::size_t k = 0; k < inputs.size(); ++k)
      load_strided(inputs[k], &offsets[k * kBatch], lanes, program.input(static_cast<int>(k)));
    store_strided(out, &offsets[inputs.size() * kBatch], lanes, program.run(lanes));
  }
}

}  // namespace

double eval_scalar(const Expr& e, std::span<const double> inputs) {
  return ref::eval_expr(e, inputs);
}

void eval_reference(const Expr& e, std::span<const TensorView> inputs, const TensorView& out) {
  check_arguments(e, inputs, out);
  const std::int64_t n = out.numel();
  if (n == 0) return;
  const bool contiguous =
      out.is_contiguous() && std::all_of(inputs.begin(), inputs.end(),
                                         [](const TensorView& t) { return t.is_contiguous(); });
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, kGrain),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      if (contiguous)
                        eval_contiguous(e, inputs, out, r.begin(), r.end());
                      else
                        eval_strided(e, inputs, out, r.begin(), r.end());
                    });
}

}  // namespace kq
