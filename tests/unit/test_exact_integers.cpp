// Cases of small integers compare exactly where the program keeps every value an exact integer
// (qualify/exact_integers.hpp): which programs qualify, how output_rules applies it (ulp 0,
// bitwise rules left bitwise), and that cpu_tbb meets the exact rule on specs that qualify.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "indexed/parser.hpp"
#include "kq/plugin_api.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/compare.hpp"
#include "qualify/exact_integers.hpp"
#include "qualify/run_case.hpp"
#include "spec/spec.hpp"

namespace {

namespace fs = std::filesystem;
using kq::DType;
using kq::ix::Role;

// Whether output `y` (or `r`, whichever `text` assigns) of `text` is exact at M = 3 and N = n.
bool exact(const std::string& text, std::int64_t n, DType y = DType::f32,
           DType compute = DType::f32, double param = 2.0) {
  const bool rows = text.rfind("y[", 0) == 0 || text.find("\ny[") != std::string::npos;
  kq::ix::Declarations d;
  d.dims = {{"M", kq::ix::DimKind::free}, {"N", kq::ix::DimKind::reduced}};
  d.params = {{"a", param}};
  d.tensors = {{"x", Role::input, DType::bf16, {"M", "N"}},
               {"t", Role::input, DType::i64, {"M"}},
               rows ? kq::ix::TensorDecl{"y", Role::output, y, {"M", "N"}}
                    : kq::ix::TensorDecl{"r", Role::output, y, {"M"}},
               {"tmp", Role::temporary, DType::f64, {"M"}}};
  const kq::ix::ParseResult p = kq::ix::parse_program(text, d);
  INFO(text << ": " << (p.error ? p.error->text() : ""));
  REQUIRE(p.program);
  return kq::exact_integer_output(*p.program, 2, {3, n}, compute);
}

kq::PlanOptions quick() {
  kq::PlanOptions o;
  o.quick = true;
  o.include_huge = false;
  return o;
}

const kq::Case& named(const std::vector<kq::Case>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return c;
  FAIL("no case " << name);
  throw std::logic_error("unreachable");
}

kq::Spec spec_at(const char* path) { return kq::load_spec(fs::path(KQ_SOURCE_DIR) / path); }

kq::IKernelArm& cpu_tbb() {
  static kq::ArmList arms = [] {
    kq::ArmList a;
    const std::string path = std::string(KQ_BIN_DIR) + "/plugins/libkq_cpu.so";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: the arms live in it
    REQUIRE_MESSAGE(h, "dlopen " << path << ": " << dlerror());
    if (void* sym = dlsym(h, "kq_create_arms"))
      reinterpret_cast<void (*)(kq::ArmList&)> (*static_cast<const void* const*>(sym))(a);
    return a;
  }();
  for (const auto& a : arms)
    if (a->identity().name == "cpu_tbb") return *a;
  FAIL("no cpu_tbb");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("which programs keep small integers exact") {
  // Sums, scans, maxima, integer arithmetic, comparisons, selects, gathers.
  CHECK(exact("r[m] = sum(n, x[m, n])", 4097));
  CHECK(exact("y[m, n] = cumsum(n, x[m, n], exclusive)", 4097));
  CHECK(exact("r[m] = max(n, x[m, n]) - min(n, x[m, n])", 4097));
  CHECK(exact("y[m, n] = max(x[m, n], 0) + relu(x[m, n]) - abs(x[m, n]) * 2 + -x[m, n]", 33));
  CHECK(exact("y[m, n] = select(x[m, n] > 0, x[m, n], clamp(x[m, n], -1, 1)) * a", 33));
  CHECK(exact("r[m] = sum(n, x[m, n] * x[m, n] * x[m, n])", 4097));  // 27 * 4097 < 2^24
  CHECK(exact("r[m] = x[m, t[m]] + t[m] + argmax(n, x[m, n]) + N + m", 33));
  CHECK(exact("tmp[m] = sum(n, x[m, n])\nr[m] = tmp[m] * tmp[m]", 33));
  // Magnitudes: the output's dtype, the compute type, the partial sums.
  CHECK_FALSE(exact("r[m] = sum(n, x[m, n])", 4097, DType::bf16));  // 3 * 4097 > 2^8
  CHECK(exact("r[m] = sum(n, x[m, n])", 33, DType::bf16));          // 99 <= 256
  CHECK_FALSE(exact("r[m] = sum(n, x[m, n])", 4097, DType::f32, DType::bf16));
  CHECK_FALSE(exact("r[m] = sum(n, x[m, n] * x[m, n] * x[m, n])", 1 << 20));
  CHECK_FALSE(exact("tmp[m] = sum(n, x[m, n])\nr[m] = tmp[m] * tmp[m]", 4097));  // 1.5e8
  // Anything that rounds: division, functions, products, non-integer constants.
  CHECK_FALSE(exact("r[m] = sum(n, x[m, n]) / N", 33));
  CHECK_FALSE(exact("y[m, n] = exp(x[m, n])", 33));
  CHECK_FALSE(exact("y[m, n] = sqrt(abs(x[m, n]))", 33));
  CHECK_FALSE(exact("r[m] = prod(n, x[m, n])", 33));
  CHECK_FALSE(exact("y[m, n] = cumprod(n, x[m, n])", 33));
  CHECK_FALSE(exact("y[m, n] = x[m, n] * 0.5", 33));
  CHECK_FALSE(exact("y[m, n] = x[m, n] * a", 33, DType::f32, DType::f32, 0.5));
  // Through a temporary that rounds.
  CHECK_FALSE(exact("tmp[m] = sum(n, x[m, n]) / N\ny[m, n] = x[m, n] - tmp[m]", 33));
  CHECK(exact("tmp[m] = sum(n, x[m, n])\ny[m, n] = x[m, n] - tmp[m]", 33));
}

TEST_CASE(
    "output_rules: exact outputs of an integers case compare as ulp 0; the others keep theirs") {
  struct Expect {
    const char* spec;
    std::vector<bool> exact;  // by output
  };
  for (const Expect& e : {Expect{"tests/data/specs_v2/cumsum_exclusive.yaml", {true}},
                          Expect{"tests/data/specs_v2/cumsum_reverse.yaml", {true, false}},
                          Expect{"tests/data/specs_v2/group_sum.yaml", {true, false}},
                          Expect{"tests/data/specs_v2/softmax.yaml", {false}},
                          Expect{"tests/data/specs_v2/layer_norm.yaml", {false, false, false}},
                          Expect{"tests/data/specs_v2/argmax.yaml", {false}},
                          Expect{"specs/kernelbench/47_sum_reduction.yaml", {true}}}) {
    CAPTURE(e.spec);
    const kq::Spec spec = spec_at(e.spec);
    const auto cases = kq::plan_cases(spec, quick());
    int integers = 0;
    for (const kq::Case& c : cases) {
      if (c.values != kq::ValueClass::integers) continue;
      ++integers;
      CAPTURE(c.name);
      const std::vector<kq::OutputRule> rules = kq::output_rules(spec, c);
      // The same point with values of another class: the spec's own rules.
      const std::vector<kq::OutputRule> plain =
          kq::output_rules(spec, named(cases, "values/spikes" + c.name.substr(c.name.find('@'))));
      REQUIRE(rules.size() == e.exact.size());
      for (std::size_t o = 0; o < rules.size(); ++o) {
        CAPTURE(o);
        CHECK(rules[o].exact == e.exact[o]);
        if (!e.exact[o]) {
          CHECK(rules[o].rule.kind == plain[o].rule.kind);
          CHECK(rules[o].by_bound() == plain[o].by_bound());
          continue;
        }
        CHECK(rules[o].rule.kind == kq::CompareRule::Kind::ulp);
        CHECK(rules[o].rule.max_ulp == 0);
        CHECK_FALSE(rules[o].by_bound());
      }
    }
    CHECK(integers == 2);  // long rows and short ones
  }
}

TEST_CASE(
    "the exact rule: one ulp off fails where the tolerance would pass; zeros of either sign") {
  const kq::Spec spec = spec_at("tests/data/specs_v2/cumsum_exclusive.yaml");
  const auto cases = kq::plan_cases(spec, quick());
  const kq::OutputRule exact =
      kq::output_rules(spec, named(cases, "values/integers@M=3,N=4097"))[0];
  const kq::OutputRule mixed = kq::output_rules(spec, named(cases, "values/spikes@M=3,N=4097"))[0];
  REQUIRE(exact.exact);
  auto bits = [](float f) { return static_cast<std::uint64_t>(std::bit_cast<std::uint32_t>(f)); };
  const float want = 1234.0f, off = std::nextafter(want, 2e3f);
  CHECK_FALSE(kq::element_matches(exact, DType::f32, 0.0, bits(want), bits(off)));
  CHECK(kq::element_matches(mixed, DType::f32, 0.0, bits(want), bits(off)));
  CHECK(kq::element_matches(exact, DType::f32, 0.0, bits(want), bits(want)));
  CHECK(kq::element_matches(exact, DType::f32, 0.0, bits(0.0f), bits(-0.0f)));
}

TEST_CASE("cpu_tbb meets the exact rule on the integers cases of the specs that qualify") {
  for (const char* path :
       {"tests/data/specs_v2/cumsum_exclusive.yaml", "specs/kernelbench/47_sum_reduction.yaml",
        "specs/kernelbench/89_cumsum.yaml"}) {
    const kq::Spec spec = spec_at(path);
    const auto cases = kq::plan_cases(spec, quick());
    for (const kq::Case& c : cases) {
      if (c.values != kq::ValueClass::integers) continue;
      const kq::CaseOutcome o = kq::run_case(cpu_tbb(), kq::Device::cpu, spec, c);
      INFO(std::string(path) << " " << c.name << ": " << o.check << " " << o.message);
      CHECK(o.result == kq::CaseOutcome::Result::passed);
    }
  }
}
