// The default cost of indexed statements: bytes of the inputs and outputs, FLOPs counted from the
// statements.
#include <doctest/doctest.h>

#include "indexed/cost.hpp"
#include "indexed/parser.hpp"

namespace {

using namespace kq::ix;
using kq::DType;

Program parse(std::string_view text, const Declarations& d) {
  ParseResult r = parse_program(text, d);
  INFO("error: ", r.error ? r.error->text() : "");
  REQUIRE(r.program.has_value());
  return *r.program;
}

}  // namespace

TEST_CASE("softmax: every input and output once; reductions one op per step") {
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"N", DimKind::reduced}};
  d.tensors = {{"x", Role::input, DType::f32, {"M", "N"}},
               {"mx", Role::temporary, DType::f32, {"M"}},
               {"e", Role::temporary, DType::f32, {"M", "N"}},
               {"s", Role::temporary, DType::f32, {"M"}},
               {"y", Role::output, DType::bf16, {"M", "N"}}};
  const Program p = parse(
      "mx[m] = max(n, x[m, n])\n"
      "e[m, n] = exp(x[m, n] - mx[m])\n"
      "s[m] = sum(n, e[m, n])\n"
      "y[m, n] = e[m, n] / s[m]\n",
      d);
  const Cost c = default_cost(p, {{"M", 4}, {"N", 8}});
  CHECK(c.bytes == 4 * 8 * 4 + 4 * 8 * 2);  // temporaries cost no bytes
  // max: 8 steps per row; exp and sub per element; sum: 8 steps per row; div per element.
  CHECK(c.flops == 4 * 8 + 4 * 8 * 2 + 4 * 8 + 4 * 8);
}

TEST_CASE("scans cost their body and one step per element; gathers and subscripts nothing") {
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"N", DimKind::free}};
  d.tensors = {{"x", Role::input, DType::f32, {"M", "N"}},
               {"t", Role::input, DType::i64, {"M"}},
               {"c", Role::output, DType::f32, {"M", "N"}},
               {"g", Role::output, DType::f64, {"M"}},
               {"total", Role::output, DType::f32, {}}};
  const Program p = parse(
      "c[m, n] = cumsum(n, x[m, n] * 2, reverse)\n"
      "g[m] = x[m, t[m] + 1 - 1]\n"
      "total = sum((m, n), x[m, n])\n",
      d);
  const Cost c = default_cost(p, {{"M", 3}, {"N", 5}});
  CHECK(c.bytes == 3 * 5 * 4 + 3 * 8 + 3 * 5 * 4 + 3 * 8 + 4);
  CHECK(c.flops == 3 * 5 * 2 + 0 + 3 * 5);
}
