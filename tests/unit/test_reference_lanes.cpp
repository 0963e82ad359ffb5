// The float64 reference walks neighbouring elements (and a reduction's neighbouring terms) a run
// at a time (indexed/machine_lanes.cpp). It must give every element the bits of the walk one
// element at a time, its accumulation bound too, and name the same first element in error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "indexed/evaluate.hpp"
#include "indexed/machine.hpp"
#include "indexed/parser.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/case_data.hpp"
#include "qualify/reference_samples.hpp"
#include "spec/spec.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = KQ_SOURCE_DIR;

// Sets the walk for the scope, and back to runs (the default) after.
struct Lanes {
  explicit Lanes(bool on) { kq::ix::set_reference_lanes(on); }
  ~Lanes() { kq::ix::set_reference_lanes(true); }
};

std::vector<unsigned char> case_data(const kq::Spec& spec, const kq::Case& c, bool lanes) {
  const Lanes walk(lanes);
  const kq::CaseDataLayout layout(spec, c);
  std::vector<unsigned char> data(layout.total_bytes());
  kq::compute_case_data(spec, c, layout, data.data());
  return data;
}

// Every shipped format-2 spec.
std::vector<fs::path> shaped_specs() {
  std::vector<fs::path> out;
  for (const char* dir : {"specs", "specs/kernelbench", "specs/gemm", "tests/data/specs_v2"})
    for (const auto& e : fs::directory_iterator(kRoot / dir))
      if (e.path().extension() == ".yaml" && kq::load_spec(e.path()).op.program)
        out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Up to `most` of the spec's in-contract cases of at most `elements` elements, spread over its
// plan (values, sizes, tails, points), the largest first among those that fit.
std::vector<kq::Case> some_cases(const kq::Spec& spec, std::int64_t elements, std::size_t most) {
  std::vector<kq::Case> fit;
  for (const kq::Case& c : kq::plan_cases(spec, {false, true}))
    if (c.in_contract && c.numel() <= elements) fit.push_back(c);
  std::vector<kq::Case> out;
  const std::size_t stride = std::max<std::size_t>(1, fit.size() / most);
  for (std::size_t i = 0; i < fit.size() && out.size() < most; i += stride) out.push_back(fit[i]);
  return out;
}

// What evaluating `text` over N = 100 gives: the output's values, or the error's text.
std::string outcome(const std::string& text, const kq::ix::Tensors& in, kq::DType out_dtype,
                    const std::vector<std::string>& out_dims, bool lanes) {
  using namespace kq::ix;
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"N", DimKind::free}};
  std::vector<Extent> y_shape(out_dims.begin(), out_dims.end());
  d.tensors = {{"x", Role::input, kq::DType::f64, {"M", "N"}},
               {"t", Role::input, kq::DType::i64, {"N"}},
               {"y", Role::output, out_dtype, y_shape}};
  ParseResult r = parse_program(text, d);
  INFO("error: ", r.error ? r.error->text() : "");
  REQUIRE(r.program.has_value());
  const Lanes walk(lanes);
  try {
    const Buffer y = evaluate(*r.program, {{"M", 3}, {"N", 100}}, in).at("y");
    std::string values;
    for (std::int64_t i = 0; i < y.numel(); ++i) values += std::to_string(y.get(i)) + " ";
    return values;
  } catch (const EvalError& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

TEST_CASE("an error inside a run names the element the one-by-one walk names") {
  using namespace kq::ix;
  std::vector<double> x(300), t(100);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 2.0 * static_cast<double>(i % 100);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>((i * 7) % 100);
  Tensors in = {{"x", Buffer::of(kq::DType::f64, {3, 100}, x)},
                {"t", Buffer::of(kq::DType::i64, {100}, t)}};
  in.at("t").set(37, 100);  // outside [0, N), and again further on in the same run
  in.at("t").set(50, -1);
  in.at("x").set(170, 3.0);  // y[1, 70] = 1.5 cannot be an i32
  struct Row {
    std::string text, want;
    kq::DType dtype;
    std::vector<std::string> dims;
  } rows[] = {
      {"y[m, n] = x[m, t[n]]",
       "at m = 0, n = 37: subscript 2 of 'x' is 100",
       kq::DType::f64,
       {"M", "N"}},
      {"y[m] = sum(n, x[m, t[n]])", "subscript 2 of 'x' is 100", kq::DType::f64, {"M"}},
      {"y[m, n] = x[m, n + 1]",
       "at m = 0, n = 99: subscript 2 of 'x' is 100",
       kq::DType::f64,
       {"M", "N"}},
      {"y[m] = sum(n, x[m, n] * x[m, 2 * n])", "subscript 2 of 'x' is 100", kq::DType::f64, {"M"}},
      {"y[m, n] = x[m, n] / 2", "output 'y' at [1, 70] is 1.5", kq::DType::i32, {"M", "N"}},
      // A short reduction walked across the output's lanes (a convolution's taps).
      {"y[m, n] = sum(k : 3, x[m, n + k] * 2)",
       "at m = 0, n = 98: subscript 2 of 'x' is 100",
       kq::DType::f64,
       {"M", "N"}},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    const std::string runs = outcome(r.text, in, r.dtype, r.dims, true);
    CHECK(runs == outcome(r.text, in, r.dtype, r.dims, false));
    CHECK(runs.find(r.want) != std::string::npos);
  }
  // Subscripts that step backwards, by two, or not evenly (a gather): no error, the same values.
  in.at("t").set(37, 5);
  in.at("t").set(50, 6);
  for (const std::string text : {"y[m, n] = x[m, N - 1 - n] * 3", "y[m, n] = x[m, n] + x[2 - m, n]",
                                 "y[m] = sum(n, x[m, t[n]] * x[m, N - 1 - n])"}) {
    CAPTURE(text);
    const std::vector<std::string> dims = text.starts_with("y[m] =")
                                              ? std::vector<std::string>{"M"}
                                              : std::vector<std::string>{"M", "N"};
    const std::string runs = outcome(text, in, kq::DType::f64, dims, true);
    CHECK(runs.find("error") == std::string::npos);
    CHECK(runs == outcome(text, in, kq::DType::f64, dims, false));
  }
  // An argmax stops at its first NaN: a term in error after it is never reached, run or not.
  // Every row's NaN at n = 5, a gather out of range at n = 37.
  in.at("t").set(37, 100);
  for (int m = 0; m < 3; ++m) in.at("x").set(100 * m + 5, std::nan(""));
  const std::string arg = "y[m] = argmax(n, x[m, n] + x[m, t[n]] * 0)";
  const std::string runs = outcome(arg, in, kq::DType::i64, {"M"}, true);
  CHECK(runs == "5.000000 5.000000 5.000000 ");
  CHECK(runs == outcome(arg, in, kq::DType::i64, {"M"}, false));
}

TEST_CASE("every shipped format-2 spec: the runs' reference and bounds are the one-by-one walk's") {
  const std::vector<fs::path> specs = shaped_specs();
  REQUIRE(specs.size() > 50);
  int compared = 0;
  for (const fs::path& path : specs) {
    const kq::Spec spec = kq::load_spec(path);
    for (const kq::Case& c : some_cases(spec, 20000, 12)) {
      CAPTURE(path.filename().string());
      CAPTURE(c.name);
      const std::vector<unsigned char> runs = case_data(spec, c, true);
      const std::vector<unsigned char> one = case_data(spec, c, false);
      REQUIRE(runs.size() == one.size());
      CHECK(std::memcmp(runs.data(), one.data(), runs.size()) == 0);
      ++compared;
    }
  }
  MESSAGE(compared << " cases of " << specs.size() << " specs compared");
  CHECK(compared > 500);
}

TEST_CASE("on the sampled path too: the samples' values and bounds are the one-by-one walk's") {
  // A budget this small sends every case with a reduction down the sampled path.
  ::setenv("KQ_REFERENCE_WORK_BUDGET", "1000", 1);
  int sampled = 0;
  for (const char* rel :
       {"specs/kernelbench/23_softmax.yaml", "specs/kernelbench/40_layer_norm.yaml",
        "specs/kernelbench/95_cross_entropy_loss.yaml", "specs/kernelbench/100_hinge_loss.yaml",
        "specs/kernelbench/89_cumsum.yaml"}) {
    const kq::Spec spec = kq::load_spec(kRoot / rel);
    for (const kq::Case& c : some_cases(spec, 200000, 6)) {
      if (!kq::reference_sampled(spec, c)) continue;
      CAPTURE(rel);
      CAPTURE(c.name);
      const std::vector<unsigned char> runs = case_data(spec, c, true);
      const std::vector<unsigned char> one = case_data(spec, c, false);
      CHECK(std::memcmp(runs.data(), one.data(), runs.size()) == 0);
      ++sampled;
    }
  }
  ::unsetenv("KQ_REFERENCE_WORK_BUDGET");
  CHECK(sampled >= 10);
}
