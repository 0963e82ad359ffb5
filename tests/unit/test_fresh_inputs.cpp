// Fresh inputs under timed calls (timing/fresh_inputs.hpp, indexed/affected.hpp): after every
// change, the size's reference with the patch on it is, bit for bit, the full reference of the
// inputs as they are now (values and accumulation bounds), for every shipped spec and test spec,
// on a few cases of each group of a quick plan (the layouts among them); no two changes give the
// same contents; the affected region of a change is what each kind of statement reads; and the
// elements a check leaves unevaluated are accepted, and only those.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "indexed/affected.hpp"
#include "plan/case_shapes.hpp"
#include "plan/plan_cases.hpp"
#include "plan/timed_points.hpp"
#include "qualify/case_data.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/compare.hpp"
#include "qualify/shaped_reference.hpp"
#include "qualify/values.hpp"
#include "spec/spec.hpp"
#include "timing/fresh_inputs.hpp"
#include "timing/output_checks.hpp"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> spec_files() {
  std::vector<fs::path> out;
  const fs::path root(KQ_SOURCE_DIR);
  for (const char* dir : {"specs", "specs/kernelbench", "tests/data/specs_v2"})
    for (const auto& e : fs::directory_iterator(root / dir))
      if (e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

struct Reference {
  std::vector<kq::HostBytes> values;
  std::vector<std::vector<double>> bounds;
};

Reference reference_of(const kq::Spec& spec, const kq::Case& c, const kq::CaseTensors& t,
                       const std::vector<kq::OutputRule>& rules,
                       const std::vector<kq::TensorView>& inputs) {
  Reference r;
  std::vector<unsigned char*> dst;
  std::vector<double*> bounds;
  r.values.resize(t.outputs());
  r.bounds.resize(t.outputs());
  for (std::size_t o = 0; o < t.outputs(); ++o) {
    const auto n = static_cast<std::size_t>(rules[o].compared(t.output_view(o).numel()));
    r.values[o].resize(n * kq::dtype_size(t.dtype(o)));
    r.bounds[o].assign(rules[o].by_bound() ? n : 0, 0.0);
    dst.push_back(r.values[o].data());
    bounds.push_back(rules[o].by_bound() ? r.bounds[o].data() : nullptr);
  }
  kq::case_reference(spec, c, inputs, dst, bounds);
  return r;
}

std::uint64_t contents_hash(const kq::CaseTensors& t) {
  std::uint64_t h = 0;
  for (const kq::TensorView& v : t.input_views()) {
    const std::size_t es = kq::dtype_size(v.dtype);
    for (std::int64_t i = 0; i < v.numel(); ++i) {
      std::uint64_t bits = 0;
      std::memcpy(&bits,
                  static_cast<const unsigned char*>(v.data) +
                      kq::element_offset(v, i) * static_cast<std::int64_t>(es),
                  es);
      h = kq::splitmix64(h ^ bits ^ static_cast<std::uint64_t>(i));
    }
  }
  return h;
}

// Told from the shapes alone: the plan's large cases are never allocated.
bool small(const kq::Spec& spec, const kq::Case& c) {
  const kq::CaseShapes shapes = kq::case_shapes(spec, c);
  std::int64_t n = 0;
  for (const auto& t : shapes.inputs) n += t.numel();
  for (const auto& t : shapes.outputs) n += t.numel();
  return n > 8 && n <= (1 << 14);
}

}  // namespace

TEST_CASE("the patched reference is the reference of the changed inputs, for every spec") {
  int checked_cases = 0, unknown = 0;
  for (const fs::path& file : spec_files()) {
    const kq::Spec spec = kq::load_spec(file);
    kq::PlanOptions quick;
    quick.quick = true;
    quick.include_huge = false;
    std::map<std::string, int> taken;  // by group: a few of each, the layouts among them
    for (const kq::Case& c : kq::plan_cases(spec, quick)) {
      if (!c.in_contract || taken[c.group] >= 3 || !small(spec, c)) continue;
      kq::CaseTensors t(spec, c, kq::Device::cpu);
      if (t.aliased()) continue;
      ++taken[c.group];
      ++checked_cases;
      INFO(file.filename().string() << " case " << c.name);
      t.load_inputs(c, 0);
      const std::vector<kq::OutputRule> rules = kq::output_rules(spec, c);
      const Reference base = reference_of(spec, c, t, rules, t.pristine_input_views());
      kq::FreshInputs fresh(spec, c, rules, 12345);
      std::set<std::uint64_t> seen{contents_hash(t)};
      // Contents no call saw before, where an input has enough elements to draw from (a tiny
      // case may draw its way back; a broadcast input is left alone).
      std::int64_t fewest = std::numeric_limits<std::int64_t>::max();
      for (const kq::TensorView& v : t.input_views()) fewest = std::min(fewest, v.numel());
      const bool distinct = fewest >= 256 && c.name.find("broadcast") == std::string::npos;
      for (int round = 0; round < 3; ++round) {
        fresh.change(t, nullptr);
        if (distinct) CHECK(seen.insert(contents_hash(t)).second);
        std::vector<kq::FreshInputs::Patch> patch = fresh.patches(t);
        Reference patched = base;
        for (std::size_t o = 0; o < patch.size(); ++o) {
          const std::size_t es = kq::dtype_size(t.dtype(o));
          for (std::size_t j = 0; j < patch[o].at.size(); ++j) {
            std::memcpy(patched.values[o].data() + patch[o].at[j] * es,
                        patch[o].values.data() + j * es, es);
            if (!patch[o].bounds.empty()) patched.bounds[o][patch[o].at[j]] = patch[o].bounds[j];
          }
        }
        const Reference now = reference_of(spec, c, t, rules, t.input_views());
        // Elements left unevaluated (a long scan's rows) are accepted as they are.
        for (std::size_t o = 0; o < patch.size(); ++o) {
          const std::size_t es = kq::dtype_size(t.dtype(o));
          unknown += static_cast<int>(patch[o].unknown.size());
          for (std::size_t at : patch[o].unknown) {
            std::memcpy(patched.values[o].data() + at * es, now.values[o].data() + at * es, es);
            if (!now.bounds[o].empty()) patched.bounds[o][at] = now.bounds[o][at];
          }
        }
        for (std::size_t o = 0; o < t.outputs(); ++o) {
          INFO("output " << o << " round " << round);
          CHECK(std::memcmp(now.values[o].data(), patched.values[o].data(), now.values[o].size()) ==
                0);
          REQUIRE(now.bounds[o].size() == patched.bounds[o].size());
          CHECK(std::memcmp(now.bounds[o].data(), patched.bounds[o].data(),
                            now.bounds[o].size() * sizeof(double)) == 0);
        }
      }
    }
  }
  CHECK(checked_cases > 150);
  MESSAGE(checked_cases << " cases, " << unknown << " elements left unevaluated");
}

namespace {

// The regions of y that changes of x (at `changed`) reach, in a program over x[M, N] with dims
// `dims`, y of shape `y_shape`, `temporaries` (YAML, or "") and the statements `semantics`.
std::vector<kq::ix::Box> y_region(const std::string& dims, const std::string& y_shape,
                                  const std::string& temporaries, const std::string& semantics,
                                  const std::vector<kq::ix::Box>& changed) {
  std::string yaml = "kq_spec: 2\nop: t\ndims: {" + dims +
                     "}\ninputs: {x: {dtype: f32, shape: [M, N]}}\n"
                     "outputs: {y: {dtype: f32, shape: [" +
                     y_shape + "]}}\n";
  if (!temporaries.empty()) yaml += "temporaries: {" + temporaries + "}\n";
  yaml += "semantics: |\n";
  std::istringstream lines(semantics);
  for (std::string line; std::getline(lines, line);) yaml += "  " + line + "\n";
  yaml +=
      "compare: {y: {ulp: 4}}\ntiming: {points: [{M: 4, N: 4}]}\n"
      "decision: {baseline: cpu_tbb}\n";
  const kq::Spec spec = kq::parse_spec(yaml, "t.yaml");
  const kq::ix::Program& p = *spec.op.program;
  int x = -1, y = -1;
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t) {
    if (p.decls.tensors[t].name == "x") x = static_cast<int>(t);
    if (p.decls.tensors[t].name == "y") y = static_cast<int>(t);
  }
  std::vector<kq::ix::ChangedElement> elements;
  for (const kq::ix::Box& c : changed) elements.push_back({x, c});
  return kq::ix::affected_regions(p, elements)[static_cast<std::size_t>(y)];
}

}  // namespace

TEST_CASE("a change's region: rows through reductions and scans, whole through arithmetic") {
  using Boxes = std::vector<kq::ix::Box>;
  const auto W = kq::ix::kWhole;
  const std::string rows = "M: free, N: reduced", free = "M: free, N: free";
  // Softmax: the changed row.
  CHECK(y_region(rows, "M, N", "mx: {shape: [M]}, s: {shape: [M]}",
                 "mx[m] = max(n, x[m, n])\ns[m] = sum(n, exp(x[m, n] - mx[m]))\n"
                 "y[m, n] = exp(x[m, n] - mx[m]) / s[m]",
                 {{2, 3}}) == Boxes{{2, W}});
  // An elementwise statement: the element alone; two changes, two boxes.
  CHECK(y_region(free, "M, N", "", "y[m, n] = x[m, n] * 2", {{1, 2}, {3, 0}}) ==
        Boxes{{1, 2}, {3, 0}});
  // A scan: the run along the scanned index.
  CHECK(y_region(rows, "M, N", "", "y[m, n] = cumsum(n, x[m, n])", {{1, 2}}) == Boxes{{1, W}});
  // A scalar loss: its one element.
  CHECK(y_region(rows, "", "", "y = sum((m, n), x[m, n] * x[m, n])", {{1, 2}}) ==
        Boxes{kq::ix::Box{}});
  // Index arithmetic pins nothing: the box grows.
  CHECK(y_region(free, "M, N", "", "y[m, n] = x[m, N - 1 - n]", {{1, 2}}) == Boxes{{1, W}});
  CHECK(kq::ix::region_indices({{1, W}}, {3, 4}) == std::vector<std::int64_t>{4, 5, 6, 7});
  CHECK(kq::ix::region_indices({{W, 2}, {1, W}}, {3, 4}) ==
        std::vector<std::int64_t>{2, 4, 5, 6, 7, 10});
  CHECK(kq::ix::region_elements({{W, 2}, {1, W}}, {3, 4}) == 7);
  CHECK(kq::ix::region_indices({{}}, {}) == std::vector<std::int64_t>{0});
}

TEST_CASE("elements left unevaluated are accepted as the output holds them, and only those") {
  const kq::Spec spec =
      kq::load_spec(std::filesystem::path(KQ_SOURCE_DIR) / "specs/residual_relu.yaml");
  const kq::Case c = kq::timed_points(spec, {4099}).front().c;
  kq::CaseTensors t(spec, c, kq::Device::cpu);
  t.load_inputs(c, 0);
  t.poison_output(0);
  const std::vector<kq::OutputRule> rules = kq::output_rules(spec, c);
  const Reference want = reference_of(spec, c, t, rules, t.pristine_input_views());
  auto* out = static_cast<float*>(t.output_views()[0].data);
  std::memcpy(out, want.values[0].data(), want.values[0].size());
  kq::HostBytes scratch;
  CHECK(kq::check_timed_output(t, rules, want.values, want.bounds, scratch).ok);
  out[7] = out[7] + 1.0f;  // two stale elements
  out[100] = out[100] + 1.0f;
  auto f = kq::check_timed_output(t, rules, want.values, want.bounds, scratch);
  CHECK_FALSE(f.ok);
  CHECK(f.index == 7);
  CHECK(kq::check_timed_output(t, rules, want.values, want.bounds, scratch, nullptr, nullptr,
                               {{7, 100}})
            .ok);
  f = kq::check_timed_output(t, rules, want.values, want.bounds, scratch, nullptr, nullptr, {{7}});
  CHECK_FALSE(f.ok);
  CHECK(f.index == 100);
}

TEST_CASE("a checked sample of a product evaluates about kCheckSteps, the rest left unevaluated") {
  // A change of a: a row of c, 4096 sums of 512 terms each (2^21 steps), twice the budget. At
  // M = 16 the inputs' sizes over the output's (32) understate what an element costs.
  const kq::Spec spec = kq::parse_spec(
      "kq_spec: 2\nop: mm\ndims: {M: free, N: free, K: reduced}\ncompute: f32\n"
      "inputs: {a: {dtype: f32, shape: [M, K]}, b: {dtype: f32, shape: [K, N]}}\n"
      "outputs: {c: {dtype: f32, shape: [M, N]}}\n"
      "semantics: |\n  c[m, n] = sum(k, a[m, k] * b[k, n])\n"
      "compare: {c: {bound: accumulation}}\n"
      "timing: {points: [{M: 16, N: 4096, K: 512}]}\n"
      "decision: {baseline: cpu_tbb}\n",
      "mm.yaml");
  const kq::Case c = kq::timed_points(spec).front().c;
  kq::CaseTensors t(spec, c, kq::Device::cpu);
  t.load_inputs(c, 0);
  const std::vector<kq::OutputRule> rules = kq::output_rules(spec, c);
  kq::FreshInputs fresh(spec, c, rules, 99);
  int rows_changed = 0;
  for (int round = 0; round < 8; ++round) {
    fresh.change(t, nullptr);
    const kq::FreshInputs::Patch p = fresh.patches(t).front();
    INFO("round " << round);
    // At most a little over the budget (the draw is random), whatever the changes reach.
    CHECK(static_cast<double>(p.at.size()) * 512 <= 1.25 * kq::FreshInputs::kCheckSteps);
    if (p.at.size() + p.unknown.size() >= 4096) {
      ++rows_changed;
      CHECK(p.at.size() > 1000);       // a random part of the row evaluated...
      CHECK(p.unknown.size() > 1000);  // ...and the rest accepted as it is
    }
  }
  CHECK(rows_changed > 0);
}
