// Constant folding as the arms share it (plugin-api/include/kq/expr_fold.hpp), against the host's
// reference: every op on every combination of awkward constants folds to exactly the value that
// eval_reference computes for the same expression (NaN payloads and signed zeros included); which
// nodes fold; and a folded subexpression standing for its nodes inside a larger expression.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <optional>
#include <vector>

#include "expr/reference.hpp"
#include "expr_nodes.hpp"
#include "kq/expr_fold.hpp"

namespace {

using kq::DType;
using kq::Expr;
using kq::Op;
using kq::test::ExprBuilder;

constexpr double kInf = std::numeric_limits<double>::infinity();

const double kNaN = std::bit_cast<double>(std::uint64_t{0x7ff8000000000123});     // a payload
const double kNegNaN = std::bit_cast<double>(std::uint64_t{0xfff8000000000456});  // and a sign

// Zeros of both signs, a subnormal, values where gelu, sigmoid and erf need care, infinities,
// and NaNs that can be told apart, to see which one an op passes through.
const std::vector<double> kValues = {0.0,    -0.0,   1.0,  -1.0,  0.5,  -7.5,   3.0,
                                     1e-310, -1e300, kInf, -kInf, kNaN, kNegNaN};

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// The host's reference for an expression that reads no input: eval_reference into one double.
double reference(const Expr& e) {
  double out = 0.0;
  kq::TensorView o;
  o.data = &out;
  o.dtype = DType::f64;
  o.rank = 1;
  o.shape[0] = 1;
  o.strides[0] = 1;
  kq::eval_reference(e, {}, o);
  return out;
}

// op applied to the constants `args` (arity(op) of them).
Expr op_on_constants(Op op, const std::vector<double>& args) {
  ExprBuilder b;
  int at[3] = {-1, -1, -1};
  for (std::size_t k = 0; k < args.size(); ++k) at[k] = b.c(args[k]);
  b.op(op, at[0], at[1], at[2]);
  return b.e;
}

// The value fold_constants gives the root, which must fold.
double folded_root(const Expr& e) {
  const std::vector<std::optional<double>> folded = kq::fold_constants(e);
  REQUIRE(folded.back().has_value());
  return *folded.back();
}

// Every op on every combination of kValues: `check(op, args)` for each.
template <class Check>
void for_every_op_and_operands(Check&& check) {
  for (int o = static_cast<int>(Op::neg); o <= static_cast<int>(Op::clamp); ++o) {
    const Op op = static_cast<Op>(o);
    const int k = kq::arity(op);
    const std::size_t n = kValues.size();
    const std::size_t combos = k == 1 ? n : k == 2 ? n * n : n * n * n;
    for (std::size_t c = 0; c < combos; ++c) {
      std::vector<double> args;
      for (std::size_t rest = c, j = 0; j < static_cast<std::size_t>(k); ++j, rest /= n)
        args.push_back(kValues[rest % n]);
      check(op, args);
    }
  }
}

Expr fold_of(Op op, double a, double b = 0, double c = 0) {
  std::vector<double> args{a, b, c};
  args.resize(static_cast<std::size_t>(kq::arity(op)));
  return op_on_constants(op, args);
}

}  // namespace

TEST_CASE("fold_constants: every op on awkward constants is the reference's value, bit for bit") {
  int checked = 0, differ = 0;
  for_every_op_and_operands([&](Op op, const std::vector<double>& args) {
    const Expr e = op_on_constants(op, args);
    const double folded = folded_root(e);
    const double want = reference(e);
    ++checked;
    if (!same_bits(folded, want)) {
      ++differ;
      INFO(kq::to_string(op), " on ", args[0], args.size() > 1 ? args[1] : 0.0,
           args.size() > 2 ? args[2] : 0.0);
      CHECK(same_bits(folded, want));
    }
  });
  CHECK(checked == 11 * 13 + 12 * 13 * 13 + 2 * 13 * 13 * 13);
  CHECK(differ == 0);
}

TEST_CASE("fold_constants: the reference's edge rules, as folded") {
  CHECK(same_bits(folded_root(fold_of(Op::relu, -0.0)), 0.0));   // relu(-0) = +0
  CHECK(same_bits(folded_root(fold_of(Op::relu, kNaN)), kNaN));  // the same NaN
  CHECK(same_bits(folded_root(fold_of(Op::max, -0.0, 0.0)), 0.0));
  CHECK(same_bits(folded_root(fold_of(Op::max, 0.0, -0.0)), 0.0));
  CHECK(same_bits(folded_root(fold_of(Op::min, 0.0, -0.0)), -0.0));
  CHECK(same_bits(folded_root(fold_of(Op::max, 1.0, kNaN)), kNaN));
  CHECK(same_bits(folded_root(fold_of(Op::min, kNegNaN, kNaN)), kNegNaN));  // the first NaN wins
  CHECK(folded_root(fold_of(Op::eq, kNaN, kNaN)) == 0.0);
  CHECK(folded_root(fold_of(Op::ne, kNaN, kNaN)) == 1.0);
  CHECK(folded_root(fold_of(Op::lt, kNaN, 1.0)) == 0.0);
  CHECK(folded_root(fold_of(Op::select, kNaN, 1.0, 2.0)) == 1.0);  // a NaN condition is != 0
  CHECK(folded_root(fold_of(Op::select, -0.0, 1.0, 2.0)) == 2.0);
  CHECK(std::isnan(folded_root(fold_of(Op::clamp, kNaN, 0.0, 1.0))));
  CHECK(std::isnan(folded_root(fold_of(Op::clamp, 0.5, kNaN, 1.0))));
  CHECK(folded_root(fold_of(Op::clamp, 0.5, 1.0, 0.0)) == 0.0);  // lo > hi gives hi
  CHECK(std::isnan(folded_root(fold_of(Op::gelu, -kInf))));      // -inf * 0
  CHECK(std::isnan(folded_root(fold_of(Op::silu, -kInf))));
  // The formulas, evaluated at run time by the library (the compiler would fold them with
  // correctly rounded values of exp and erfc, which the library need not give).
  volatile double at_run_time = -3.0;
  const double s = at_run_time;
  CHECK(folded_root(fold_of(Op::sigmoid, s)) == 1.0 / (1.0 + std::exp(-s)));
  at_run_time = -7.5;
  const double g = at_run_time;
  CHECK(folded_root(fold_of(Op::gelu, g)) == 0.5 * g * std::erfc(-g / std::numbers::sqrt2));
}

TEST_CASE("fold_constants: nodes that read an input do not fold; the others do, dead ones too") {
  ExprBuilder b;  // x * (exp(1.5) + sigmoid(-3)) + select(1, x, 2), with a dead neg(4)
  const int x = b.in(0);
  const int e = b.op(Op::exp, b.c(1.5));
  const int s = b.op(Op::sigmoid, b.c(-3.0));
  const int k = b.op(Op::add, e, s);
  const int product = b.op(Op::mul, x, k);
  b.op(Op::neg, b.c(4.0));
  const int one = b.c(1.0);
  const int two = b.c(2.0);
  const int pick = b.op(Op::select, one, x, two);
  b.op(Op::add, product, pick);
  const std::vector<std::optional<double>> folded = kq::fold_constants(b.e);
  const std::vector<bool> want_folded = {false, true, true, true, true,  true, false,
                                         true,  true, true, true, false, false};
  REQUIRE(folded.size() == want_folded.size());
  for (std::size_t i = 0; i < folded.size(); ++i) {
    INFO("node ", i);
    CHECK(folded[i].has_value() == want_folded[i]);
  }
  CHECK(*folded[8] == -4.0);  // neg(4): dead, folded all the same
  // The folded sum is the reference's value of that subexpression...
  ExprBuilder sub;
  sub.op(Op::add, sub.op(Op::exp, sub.c(1.5)), sub.op(Op::sigmoid, sub.c(-3.0)));
  CHECK(same_bits(*folded[static_cast<std::size_t>(k)], reference(sub.e)));
  // ...and standing for it in the whole expression changes no bit of the result.
  for (double xv : {0.3, -2.0, 1e10}) {
    const double whole = kq::eval_scalar(b.e, std::vector<double>{xv});
    CHECK(same_bits(whole, xv * *folded[static_cast<std::size_t>(k)] + xv));
  }
}

TEST_CASE("fold_constants: an expression of inputs only folds nothing") {
  ExprBuilder b;
  b.op(Op::relu, b.op(Op::add, b.in(0), b.in(1)));
  for (const auto& f : kq::fold_constants(b.e)) CHECK_FALSE(f.has_value());
  CHECK(kq::fold_constants(Expr{}).empty());
}
