// Padded row strides (plan/plan_shaped.cpp, add_padded_rows): every tensor of two dims or more
// meets a row stride longer than its row, 64-byte aligned and not 16-byte aligned; outside a
// contiguous-only contract, inside one that admits strided views, where cpu_tbb passes them and
// an arm that takes rows as dense is caught.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kq/plugin_api.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/run_case.hpp"
#include "spec/spec.hpp"

namespace {

namespace fs = std::filesystem;

const char* kSoftmaxStrided = R"yaml(kq_spec: 2
op: softmax
dims: {M: free, N: reduced}
inputs: {x: {dtype: f32, shape: [M, N]}}
outputs: {y: {dtype: f32, shape: [M, N]}}
temporaries: {mx: {shape: [M]}, e: {shape: [M, N]}, s: {shape: [M]}}
semantics: |
  mx[m] = max(n, x[m, n])
  e[m, n] = exp(x[m, n] - mx[m])
  s[m] = sum(n, e[m, n])
  y[m, n] = e[m, n] / s[m]
domain: finite
layouts: {contiguous_only: false}
compare: {y: {rtol: 8 * u * sqrt(N) + 128 * u, atol: 1.2e-38}}
timing: {points: [{M: 64, N: 64}]}
decision: {baseline: cpu_tbb}
)yaml";

const char* kBatchRows = R"yaml(kq_spec: 2
op: batch_row_sum
dims: {B: free, M: free, N: reduced}
inputs:
  x: {dtype: bf16, shape: [B, M, N]}
  w: {dtype: f32, shape: [N]}
outputs: {y: {dtype: f32, shape: [B, M]}}
semantics: "y[b, m] = sum(n, x[b, m, n] * w[n])"
layouts: {contiguous_only: false}
compare: {y: {bound: accumulation}}
timing: {points: [{B: 2, M: 4, N: 4}]}
decision: {baseline: cpu_tbb}
)yaml";

kq::PlanOptions quick() {
  kq::PlanOptions o;
  o.quick = true;
  o.include_huge = false;
  return o;
}

const kq::Case* find(const std::vector<kq::Case>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return &c;
  return nullptr;
}

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

// cpu_tbb shown its inputs as dense rows, whatever their strides: a kernel that computes each
// row's address as row * N.
class DenseRows final : public kq::IKernelArm {
 public:
  kq::ArmIdentity identity() const override { return cpu_tbb().identity(); }
  kq::Status supports(const kq::OpSpec& spec) const override { return cpu_tbb().supports(spec); }
  kq::Status prepare(const kq::Problem& problem) override { return cpu_tbb().prepare(problem); }
  kq::Status run(std::span<const kq::TensorView> inputs, std::span<const kq::TensorView> outputs,
                 void* stream) override {
    std::vector<kq::TensorView> dense(inputs.begin(), inputs.end());
    for (kq::TensorView& v : dense) {
      std::int64_t s = 1;
      for (int d = v.rank - 1; d >= 0; --d) {
        v.strides[d] = s;
        s *= v.shape[d];
      }
    }
    return cpu_tbb().run(dense, outputs, stream);
  }
};

}  // namespace

TEST_CASE("padded rows are outside a contiguous-only contract, with their strides") {
  const kq::Spec spec = kq::load_spec(fs::path(KQ_SOURCE_DIR) / "tests/data/specs_v2/softmax.yaml");
  const auto cases = kq::plan_cases(spec, quick());
  // bf16 rows of 1025: 1025 + 16 rounded up to 32 elements (64 bytes), then one more.
  for (const auto& [name, pitch] :
       {std::pair{"layout/x_rowpad", 1056}, std::pair{"layout/x_rowpad_odd", 1057},
        std::pair{"layout/y_rowpad", 1056}, std::pair{"layout/y_rowpad_odd", 1057}}) {
    CAPTURE(name);
    const kq::Case* c = find(cases, name);
    REQUIRE(c);
    CHECK(c->dims == std::vector<std::int64_t>{3, 1025});
    CHECK_FALSE(c->in_contract);
    CHECK(c->outside_because.find("padded rows (a row stride of " + std::to_string(pitch) +
                                  " elements for rows of 1025)") != std::string::npos);
    const kq::Placement& p =
        std::string(name).find("/x_") != std::string::npos ? c->inputs[0] : c->outputs[0];
    CHECK(p.strides == std::vector<std::int64_t>{pitch, 1});
    CHECK((pitch * 2) % 16 == (pitch == 1056 ? 0 : 2));
    // cpu_tbb refuses them there.
    CHECK(kq::run_case(cpu_tbb(), kq::Device::cpu, spec, *c).result ==
          kq::CaseOutcome::Result::refused);
  }
}

TEST_CASE("three dims: the rows padded, the dims above dense over them; no row stride, no case") {
  const kq::Spec spec = kq::parse_spec(kBatchRows, "batch_row_sum.yaml");
  const auto cases = kq::plan_cases(spec, quick());
  const kq::Case* c = find(cases, "layout/x_rowpad");
  REQUIRE(c);
  CHECK(c->in_contract);
  REQUIRE(c->dims == std::vector<std::int64_t>{3, 3, 1025});
  CHECK(c->inputs[0].strides == std::vector<std::int64_t>{3 * 1056, 1056, 1});
  CHECK(find(cases, "layout/y_rowpad_odd"));    // y [B, M]: rows of M
  CHECK_FALSE(find(cases, "layout/w_rowpad"));  // one dim
  for (const char* name :
       {"layout/x_rowpad", "layout/x_rowpad_odd", "layout/y_rowpad", "layout/y_rowpad_odd"}) {
    CAPTURE(name);
    const kq::CaseOutcome o = kq::run_case(cpu_tbb(), kq::Device::cpu, spec, *find(cases, name));
    INFO(o.check << " " << o.message);
    CHECK(o.result == kq::CaseOutcome::Result::passed);
  }
}

TEST_CASE("where the contract admits strides: cpu_tbb passes padded rows, dense rows are caught") {
  const kq::Spec spec = kq::parse_spec(kSoftmaxStrided, "softmax_strided.yaml");
  const auto cases = kq::plan_cases(spec, quick());
  DenseRows dense;
  for (const char* name :
       {"layout/x_rowpad", "layout/x_rowpad_odd", "layout/y_rowpad", "layout/y_rowpad_odd"}) {
    CAPTURE(name);
    const kq::Case* c = find(cases, name);
    REQUIRE(c);
    CHECK(c->in_contract);
    const kq::CaseOutcome good = kq::run_case(cpu_tbb(), kq::Device::cpu, spec, *c);
    INFO(good.check << " " << good.message);
    CHECK(good.result == kq::CaseOutcome::Result::passed);
    // Only the input's padding misleads an arm that takes its inputs as dense.
    const kq::CaseOutcome bad = kq::run_case(dense, kq::Device::cpu, spec, *c);
    if (std::string(name).find("/x_") == std::string::npos) continue;
    CHECK(bad.result == kq::CaseOutcome::Result::failed);
    CHECK(bad.check == "values");
  }
}
