// cudnn_pointwise's plan sanity check without a GPU: it tells garbage from a working plan and is
// never stricter than the spec's own compare rule (a plan that gives 0 where gelu of a tiny f16
// input is 2^-24 is inside atol 1e-6, and was refused by the check alone on the H200).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

// The plugin's pure part, compiled into this test (plugins are not libraries to link against).
#include "../../plugins/cudnn_graph/spot_check.cpp"

using kq::CompareRule;
using kq::DType;
using kq::cudnn_graph::close_enough;

TEST_CASE("garbage is refused, a rounding difference is not") {
  CHECK(close_enough(1.0f, 1.0f, 1.0));
  CHECK(close_enough(1.00005f, 1.0f, 1.0));
  CHECK_FALSE(close_enough(1.1f, 1.0f, 1.0));
  CHECK_FALSE(close_enough(0.0f, 1.0f, 1.0));
  CHECK_FALSE(close_enough(std::numeric_limits<float>::quiet_NaN(), 1.0f, 1.0));
  CHECK(close_enough(std::numeric_limits<float>::quiet_NaN(),
                     std::numeric_limits<float>::quiet_NaN(), 1.0));
  CHECK_FALSE(close_enough(1.0f, std::numeric_limits<float>::infinity(), 1.0));
}

TEST_CASE("half: two ulps of the dtype, and one step of its subnormals") {
  CHECK(close_enough(1.0f + 0x1p-10f, 1.0f, 1.0, DType::f16));
  CHECK_FALSE(close_enough(1.0f + 0x1p-7f, 1.0f, 1.0, DType::f16));
  CHECK(close_enough(1.0f + 0x1p-7f, 1.0f, 1.0, DType::bf16));
  // gelu(1.2e-7) rounds to f16's smallest subnormal; 0 is one step away.
  CHECK(close_enough(0.0f, 0x1p-24f, 1.2e-7, DType::f16));
  CHECK_FALSE(close_enough(0.0f, 0x1p-22f, 1.2e-7, DType::f16));
}

TEST_CASE("whatever the spec's tolerance accepts passes") {
  CompareRule rule;
  rule.kind = CompareRule::Kind::tolerance;
  rule.atol = 1e-6;
  rule.rtol = 1e-3;
  CHECK(close_enough(0.0f, 0x1p-22f, 1e-7, DType::f16, rule));
  CHECK(close_enough(1.0009f, 1.0f, 1.0, DType::f32, rule));
  CHECK_FALSE(close_enough(1.01f, 1.0f, 1.0, DType::f32, rule));
}
