// The stopping rule of the timing stage on synthetic samples.
#include <doctest/doctest.h>

#include "noisy_samples.hpp"
#include "spec_fixture.hpp"
#include "timing/stopping.hpp"

using kq::test::noisy;

TEST_CASE("never before min_rounds, then as soon as the speed-up is known to the threshold") {
  kq::Spec spec = kq::test::residual_relu_spec();  // min_rounds 10, min_speedup 1.03
  std::map<std::string, std::vector<double>> s;
  s["nvrtc_jit"] = noisy(1e-3, 0.001, 5, 1);
  s["fast"] = noisy(0.9e-3, 0.001, 5, 2);
  CHECK(kq::stop_reason(s, spec, 5, 0.1).empty());
  s["nvrtc_jit"] = noisy(1e-3, 0.001, 12, 1);
  s["fast"] = noisy(0.9e-3, 0.001, 12, 2);
  CHECK(kq::stop_reason(s, spec, 12, 0.1) == "confidence");
}

TEST_CASE("noisy samples run on to the round or time limit") {
  kq::Spec spec = kq::test::residual_relu_spec();
  std::map<std::string, std::vector<double>> s;
  s["nvrtc_jit"] = noisy(1e-3, 0.5, 40, 1);
  s["fast"] = noisy(1e-3, 0.5, 40, 2);
  CHECK(kq::stop_reason(s, spec, 40, 1.0).empty());
  CHECK(kq::stop_reason(s, spec, spec.timing.max_rounds, 1.0) == "max_rounds");
  CHECK(kq::stop_reason(s, spec, 40, spec.timing.max_seconds) == "max_seconds");
}

TEST_CASE("without the baseline, each arm's own median must be known to the threshold") {
  kq::Spec spec = kq::test::residual_relu_spec();
  std::map<std::string, std::vector<double>> s;
  s["cpu_tbb"] = noisy(1e-3, 0.002, 30, 3);
  CHECK(kq::stop_reason(s, spec, 30, 1.0) == "confidence");
  s["cpu_tbb"] = noisy(1e-3, 0.6, 30, 3);
  CHECK(kq::stop_reason(s, spec, 30, 1.0).empty());
}

TEST_CASE("--quick caps the rounds, the seconds and the warm-up, never below min_rounds") {
  kq::TimingPolicy t;
  t.min_rounds = 10;
  t.max_rounds = 200;
  t.max_seconds = 30;
  t.warmup_ms = 50;
  kq::quick_timing(t);
  CHECK(t.max_rounds == 50);
  CHECK(t.max_seconds == 5.0);
  CHECK(t.warmup_ms == 20.0);
  kq::TimingPolicy few;
  few.min_rounds = 80;
  few.max_rounds = 100;
  few.max_seconds = 2;
  kq::quick_timing(few);
  CHECK(few.max_rounds == 80);
  CHECK(few.max_seconds == 2.0);
}
