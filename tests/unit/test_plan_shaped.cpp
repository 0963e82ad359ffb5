// The qualification cases of format-2 specs: every case's tensors follow from its dims, names
// are unique, the timed points are cases, and what the contract does not admit is marked so.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "kq/half.hpp"
#include "plan/case_shapes.hpp"
#include "plan/plan_cases.hpp"
#include "plan/plan_shaped.hpp"
#include "qualify/case_data.hpp"
#include "qualify/case_values.hpp"
#include "spec/spec.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kV2 = fs::path(KQ_SOURCE_DIR) / "tests/data/specs_v2";

kq::PlanOptions quick() {
  kq::PlanOptions o;
  o.quick = true;
  return o;
}

const kq::Case* named(const std::vector<kq::Case>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("softmax: points, value classes, layouts; each tensor shaped by the case's dims") {
  const kq::Spec spec = kq::load_spec(kV2 / "softmax.yaml");
  const auto cases = kq::plan_cases(spec, quick());
  std::set<std::string> names;
  for (const kq::Case& c : cases) {
    CAPTURE(c.name);
    CHECK(names.insert(c.name).second);
    REQUIRE(c.dims.size() == 2);
    const kq::CaseShapes s = kq::case_shapes(spec, c);
    REQUIRE(s.inputs.size() == 1);
    REQUIRE(s.outputs.size() == 1);
    CHECK(s.inputs[0].shape == std::vector<std::int64_t>{c.dims[0], c.dims[1]});
    CHECK(s.inputs[0].dtype == kq::DType::bf16);
    CHECK(c.shape == s.inputs[0].shape);  // the largest tensor sizes the case
  }
  CHECK(cases.size() > 100);
  // The spec's own qualification points, and value classes at long and short rows.
  CHECK(named(cases, "point/M=1,N=1"));
  CHECK(named(cases, "point/M=4097,N=7"));
  CHECK(named(cases, "values/spikes@M=3,N=4097"));
  CHECK(named(cases, "values/offset_rows@M=5,N=33"));
  // Strided views are outside a contiguous-only contract; an output on its input is never in.
  const kq::Case* strided = named(cases, "layout/x_stride2");
  REQUIRE(strided);
  CHECK_FALSE(strided->in_contract);
  const kq::Case* alias = named(cases, "alias/y_is_x");
  REQUIRE(alias);
  CHECK_FALSE(alias->in_contract);
  CHECK(alias->alias_input == 0);
  // The conduct case comes first; the points ascend to the largest.
  CHECK(cases.front().conduct);
  CHECK(cases.back().numel() >= cases[cases.size() / 2].numel());
}

TEST_CASE("layer_norm: three outputs of two dtypes; the case data holds a reference for each") {
  const kq::Spec spec = kq::load_spec(kV2 / "layer_norm.yaml");
  const auto cases = kq::plan_cases(spec, quick());
  const kq::Case* c = named(cases, "values/constant_rows@M=5,N=33");
  REQUIRE(c);
  const kq::CaseShapes s = kq::case_shapes(spec, *c);
  REQUIRE(s.inputs.size() == 3);
  REQUIRE(s.outputs.size() == 3);
  CHECK(s.inputs[1].shape == std::vector<std::int64_t>{33});
  CHECK(s.outputs[1].dtype == kq::DType::f32);
  CHECK(s.outputs[1].shape == std::vector<std::int64_t>{5});

  const kq::CaseDataLayout layout(spec, *c);
  REQUIRE(layout.outputs() == 3);
  CHECK(layout.reference_bytes(0) == 5 * 33 * 2);
  CHECK(layout.reference_bytes(1) == 5 * 4);
  std::vector<unsigned char> data(layout.total_bytes());
  kq::compute_case_data(spec, *c, layout, data.data());
  // Constant rows: the mean is the row's value, and every y is b (x - mean is exactly 0).
  const auto* x = data.data() + layout.input_offset(0, 0);
  const auto* mean = data.data() + layout.reference_offset(0, 1);
  for (int m = 0; m < 5; ++m) {
    const double first = kq::load_as_double(kq::DType::bf16, x + m * 33 * 2);
    for (int n = 1; n < 33; ++n)
      CHECK(kq::load_as_double(kq::DType::bf16, x + (m * 33 + n) * 2) == first);
    CHECK(kq::load_as_double(kq::DType::f32, mean + m * 4) == doctest::Approx(first).epsilon(1e-6));
  }
}

TEST_CASE("a gather's integer input is drawn inside the extent it indexes") {
  const kq::Spec spec = kq::load_spec(kV2 / "cross_entropy.yaml");
  const auto& p = *spec.op.program;
  int targets = -1;
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
    if (kq::is_integer(p.decls.tensors[t].dtype)) targets = static_cast<int>(t);
  REQUIRE(targets >= 0);
  const auto cases = kq::plan_cases(spec, quick());
  for (const kq::Case& c : cases) {
    if (!c.in_contract || c.group != "point") continue;
    const auto range = kq::gather_range(p, targets, c.dims);
    REQUIRE(range);
    CHECK(range->lo == 0);
    CHECK(range->hi == c.dims[1] - 1);  // x[m, t[m]] over N columns
    const kq::CaseDataLayout layout(spec, c);
    std::vector<unsigned char> data(layout.total_bytes());
    kq::compute_case_data(spec, c, layout, data.data());  // throws on a gather out of range
  }
}

// group_sum.yaml: x[b, g * C + pick[g]] with x of [B, K], and z's gather beside y's arithmetic.
TEST_CASE("dims tied by index arithmetic: points outside left out, gathers offset") {
  const kq::Spec spec = kq::load_spec(kV2 / "group_sum.yaml");
  const auto& p = *spec.op.program;
  const std::vector<std::int64_t> fits = {2, 3, 5, 15};  // B, G, C, K = G * C
  CHECK_FALSE(kq::ix::subscript_out_of_range(p, fits));
  const auto bad = kq::ix::subscript_out_of_range(p, {2, 3, 5, 14});
  REQUIRE(bad);
  CHECK(*bad ==
        "line 2 `y[b, g] = sum(j, x[b, g * C + j] * w[j])`: subscript 2 of 'x' reaches 14, outside "
        "[0, 14)");
  // g * C beyond int64 saturates: out of any tensor, no overflow.
  const std::int64_t huge = std::int64_t{1} << 40;
  CHECK(kq::ix::subscript_out_of_range(p, {1, huge, huge, 4096}));
  int pick = -1;
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
    if (p.decls.tensors[t].name == "pick") pick = static_cast<int>(t);
  const auto range = kq::gather_range(p, pick, fits);
  REQUIRE(range);
  CHECK(range->lo == 0);
  CHECK(range->hi == 4);  // K - 1 - (G - 1) * C
  const auto cases = kq::plan_cases(spec, quick());
  CHECK(cases.size() > 10);
  for (const kq::Case& c : cases) {
    INFO(c.name);
    CHECK_FALSE(kq::ix::subscript_out_of_range(p, c.dims));
    const kq::CaseDataLayout layout(spec, c);
    std::vector<unsigned char> data(layout.total_bytes());
    kq::compute_case_data(spec, c, layout, data.data());
  }
}

// Every shipped format-2 spec (specs/ and specs/kernelbench/) plans cases within the budgets:
// the pairwise points within 2^24 elements (2^16 quick) and the fixed points (conduct, value
// classes, layouts) within kFixedPointElements, whatever the number of reduced dims. Only the
// timed points (the spec's choice) and the full run's huge set are larger. Batch norm's three
// reduced dims once made value-class points of 4097^3 elements (7.5 TiB of host memory).
TEST_CASE("every shipped format-2 spec plans its cases within the element budgets") {
  const fs::path specs = fs::path(KQ_SOURCE_DIR) / "specs";
  int checked = 0;
  for (const fs::path& dir : {specs, specs / "kernelbench", specs / "gemm"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".yaml") continue;
      const kq::Spec spec = kq::load_spec(e.path());
      if (!spec.shaped) continue;
      for (const bool is_quick : {true, false}) {
        kq::PlanOptions o;
        o.quick = is_quick;
        o.include_huge = false;
        const std::int64_t points =
            is_quick ? kq::kShapedQuickPointElements : kq::kShapedPointElements;
        for (const kq::Case& c : kq::plan_cases(spec, o)) {
          if (c.group == "timing") continue;
          CAPTURE(e.path().filename().string());
          CAPTURE(c.name);
          const std::int64_t limit = c.group == "point" ? points : kq::kFixedPointElements;
          CHECK(c.numel() <= limit);
        }
      }
      ++checked;
    }
  }
  CHECK(checked >= 44);
}
