// What the timing stage times: format 1's sizes, format 2's points with their bytes and FLOPs.
#include <doctest/doctest.h>

#include <filesystem>
#include <stdexcept>

#include "plan/case_shapes.hpp"
#include "plan/timed_points.hpp"
#include "spec/spec.hpp"

namespace fs = std::filesystem;

namespace {
const fs::path kRoot = fs::path(KQ_SOURCE_DIR);
}

TEST_CASE("format 1: the sizes, each an element count with its bytes") {
  const kq::Spec spec = kq::load_spec(kRoot / "specs/residual_relu.yaml");
  const auto all = kq::timed_points(spec);
  REQUIRE(all.size() == spec.timing.sizes.size());
  const auto two = kq::timed_points(spec, {4096, 1 << 20});
  REQUIRE(two.size() == 2);
  CHECK(two[0].size == 4096);
  CHECK(two[0].point.empty());
  CHECK(two[0].where() == "4096 elements");
  CHECK(two[0].bytes == 3 * 4 * 4096.0);  // x and residual read, out written, f32
  CHECK(two[0].c.shape == std::vector<std::int64_t>{4096});
}

TEST_CASE("format 2: points numbered in the spec's order, named, costed; a subset by number") {
  const kq::Spec spec = kq::load_spec(kRoot / "tests/data/specs_v2/softmax.yaml");
  const auto all = kq::timed_points(spec);
  REQUIRE(all.size() == 2);
  CHECK(all[0].size == 1);
  CHECK(all[0].point == "M=32768,N=4096");
  CHECK(all[0].where() == "M=32768,N=4096");
  CHECK(all[1].point == "M=4096,N=16384");
  CHECK(all[0].c.dims == std::vector<std::int64_t>{32768, 4096});
  CHECK(all[0].bytes == 2.0 * 2 * 32768 * 4096);  // bf16 x read, y written
  CHECK(all[0].flops > 0);
  const kq::CaseShapes shapes = kq::case_shapes(spec, all[0].c);
  CHECK(shapes.outputs[0].shape == std::vector<std::int64_t>{32768, 4096});

  const auto second = kq::timed_points(spec, {2});
  REQUIRE(second.size() == 1);
  CHECK(second[0].size == 2);
  CHECK_THROWS_AS(kq::timed_points(spec, {3}), std::invalid_argument);
  CHECK(kq::smallest_timing_point(spec) == 2);  // 2^26 elements against 2^27
}
