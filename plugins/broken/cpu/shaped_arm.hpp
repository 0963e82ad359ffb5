// The base of the CPU candidates for format-2 (shaped) specs. Each recognises the computation it
// implements by the program's canonical text (kq/indexed_text.hpp: its structure, never the op's
// name) and the dtypes of its inputs and outputs, and breaks one step of it. GuardedArm checks
// every view against the shaped contract before compute() sees it. The steps a candidate does
// not break are computed in float64 and rounded once, as the reference does, so that its flaw is
// the only error in what it writes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "cpu_common.hpp"
#include "kq/half.hpp"
#include "kq/indexed_text.hpp"

namespace kq::broken::cpu {

// The dtypes of a spec's inputs, then its outputs, in declaration order.
using Signature = std::vector<DType>;

class ShapedArm : public CpuArm {
 public:
  // `what`: the computation in words, for the reason a spec is declined; `canonical`: the
  // program's canonical text, as `kq check-spec SPEC` prints it.
  ShapedArm(const char* flaw, const char* expected, const char* what, const char* canonical,
            std::vector<Signature> signatures)
      : CpuArm(flaw, expected),
        what_(what),
        canonical_(canonical),
        signatures_(std::move(signatures)) {}

 protected:
  bool computes_shaped() const override { return true; }

  Status on_supports(const OpSpec& spec) const override {
    if (!spec.program) return Status::unsupported("format-2 (shaped) specs only");
    if (!ix::computes(*spec.program, canonical_))
      return Status::unsupported(std::string("computes ") + what_ + " only");
    if (spec.compute != DType::f32) return Status::unsupported("compute f32 only");
    Signature s;
    for (const ix::Role role : {ix::Role::input, ix::Role::output})
      for (const ix::TensorDecl& t : spec.program->decls.tensors)
        if (t.role == role) s.push_back(t.dtype);
    for (const Signature& taken : signatures_)
      if (s == taken) return Status::ok();
    return Status::unsupported(std::string(what_) + " in other dtypes only");
  }

 private:
  const char* what_;
  const char* canonical_;
  std::vector<Signature> signatures_;
};

// The element of `v` at `index` (one subscript per dimension; none for a scalar), through its
// strides.
inline void* element(const TensorView& v, std::initializer_list<std::int64_t> index) {
  std::int64_t offset = 0;
  int d = 0;
  for (std::int64_t i : index) offset += i * v.strides[d++];
  return static_cast<char*>(v.data) + offset * static_cast<std::int64_t>(dtype_size(v.dtype));
}

// That element, exactly, as a double.
inline double get(const TensorView& v, std::initializer_list<std::int64_t> index) {
  return load_as_double(v.dtype, element(v, index));
}

// `x` rounded once into that element.
inline void put(const TensorView& v, std::initializer_list<std::int64_t> index, double x) {
  store_rounded(v.dtype, x, element(v, index));
}

// The canonical text of softmax over the last dim: four candidates break one step each.
inline constexpr const char* kSoftmax = R"(
  tmp0[i0] = max(i1, in0[i0, i1])
  tmp1[i0, i1] = exp(sub(in0[i0, i1], tmp0[i0]))
  tmp2[i0] = sum(i1, tmp1[i0, i1])
  out0[i0, i1] = div(tmp1[i0, i1], tmp2[i0])
  shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0, d1] tmp2[d0]
)";

// The canonical text of a matrix product, C = A B, A (M, K) and B (K, N) row-major (KernelBench
// problems 2, 6, 7 and 8): three candidates (MatmulArm) break one step each.
inline constexpr const char* kMatmul = R"(
  out0[i0, i1] = sum(i2, mul(in0[i0, i2], in1[i2, i1]))
  shapes: in0[d0, d1] in1[d1, d2] out0[d0, d2]
)";

// A float32 matrix product C = A B done right but for one step, which each candidate overrides:
// the term it adds for (m, n) at k, how it adds it to the running sum (exactly, in float64), how
// many k it sums, or how many rows and columns it writes; the sum rounded once into C.
class MatmulArm : public ShapedArm {
 public:
  explicit MatmulArm(const char* flaw)
      : ShapedArm(flaw, "values", "a float32 matrix product C = A B", kMatmul,
                  {{DType::f32, DType::f32, DType::f32}}) {}

 protected:
  virtual double term(double a, double b) const { return a * b; }
  virtual double accumulate(double sum, double term) const { return sum + term; }
  virtual std::int64_t terms(std::int64_t K) const { return K; }
  // How many rows and columns of C it writes.
  virtual std::int64_t rows(std::int64_t M) const { return M; }
  virtual std::int64_t cols(std::int64_t N) const { return N; }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    const TensorView &a = in[0], &b = in[1], &c = out[0];
    const std::int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
    for (std::int64_t m = 0; m < rows(M); ++m)
      for (std::int64_t n = 0; n < cols(N); ++n) {
        double s = 0;
        for (std::int64_t k = 0; k < terms(K); ++k)
          s = accumulate(s, term(get(a, {m, k}), get(b, {k, n})));
        put(c, {m, n}, s);
      }
    return Status::ok();
  }
};

// C = A B^T, A (M, K) and B (N, K) row-major (KernelBench problem 17, nn.Linear's weight).
inline constexpr const char* kMatmulBT = R"(
  out0[i0, i1] = sum(i2, mul(in0[i0, i2], in1[i1, i2]))
  shapes: in0[d0, d1] in1[d2, d1] out0[d0, d2]
)";

// Softmax in f32 or bf16 (computed in f32).
inline std::vector<Signature> softmax_dtypes() {
  return {{DType::f32, DType::f32}, {DType::bf16, DType::bf16}};
}

}  // namespace kq::broken::cpu
