// Known-broken candidates and their declared rejections (core/qualify/expectation.hpp).
#include <doctest/doctest.h>

#include "qualify/expectation.hpp"

TEST_CASE("a declared rejection may list alternatives") {
  CHECK(kq::check_matches("values", "values"));
  CHECK(kq::check_matches("values|repeat_differs", "repeat_differs"));
  CHECK_FALSE(kq::check_matches("values|repeat_differs", "repeat"));
  CHECK_FALSE(kq::check_matches("", "values"));
}

TEST_CASE("a candidate counts as caught only when it failed by a check it declared") {
  CHECK(kq::caught_as_declared("rejected", "values", "values|repeat_differs"));
  CHECK(kq::caught_as_declared("hung", "hang", "hang"));
  CHECK_FALSE(kq::caught_as_declared("rejected", "input_modified", "values"));
  CHECK_FALSE(kq::caught_as_declared("qualified", "", "values"));
  CHECK(kq::caught_as_declared("crashed", "crash", ""));  // nothing declared: any failure
}

TEST_CASE("known-broken: the broken family, or any arm that declares its rejection") {
  kq::ArmIdentity id;
  id.family = "cuda_fused";
  CHECK_FALSE(kq::known_broken(id));
  id.family = "broken";
  CHECK(kq::known_broken(id));
  // A vendor variant known to be wrong (cudnn_pointwise_relu_fwd: relu(-0) = -0).
  id.family = "cudnn_graph";
  id.expected_rejection = "values";
  CHECK(kq::known_broken(id));
  CHECK(kq::known_broken("cudnn_graph", "values"));
  CHECK_FALSE(kq::known_broken("cudnn_graph", ""));
}
