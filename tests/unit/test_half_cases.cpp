// Half-precision specs end to end in core: the spec's dtype and compute fields, the cases
// planned for them, the values drawn (subnormals down to 2^-24, 65504 and overflow, exact ties),
// the reference's one rounding and the comparison's ulp line in 16 bits.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "expr/reference.hpp"
#include "kq/half.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/compare.hpp"
#include "qualify/values.hpp"
#include "spec/spec.hpp"
#include "test_support.hpp"

namespace {

using kq::DType;

kq::Spec shipped(const std::string& name) {
  return kq::load_spec(kq::test::source_dir() / "specs" / (name + ".yaml"));
}

std::vector<kq::Case> cases_of(const kq::Spec& spec) { return kq::plan_cases(spec, {false, true}); }

const kq::Case* find(const std::vector<kq::Case>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return &c;
  return nullptr;
}

// Input `k` of case `c` as doubles (each exactly the dtype's value).
std::vector<double> values(const kq::Case& c, int k, DType dt) {
  std::vector<unsigned char> raw(static_cast<std::size_t>(c.numel()) * kq::dtype_size(dt));
  kq::fill_input_values(c, k, dt, raw.data(), c.numel(), 0);
  std::vector<double> v(static_cast<std::size_t>(c.numel()));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = kq::load_as_double(dt, raw.data() + i * kq::dtype_size(dt));
  return v;
}

std::string spec_with(const std::string& dtype_lines) {
  return "kq_spec: 1\nop: t\n" + dtype_lines +
         "inputs: [x, y]\noutputs: [{name: out}]\nsemantics: x + y\ncompare: bitwise\n"
         "timing: {sizes: [4096]}\ndecision: {baseline: nvrtc_jit}\n";
}

}  // namespace

TEST_CASE("dtype f16 and bf16 are read, compute defaults to f32 for them and to the dtype else") {
  CHECK(kq::parse_spec(spec_with("dtype: bf16\n"), "t.yaml").op.compute == DType::f32);
  CHECK(kq::parse_spec(spec_with("dtype: f16\n"), "t.yaml").op.dtype == DType::f16);
  CHECK(kq::parse_spec(spec_with("dtype: f64\n"), "t.yaml").op.compute == DType::f64);
  CHECK(kq::parse_spec(spec_with("dtype: bf16\ncompute: bf16\n"), "t.yaml").op.compute ==
        DType::bf16);
  // Narrower than the dtype, or the other half format: an error naming file, line and field.
  for (const char* bad : {"dtype: f32\ncompute: f16\n", "dtype: bf16\ncompute: f16\n",
                          "dtype: f64\ncompute: f32\n"}) {
    INFO(bad);
    try {
      kq::parse_spec(spec_with(bad), "t.yaml");
      FAIL("accepted");
    } catch (const std::exception& e) {
      const std::string what = e.what();
      CHECK(what.find("t.yaml:4") != std::string::npos);
      CHECK(what.find("compute") != std::string::npos);
    }
  }
  const kq::Spec s = shipped("residual_relu_bf16");
  CHECK(s.op.dtype == DType::bf16);
  CHECK(s.op.compute == DType::f32);
}

TEST_CASE("half specs: 2- and 14-byte offsets, ties, and every value class at 9 elements too") {
  const auto cases = cases_of(shipped("residual_relu_f16"));
  for (const char* name :
       {"offset/x+2", "offset/out+14", "values/ties", "values/ties_n9", "values/denormal_n9",
        "values/overflow_n9", "values/nan_in_residual_n9", "values/inf_in_x"}) {
    INFO(name);
    const kq::Case* c = find(cases, name);
    REQUIRE(c != nullptr);
    CHECK(c->in_contract);
  }
  CHECK(find(cases, "values/ties_n9")->numel() == 9);
  // A single-input spec has no ties (there is no sum to put on a tie), and f32 specs none.
  CHECK(find(cases_of(shipped("gelu_f16")), "values/ties") == nullptr);
  CHECK(find(cases_of(shipped("residual_relu")), "values/ties") == nullptr);
  CHECK(find(cases_of(shipped("residual_relu")), "offset/x+2") == nullptr);
}

TEST_CASE("ties: x + residual lies exactly halfway between two neighbours of the dtype") {
  for (DType dt : {DType::f16, DType::bf16}) {
    const kq::Spec spec = shipped(dt == DType::f16 ? "residual_relu_f16" : "residual_relu_bf16");
    const auto cases = cases_of(spec);
    const kq::Case& c = *find(cases, "values/ties");
    const auto x = values(c, 0, dt), r = values(c, 1, dt);
    int away_from_zero = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double sum = x[i] + r[i];  // exact in double
      const double nearest = kq::round_to(dt, sum);
      const double other = nearest + 2.0 * (sum - nearest);
      INFO(kq::to_string(dt) << " element " << i << ": " << x[i] << " + " << r[i]);
      REQUIRE(nearest != sum);
      REQUIRE(kq::round_to(dt, other) == other);  // the neighbour on the other side
      away_from_zero += std::fabs(nearest) > std::fabs(sum);
    }
    // Nearest-even rounds away from zero about half the time, where truncation never does.
    CHECK(away_from_zero > static_cast<int>(x.size()) / 4);
  }
}

TEST_CASE("f16 values: subnormals down to 2^-24, the smallest normal, 65504 and overflow") {
  const auto cases = cases_of(shipped("residual_relu_f16"));
  const auto d = values(*find(cases, "values/denormal"), 0, DType::f16);
  CHECK(std::count(d.begin(), d.end(), std::ldexp(1.0, -24)) > 0);
  CHECK(std::count(d.begin(), d.end(), std::ldexp(1.0, -14)) > 0);
  CHECK(std::count_if(d.begin(), d.end(), [](double v) {
          return v != 0 && std::fabs(v) < std::ldexp(1.0, -14) &&
                 std::fabs(v) > std::ldexp(1.0, -24);
        }) > 0);
  const kq::Case& over = *find(cases, "values/overflow");
  const auto x = values(over, 0, DType::f16), r = values(over, 1, DType::f16);
  int overflows = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    CHECK(std::fabs(x[i]) <= 65504.0);
    overflows += std::isinf(kq::round_to(DType::f16, x[i] + r[i]));
  }
  CHECK(overflows > 0);
  // huge stays finite in f16 (1e4 to 2e4: sums too), and is 1e20 in bf16's float32 range.
  const auto h = values(*find(cases, "values/huge"), 0, DType::f16);
  CHECK(*std::max_element(h.begin(), h.end()) <= 2e4);
  const auto hb =
      values(*find(cases_of(shipped("residual_relu_bf16")), "values/huge"), 0, DType::bf16);
  CHECK(std::fabs(hb[0]) >= 0.99e20);
}

TEST_CASE("the reference rounds the float64 result once into f16 and bf16") {
  for (DType dt : {DType::f16, DType::bf16}) {
    const kq::Spec spec = shipped(dt == DType::f16 ? "residual_relu_f16" : "residual_relu_bf16");
    const auto cases = cases_of(spec);
    const kq::Case& c = *find(cases, "values/ties");
    std::vector<unsigned char> x(c.numel() * 2), r(c.numel() * 2), out(c.numel() * 2);
    kq::fill_input_values(c, 0, dt, x.data(), c.numel(), 0);
    kq::fill_input_values(c, 1, dt, r.data(), c.numel(), 0);
    const kq::TensorView in[] = {
        kq::TensorView::contiguous_1d(x.data(), c.numel(), dt, kq::Device::cpu),
        kq::TensorView::contiguous_1d(r.data(), c.numel(), dt, kq::Device::cpu)};
    kq::eval_reference(spec.op.semantics, in,
                       kq::TensorView::contiguous_1d(out.data(), c.numel(), dt, kq::Device::cpu));
    for (std::int64_t i = 0; i < c.numel(); ++i) {
      const double sum = kq::load_as_double(dt, &x[i * 2]) + kq::load_as_double(dt, &r[i * 2]);
      REQUIRE(kq::load_as_double(dt, &out[i * 2]) == kq::round_to(dt, sum > 0 ? sum : 0.0));
    }
  }
}

TEST_CASE("16-bit comparison: ulps on the 16-bit line, zeros equal, NaN as a mask") {
  const kq::CompareRule ulp1{kq::CompareRule::Kind::ulp, 1};
  const kq::CompareRule bitwise{};
  for (DType dt : {DType::f16, DType::bf16}) {
    const std::uint64_t one = dt == DType::f16 ? 0x3c00 : 0x3f80;
    CHECK(kq::element_matches(ulp1, dt, one, one + 1));
    CHECK_FALSE(kq::element_matches(ulp1, dt, one, one + 2));
    CHECK(kq::element_matches(ulp1, dt, 0x0000, 0x8000));  // -0 and +0: 0 apart
    CHECK(kq::element_matches(ulp1, dt, 0x0001, 0x8000));  // across zero: 1 apart
    CHECK_FALSE(kq::element_matches(bitwise, dt, 0x0000, 0x8000));
    const std::uint64_t nan = dt == DType::f16 ? 0x7e00 : 0x7fc0;
    CHECK(kq::element_matches(bitwise, dt, nan, nan | 0x8000));
    CHECK(kq::bits_to_double(dt, one) == 1.0);
  }
  CHECK(kq::describe_bits(DType::f16, 0x3c00) == "1 (0x3c00)");
  CHECK(kq::describe_bits(DType::bf16, 0xc049) == "-3.1406 (0xc049)");
}
