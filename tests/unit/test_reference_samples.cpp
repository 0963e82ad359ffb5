// Format-2 cases above the reference's cost budget are checked at sampled coordinates
// (qualify/reference_samples.hpp): the samples' structure (corners, block boundaries, the
// 32-bit wraps), the budget and its override, the sampled reference equal bit for bit to the
// full one at the samples (values and accumulation bounds), and qualification on the sampled
// path under a small budget: cpu_tbb passes, a skipped row tail and a one-pass variance are
// caught at sampled elements, and the record says how many were compared.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "indexed/evaluate.hpp"
#include "indexed/parser.hpp"
#include "kq/half.hpp"
#include "kq/plugin_api.hpp"
#include "plan/case_shapes.hpp"
#include "plan/plan_cases.hpp"
#include "plan/plan_shaped.hpp"
#include "plan/shape_points.hpp"
#include "qualify/case_data.hpp"
#include "qualify/compare.hpp"
#include "qualify/reference_samples.hpp"
#include "qualify/run_case.hpp"
#include "record/records.hpp"
#include "spec/spec.hpp"

namespace {

namespace fs = std::filesystem;
const fs::path kV2 = fs::path(KQ_SOURCE_DIR) / "tests/data/specs_v2";

// KQ_REFERENCE_WORK_BUDGET for the scope of one test.
class Budget {
 public:
  explicit Budget(const char* value) { setenv("KQ_REFERENCE_WORK_BUDGET", value, 1); }
  ~Budget() { unsetenv("KQ_REFERENCE_WORK_BUDGET"); }
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;
};

kq::Case at(std::vector<std::int64_t> dims, std::uint64_t seed = 7) {
  kq::Case c;
  c.name = "test";
  c.dims = std::move(dims);
  c.seed = seed;
  return c;
}

const kq::Case& named(const std::vector<kq::Case>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return c;
  FAIL("no case " << name);
  throw std::logic_error("unreachable");
}

kq::PlanOptions quick() {
  kq::PlanOptions o;
  o.quick = true;
  o.include_huge = false;
  return o;
}

const char* kRowSum = R"yaml(kq_spec: 2
op: row_sum
dims: {M: free, N: reduced}
inputs: {x: {dtype: f32, shape: [M, N]}}
outputs: {y: {dtype: f32, shape: [M]}}
semantics: "y[m] = sum(n, x[m, n])"
compare: {y: {bound: accumulation}}
timing: {points: [{M: 4, N: 4}]}
decision: {baseline: cpu_tbb}
)yaml";

kq::ArmList load_arms(const std::string& path) {
  kq::ArmList a;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: the arms live in it
  if (!h) {
    MESSAGE("dlopen " << path << ": " << dlerror());
    return a;
  }
  if (void* sym = dlsym(h, "kq_create_arms"))
    reinterpret_cast<void (*)(kq::ArmList&)> (*static_cast<const void* const*>(sym))(a);
  return a;
}

kq::IKernelArm& arm_named(const std::string& name) {
  static const kq::ArmList arms = [] {
    kq::ArmList all;
    for (const char* p : {"/plugins/libkq_broken_cpu.so", "/plugins/libkq_cpu.so"})
      for (auto& a : load_arms(std::string(KQ_BIN_DIR) + p)) all.push_back(std::move(a));
    return all;
  }();
  for (const auto& a : arms)
    if (a->identity().name == name) return *a;
  FAIL("no arm named " << name);
  throw std::logic_error("unreachable");
}

// cpu_tbb with one element of output 0 made wrong by a relative 1e-3 after every run: at
// logical index `bad`.
class OneWrong final : public kq::IKernelArm {
 public:
  OneWrong(kq::IKernelArm& inner, std::int64_t bad) : inner_(inner), bad_(bad) {}
  kq::ArmIdentity identity() const override { return inner_.identity(); }
  kq::Status supports(const kq::OpSpec& spec) const override { return inner_.supports(spec); }
  kq::Status prepare(const kq::Problem& problem) override { return inner_.prepare(problem); }
  kq::Status run(std::span<const kq::TensorView> inputs, std::span<const kq::TensorView> outputs,
                 void* stream) override {
    const kq::Status st = inner_.run(inputs, outputs, stream);
    const kq::TensorView& y = outputs[0];
    std::int64_t offset = 0, rest = bad_;
    for (int d = y.rank - 1; d >= 0; --d) {
      offset += (rest % y.shape[d]) * y.strides[d];
      rest /= y.shape[d];
    }
    auto* p =
        static_cast<char*>(y.data) + offset * static_cast<std::int64_t>(kq::dtype_size(y.dtype));
    kq::store_rounded(y.dtype, kq::load_as_double(y.dtype, p) * (1 + 1e-3), p);
    return st;
  }

 private:
  kq::IKernelArm& inner_;
  std::int64_t bad_;
};

}  // namespace

TEST_CASE("evaluate_at_with_bounds gives the full evaluation's values and bounds") {
  kq::ix::Declarations d;
  d.dims = {{"M", kq::ix::DimKind::free}, {"N", kq::ix::DimKind::reduced}};
  d.tensors = {{"x", kq::ix::Role::input, kq::DType::f32, {"M", "N"}},
               {"mx", kq::ix::Role::temporary, kq::DType::f32, {"M"}},
               {"s", kq::ix::Role::temporary, kq::DType::f32, {"M"}},
               {"y", kq::ix::Role::output, kq::DType::bf16, {"M", "N"}},
               {"c", kq::ix::Role::output, kq::DType::f32, {"M", "N"}},
               {"total", kq::ix::Role::output, kq::DType::f32, {}}};
  const kq::ix::ParseResult r = kq::ix::parse_program(
      "mx[i] = max(j, x[i, j])\n"
      "s[i] = sum(j, exp(x[i, j] - mx[i]))\n"
      "y[i, j] = exp(x[i, j] - mx[i]) / s[i]\n"
      "c[i, j] = cumsum(j, y[i, j] * x[i, j], reverse)\n"
      "total = sum((i, j), x[i, j] * y[i, j])\n",
      d);
  REQUIRE(r.program);
  const std::int64_t m = 9, n = 301;
  std::vector<double> x(static_cast<std::size_t>(m * n));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i)) * 3.0;
  const kq::ix::DimValues dims = {{"M", m}, {"N", n}};
  const kq::ix::Tensors in = {{"x", kq::ix::Buffer::of(kq::DType::f32, {m, n}, x)}};
  const int outputs[] = {3, 4, 5};
  const kq::ix::Evaluation full = kq::ix::evaluate_with_bounds(*r.program, dims, in, outputs);
  std::vector<kq::ix::Sample> samples = {{"y", {0, 0}}, {"c", {8, 300}}, {"total", {}}};
  for (std::int64_t k = 0; k < 60; ++k)
    samples.push_back({k % 2 ? "y" : "c", {(k * 5) % m, (k * 37) % n}});
  // Every element on demand; the rows' max and sum whole first; everything whole first.
  for (const std::int64_t eager : {std::int64_t{0}, m, kq::ix::kEagerElements}) {
    CAPTURE(eager);
    const kq::ix::SampledEvaluation got =
        kq::ix::evaluate_at_with_bounds(*r.program, dims, in, samples, eager);
    REQUIRE(got.values.size() == samples.size());
    REQUIRE(got.bounds.size() == samples.size());
    CHECK(kq::ix::evaluate_at(*r.program, dims, in, samples, eager) == got.values);
    for (std::size_t k = 0; k < samples.size(); ++k) {
      std::int64_t linear = 0;
      for (std::size_t j = 0; j < samples[k].coord.size(); ++j)
        linear = linear * (j == 0 ? m : n) + samples[k].coord[j];
      INFO("sample ", k, " of ", samples[k].output);
      CHECK(std::bit_cast<std::uint64_t>(got.values[k]) ==
            std::bit_cast<std::uint64_t>(full.outputs.at(samples[k].output).get(linear)));
      CHECK(std::bit_cast<std::uint64_t>(got.bounds[k]) ==
            std::bit_cast<std::uint64_t>(full.bounds.at(samples[k].output).get(linear)));
    }
  }
}

// A temporary as large as the inputs is not remembered but computed where read, a run of
// neighbours at a time (LazyStore::computed_run): a scalar loss through it, on demand, is the full
// walk's bits.
TEST_CASE("a loss through a temporary as large as its input, sampled, is the full walk's") {
  kq::ix::Declarations d;
  d.dims = {{"M", kq::ix::DimKind::reduced}, {"N", kq::ix::DimKind::reduced}};
  d.tensors = {{"p", kq::ix::Role::input, kq::DType::f32, {"M", "N"}},
               {"z", kq::ix::Role::temporary, kq::DType::f32, {"M", "N"}},
               {"loss", kq::ix::Role::output, kq::DType::f32, {}}};
  const kq::ix::ParseResult r = kq::ix::parse_program(
      "z[m, n] = abs(p[m, n] - 0.25 * n)\n"
      "loss = sum((m, n), select(z[m, n] < 1, 0.5 * z[m, n] * z[m, n], z[m, n] - 0.5)) / (M * N)\n",
      d);
  REQUIRE(r.program);
  // Rows of 131: runs of 64 stop at each row's end, not at a multiple of 64.
  const std::int64_t n = 131, m = 600;  // above kReduceChunk terms: chunks side by side
  std::vector<double> p(static_cast<std::size_t>(m * n));
  for (std::size_t i = 0; i < p.size(); ++i)
    p[i] = std::sin(0.37 * static_cast<double>(i)) * 3.0 + static_cast<double>(i % n) * 0.25;
  const kq::ix::DimValues dims = {{"M", m}, {"N", n}};
  const kq::ix::Tensors in = {{"p", kq::ix::Buffer::of(kq::DType::f32, {m, n}, p)}};
  const int outputs[] = {2};
  const kq::ix::Evaluation full = kq::ix::evaluate_with_bounds(*r.program, dims, in, outputs);
  const std::vector<kq::ix::Sample> samples = {{"loss", {}}};
  const kq::ix::SampledEvaluation got =
      kq::ix::evaluate_at_with_bounds(*r.program, dims, in, samples, 0);
  CHECK(std::bit_cast<std::uint64_t>(got.values.at(0)) ==
        std::bit_cast<std::uint64_t>(full.outputs.at("loss").get(0)));
  CHECK(std::bit_cast<std::uint64_t>(got.bounds.at(0)) ==
        std::bit_cast<std::uint64_t>(full.bounds.at("loss").get(0)));
}

TEST_CASE("an output's samples: corners, edges, block boundaries, the 32-bit wraps, random ones") {
  const kq::Spec spec = kq::load_spec(kV2 / "softmax_f32.yaml");
  const std::int64_t m = 524161, n = 4097;  // the huge point: M*N just above 2^31
  const auto samples = kq::reference_samples(spec, at({m, n}));
  REQUIRE(samples.size() == 1);
  const std::vector<std::int64_t>& s = samples[0];
  CHECK(std::is_sorted(s.begin(), s.end()));
  CHECK(std::adjacent_find(s.begin(), s.end()) == s.end());
  CHECK(s.front() >= 0);
  CHECK(s.back() < m * n);
  CHECK(static_cast<std::int64_t>(s.size()) >= kq::kReferenceSamples);
  CHECK(static_cast<std::int64_t>(s.size()) <= 2 * kq::kReferenceSamples);
  const std::set<std::int64_t> set(s.begin(), s.end());
  auto has = [&](std::int64_t i, std::int64_t j) { return set.count(i * n + j) == 1; };
  // Corners.
  CHECK(has(0, 0));
  CHECK(has(0, n - 1));
  CHECK(has(m - 1, 0));
  CHECK(has(m - 1, n - 1));
  // Along the row: around the block widths' multiples, the first row's and the last row's.
  for (std::int64_t j : {31, 32, 33, 127, 128, 1023, 1024, 4095, 4096}) {
    CAPTURE(j);
    CHECK(has(0, j));
    CHECK(has(m - 1, j));
  }
  // Along the rows: around multiples of 1024 and 4096.
  CHECK(has(1023, 0));
  CHECK(has(4096, n - 1));
  // Where 32-bit offsets wrap (2^31 lies in the last row), and that row's ends.
  const std::int64_t wrap = std::int64_t{1} << 31;
  CHECK(set.count(wrap - 1) == 1);
  CHECK(set.count(wrap) == 1);
  CHECK(has(wrap / n, 0));
  CHECK(has(wrap / n, n - 1));
  // Deterministic in the case; another seed draws other random ones.
  CHECK(kq::reference_samples(spec, at({m, n}))[0] == s);
  CHECK(kq::reference_samples(spec, at({m, n}, 8))[0] != s);
  // An output no larger than the count is taken whole.
  const auto small = kq::reference_samples(spec, at({3, 1000}))[0];
  REQUIRE(small.size() == 3000);
  CHECK(small.back() == 2999);
}

TEST_CASE("a reduction's output is sampled at the rows where its input's offsets wrap") {
  const kq::Spec spec = kq::parse_spec(kRowSum, "row_sum.yaml");
  const std::int64_t m = 1200000, n = 4097;  // x wraps 2^31 at row 524160, 2^32 at 1048320
  const auto y = kq::reference_samples(spec, at({m, n}))[0];
  const std::set<std::int64_t> set(y.begin(), y.end());
  for (std::int64_t w : {std::int64_t{1} << 31, std::int64_t{1} << 32}) {
    CAPTURE(w);
    CHECK(set.count(w / n) == 1);
    CHECK(set.count(w / n + 1) == 1);
  }
}

TEST_CASE("the budget: transformer shapes whole, the huge points sampled; the override") {
  const kq::Spec softmax = kq::load_spec(kV2 / "softmax_f32.yaml");
  const kq::Spec layer_norm = kq::load_spec(kV2 / "layer_norm.yaml");
  for (const kq::Spec* s : {&softmax, &layer_norm}) {
    CAPTURE(s->shaped->program->decls.tensors.size());
    CHECK_FALSE(kq::reference_sampled(*s, at({32768, 4096})));
    CHECK_FALSE(kq::reference_sampled(*s, at({1, (std::int64_t{1} << 24) + 1})));
    // The full plan's point with a tensor above 2^31 elements.
    kq::ShapePlanOptions o;
    o.max_elements = kq::kShapedPointElements;
    int huge = 0;
    for (const kq::ShapePoint& p : kq::plan_shape_points(*s->shaped, o)) {
      std::vector<std::int64_t> dims;
      for (const auto& [name, v] : p.dims) dims.push_back(v);
      if (kq::largest_tensor_elements(*s->shaped, dims) <= kq::kHugePointElements) continue;
      ++huge;
      CAPTURE(p.name);
      CHECK(kq::reference_sampled(*s, at(dims)));
    }
    CHECK(huge == 1);
  }
  // Work: per element of each statement, one and its FLOPs.
  const kq::Spec row_sum = kq::parse_spec(kRowSum, "row_sum.yaml");
  CHECK(kq::reference_work(*row_sum.op.program, {3, 100}) == 3 * (1 + 100));
  CHECK(kq::reference_work_budget() == kq::kReferenceWorkBudget);
  CHECK_FALSE(kq::reference_sampled(softmax, at({7, 1025})));
  {
    const Budget small("1000");
    CHECK(kq::reference_work_budget() == 1000.0);
    CHECK(kq::reference_sampled(softmax, at({7, 1025})));
    CHECK_FALSE(kq::reference_sampled(softmax, at({3, 10})));
    const auto rules = kq::output_rules(softmax, at({7, 1025}));
    REQUIRE(rules[0].sampled());
    CHECK(rules[0].compared(7 * 1025) == kq::kReferenceSamples);
  }
  CHECK_FALSE(kq::reference_sampled(softmax, at({7, 1025})));
}

TEST_CASE("a sampled case's data holds the full reference's values and bounds at its samples") {
  for (const char* file : {"softmax_f32.yaml", "layer_norm.yaml"}) {
    CAPTURE(file);
    const kq::Spec spec = kq::load_spec(kV2 / file);
    const auto cases = kq::plan_cases(spec, quick());
    const kq::Case& c = named(cases, "values/spikes@M=3,N=4097");
    const kq::CaseDataLayout full_layout(spec, c);
    std::vector<unsigned char> full(full_layout.total_bytes());
    kq::compute_case_data(spec, c, full_layout, full.data());

    const Budget small("1000");
    const std::vector<kq::OutputRule> rules = kq::output_rules(spec, c);
    const kq::CaseDataLayout layout(spec, c);
    std::vector<unsigned char> data(layout.total_bytes());
    kq::compute_case_data(spec, c, layout, data.data());
    const kq::CaseShapes shapes = kq::case_shapes(spec, c);
    for (std::size_t o = 0; o < layout.outputs(); ++o) {
      CAPTURE(o);
      REQUIRE(rules[o].sampled());
      const std::vector<std::int64_t>& s = *rules[o].samples;
      const std::size_t es = kq::dtype_size(shapes.outputs[o].dtype);
      CHECK(layout.reference_bytes(o) == s.size() * es);
      CHECK(static_cast<std::int64_t>(s.size()) <= shapes.outputs[o].numel());
      for (int g = 0; g < kq::kGenerations; ++g)
        for (std::size_t k = 0; k < s.size(); ++k) {
          const auto i = static_cast<std::size_t>(s[k]);
          CHECK(std::memcmp(data.data() + layout.reference_offset(g, o) + k * es,
                            full.data() + full_layout.reference_offset(g, o) + i * es, es) == 0);
          if (layout.bound_bytes(o) == 0) continue;
          CHECK(std::memcmp(data.data() + layout.bound_offset(g, o) + k * 8,
                            full.data() + full_layout.bound_offset(g, o) + i * 8, 8) == 0);
        }
    }
  }
}

TEST_CASE("on the sampled path cpu_tbb qualifies, and a skipped tail or one-pass variance fails") {
  const Budget small("1000");
  struct Run {
    std::string spec, arm, case_name;
    bool passes;
  };
  for (const Run& r : {
           Run{"softmax_f32.yaml", "cpu_tbb", "conduct/M=7,N=1025", true},
           Run{"softmax_f32.yaml", "cpu_tbb", "values/spikes@M=3,N=4097", true},
           Run{"softmax_f32.yaml", "broken_cpu_softmax_tail_skipped", "conduct/M=7,N=1025", false},
           Run{"layer_norm.yaml", "cpu_tbb", "values/offset_rows@M=3,N=4097", true},
           Run{"layer_norm.yaml", "broken_cpu_layer_norm_one_pass", "values/offset_rows@M=3,N=4097",
               false},
       }) {
    const kq::Spec spec = kq::load_spec(kV2 / r.spec);
    const auto cases = kq::plan_cases(spec, quick());
    const kq::Case& c = named(cases, r.case_name);
    const kq::CaseOutcome o = kq::run_case(arm_named(r.arm), kq::Device::cpu, spec, c);
    MESSAGE(r.arm << " on " << r.spec << " " << r.case_name << ": "
                  << std::string(kq::to_string(o.result)) << " " << o.check << " " << o.message);
    CHECK(o.sampled_elements > 0);
    if (r.passes) {
      CHECK(o.result == kq::CaseOutcome::Result::passed);
      continue;
    }
    CHECK(o.result == kq::CaseOutcome::Result::failed);
    CHECK(o.check == "values");
    CHECK(o.message.find("sampled elements") != std::string::npos);
  }
}

TEST_CASE("a wrong element at a sampled block boundary is caught; one between samples is not") {
  const Budget small("1000");
  const kq::Spec spec = kq::load_spec(kV2 / "softmax_f32.yaml");
  const auto cases = kq::plan_cases(spec, quick());
  const kq::Case& c = named(cases, "values/spikes@M=3,N=4097");
  const auto rules = kq::output_rules(spec, c);
  REQUIRE(rules[0].sampled());
  const std::set<std::int64_t> sampled(rules[0].samples->begin(), rules[0].samples->end());
  const std::int64_t boundary = 2 * 4097 + 1024;  // the last row, the element after 1024
  REQUIRE(sampled.count(boundary) == 1);
  std::int64_t between = 4097 + 2000;
  while (sampled.count(between) == 1) ++between;

  OneWrong at_boundary(arm_named("cpu_tbb"), boundary);
  const kq::CaseOutcome o = kq::run_case(at_boundary, kq::Device::cpu, spec, c);
  MESSAGE(o.message);
  CHECK(o.result == kq::CaseOutcome::Result::failed);
  CHECK(o.check == "values");
  CHECK(o.index == boundary);
  CHECK(o.bad_count == 1);
  CHECK(o.message.find("1 of 4096 sampled elements (of 12291)") != std::string::npos);

  // What sampling gives up: an element between the samples is not compared (the full reference
  // catches it).
  OneWrong off_samples(arm_named("cpu_tbb"), between);
  CHECK(kq::run_case(off_samples, kq::Device::cpu, spec, c).result ==
        kq::CaseOutcome::Result::passed);
  unsetenv("KQ_REFERENCE_WORK_BUDGET");
  CHECK(kq::run_case(off_samples, kq::Device::cpu, spec, c).result ==
        kq::CaseOutcome::Result::failed);
}

TEST_CASE("the case record says how many elements were sampled; older records read without") {
  kq::rec::CaseResult r;
  r.arm = "a";
  r.case_name = "point/M=524161,N=4097";
  r.sampled_elements = 4301;
  const kq::rec::json j = r;
  CHECK(j.at("sampled_elements") == 4301);
  CHECK(j.get<kq::rec::CaseResult>().sampled_elements == 4301);
  kq::rec::json old = j;
  old.erase("sampled_elements");
  CHECK_FALSE(old.get<kq::rec::CaseResult>().sampled_elements.has_value());
}
