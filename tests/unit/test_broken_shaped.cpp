// The known-broken CPU candidates for format-2 (shaped) specs (plugins/broken/cpu/shaped_arm.hpp
// and its users), each qualified over the quick plan of every spec it takes, as qualify_arm runs
// cases: rejected by exactly the check it declares. cpu_tbb, on the same specs, qualifies: the
// cases that catch the candidates are cases a right arm passes. The timing points' cases (16M
// to 134M elements, seconds each) are left to the selftest.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kq/plugin_api.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/run_case.hpp"
#include "spec/spec.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

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

// Both broken plugins' arms, and cpu_tbb.
const kq::ArmList& arms() {
  static const kq::ArmList list = [] {
    kq::ArmList all;
    for (const char* p :
         {"/plugins/libkq_broken_cpu.so", "/plugins/test_specs/libkq_broken_cpu_test_specs.so",
          "/plugins/libkq_cpu.so"})
      for (auto& a : load_arms(std::string(KQ_BIN_DIR) + p)) all.push_back(std::move(a));
    return all;
  }();
  return list;
}

kq::IKernelArm& arm_named(const std::string& name) {
  for (const auto& a : arms())
    if (a->identity().name == name) return *a;
  FAIL("no arm named " << name);
  throw std::logic_error("unreachable");
}

// Every format-2 spec in the tree, by its path from the source root.
const std::map<std::string, kq::Spec>& shaped_specs() {
  static const std::map<std::string, kq::Spec> specs = [] {
    std::map<std::string, kq::Spec> s;
    for (const char* dir : {"specs", "specs/kernelbench", "tests/data/specs_v2"}) {
      for (const auto& e : fs::directory_iterator(fs::path(KQ_SOURCE_DIR) / dir)) {
        if (e.path().extension() != ".yaml") continue;
        kq::Spec spec = kq::load_spec(e.path());
        if (spec.op.program) s.emplace(std::string(dir) + "/" + e.path().filename().string(), spec);
      }
    }
    return s;
  }();
  return specs;
}

// A candidate, the specs it must take (every other it must decline), those of them where its
// flaw is outside the contract (there it must pass) and those too large to qualify here.
struct Candidate {
  std::string arm;
  std::set<std::string> takes;
  std::set<std::string> passes = {};
  std::set<std::string> not_run = {};
};

const std::set<std::string> kSoftmaxes = {
    "specs/softmax_bf16.yaml", "specs/kernelbench/23_softmax.yaml",
    "tests/data/specs_v2/softmax.yaml", "tests/data/specs_v2/softmax_f32.yaml"};

// The float32 products C = A B of KernelBench with A (M, K) and B (K, N): the matmul candidates
// take these four and decline the square, batched, transposed and tall-skinny ones (their
// shapes differ). They are run on the irregular one alone: a CPU product of the others' quick
// plans takes minutes, and cpu_tbb qualifies each of them over the whole plan.
const std::set<std::string> kMatmuls = {"specs/kernelbench/02_standard_matmul.yaml",
                                        "specs/kernelbench/06_matmul_large_k.yaml",
                                        "specs/kernelbench/07_matmul_small_k.yaml",
                                        "specs/kernelbench/08_matmul_irregular_shapes.yaml"};
const std::set<std::string> kMatmulsNotRun = {"specs/kernelbench/02_standard_matmul.yaml",
                                              "specs/kernelbench/06_matmul_large_k.yaml",
                                              "specs/kernelbench/07_matmul_small_k.yaml"};

const std::vector<Candidate> kCandidates = {
    {"broken_cpu_softmax_no_max",
     kSoftmaxes,
     // |x| <= 32 (max_abs_input): exp(x) cannot overflow; kq tells an arm no bound.
     {"specs/softmax_bf16.yaml", "specs/kernelbench/23_softmax.yaml"}},
    {"broken_cpu_softmax_tail_skipped", kSoftmaxes},
    {"broken_cpu_softmax_bf16_sum", kSoftmaxes},
    {"broken_cpu_layer_norm_one_pass",
     {"specs/layer_norm_bf16.yaml", "tests/data/specs_v2/layer_norm.yaml"}},
    {"broken_cpu_rms_norm_eps_outside", {"specs/rms_norm_bf16.yaml"}},
    {"broken_cpu_argmax_last_tie", {"tests/data/specs_v2/argmax.yaml"}},
    {"broken_cpu_cumsum_inclusive",
     {"specs/kernelbench/92_cumsum_exclusive.yaml", "tests/data/specs_v2/cumsum_exclusive.yaml"}},
    {"broken_cpu_cross_entropy_no_lse",
     {"specs/kernelbench/95_cross_entropy_loss.yaml", "tests/data/specs_v2/cross_entropy.yaml"},
     {},
     // M is a reduced dim there: the value cases are 4097 x 4097 (20 s for cpu_tbb);
     // cross_entropy.yaml has the same statements.
     {"specs/kernelbench/95_cross_entropy_loss.yaml"}},
    {"broken_cpu_matmul_k_tail_skipped", kMatmuls, {}, kMatmulsNotRun},
    {"broken_cpu_matmul_bf16_accumulation", kMatmuls, {}, kMatmulsNotRun},
    {"broken_cpu_matmul_tf32_inputs", kMatmuls, {}, kMatmulsNotRun},
    {"broken_cpu_matmul_mn_tail_skipped", kMatmuls, {}, kMatmulsNotRun},
    {"broken_cpu_matmul_transposed_stride", {"specs/kernelbench/17_matmul_transposed_b.yaml"}},
    {"broken_cpu_max_pool_zero_pad", {"specs/kernelbench/41_max_pool_1d.yaml"}},
    {"broken_cpu_conv_flipped_kernel", {"specs/kernelbench/67_conv_standard_1d.yaml"}},
};

kq::PlanOptions quick() {
  kq::PlanOptions o;
  o.include_huge = false;
  o.quick = true;
  return o;
}

// What qualify_arm would say of an arm over a spec's quick plan: the first failure (its check
// and case), or how many cases passed and were refused outside the contract.
struct Verdict {
  std::string check, case_name, message;
  int passed = 0, refused = 0;
  double seconds = 0;
  bool unchecked = false;  // a compare rule (bound: accumulation) this core does not apply
};

Verdict qualify_cases(kq::IKernelArm& arm, const kq::Spec& spec) {
  Verdict v;
  for (const kq::Case& c : kq::plan_cases(spec, quick())) {
    // The spec's timing points (16M to 134M elements: seconds each) are the selftest's; every
    // candidate here is caught long before them.
    if (c.group == "timing") continue;
    kq::CaseOutcome o;
    try {
      o = kq::run_case(arm, kq::Device::cpu, spec, c);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      if (what.find("bound: accumulation") != std::string::npos) {
        v.unchecked = true;
        v.message = what;
        return v;
      }
      return {"arm_error", c.name, what};
    }
    if (o.result == kq::CaseOutcome::Result::failed) {
      v.check = o.check;
      v.case_name = c.name;
      v.message = o.message;
      return v;
    }
    v.passed += o.result == kq::CaseOutcome::Result::passed;
    v.refused += o.result == kq::CaseOutcome::Result::refused;
  }
  return v;
}

Verdict qualify(kq::IKernelArm& arm, const kq::Spec& spec) {
  const auto t0 = std::chrono::steady_clock::now();
  Verdict v = qualify_cases(arm, spec);
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return v;
}

}  // namespace

TEST_CASE("each shaped candidate takes exactly the specs where it is meant to run") {
  REQUIRE(!shaped_specs().empty());
  for (const Candidate& c : kCandidates) {
    kq::IKernelArm& arm = arm_named(c.arm);
    CHECK(arm.identity().expected_rejection == "values");
    for (const auto& [path, spec] : shaped_specs()) {
      const kq::Status s = arm.supports(spec.op);
      INFO(c.arm << " on " << path << ": " << s.message());
      CHECK(s.is_ok() == (c.takes.count(path) == 1));
    }
  }
}

TEST_CASE("each shaped candidate is rejected by its declared check; cpu_tbb qualifies there") {
  kq::IKernelArm& good = arm_named("cpu_tbb");
  std::map<std::string, Verdict> good_on;  // cpu_tbb's verdict per spec, computed once
  for (const Candidate& c : kCandidates) {
    kq::IKernelArm& arm = arm_named(c.arm);
    const std::string declared = arm.identity().expected_rejection;
    int caught = 0;
    for (const std::string& path : c.takes) {
      if (c.not_run.count(path) == 1) continue;
      const auto it = shaped_specs().find(path);
      REQUIRE_MESSAGE(it != shaped_specs().end(), path << " is missing");
      const kq::Spec& spec = it->second;
      const Verdict v = qualify(arm, spec);
      INFO(c.arm << " on " << path << ": first failure " << v.case_name << " (" << v.check << ") "
                 << v.message);
      if (v.unchecked) {  // bound: accumulation, where core does not apply it yet
        MESSAGE(c.arm << " on " << path << ": not run: " << v.message);
        continue;
      }
      if (c.passes.count(path) == 1) {
        MESSAGE(c.arm << " on " << path << ": passes " << v.passed << " cases, " << v.refused
                      << " refused: its flaw is outside this contract");
        CHECK(v.check.empty());
        continue;
      }
      MESSAGE(c.arm << " on " << path << ": " << v.case_name << " -> " << v.check << ": "
                    << v.message);
      CHECK(v.check == declared);
      caught += v.check == declared;

      if (!good_on.count(path)) good_on[path] = qualify(good, spec);
      const Verdict& g = good_on[path];
      INFO("cpu_tbb on " << path << ": first failure " << g.case_name << " (" << g.check << ") "
                         << g.message);
      CHECK(g.check.empty());
    }
    CHECK_MESSAGE(caught > 0, c.arm << " was caught on none of its specs");
  }
  for (const auto& [path, g] : good_on)
    MESSAGE("cpu_tbb on " << path << ": " << g.passed << " passed, " << g.refused
                          << " refused outside the contract"
                          << (g.check.empty() ? "" : ", failed " + g.case_name + " by " + g.check)
                          << " (" << g.seconds << " s)");
}

// The one-pass variance is caught at bf16 by the rows the class is made for: 256 + noise, where
// E[x^2] near 65536 in float32 swamps a variance near 1. cpu_tbb passes the same cases.
TEST_CASE("layer_norm_one_pass is caught by offset_rows at bf16, where cpu_tbb passes") {
  for (const char* path : {"specs/layer_norm_bf16.yaml", "tests/data/specs_v2/layer_norm.yaml"}) {
    const kq::Spec& spec = shaped_specs().at(path);
    int cases = 0;
    for (const kq::Case& c : kq::plan_cases(spec, quick())) {
      if (c.name.rfind("values/offset_rows", 0) != 0) continue;
      ++cases;
      const kq::CaseOutcome bad =
          kq::run_case(arm_named("broken_cpu_layer_norm_one_pass"), kq::Device::cpu, spec, c);
      const kq::CaseOutcome good = kq::run_case(arm_named("cpu_tbb"), kq::Device::cpu, spec, c);
      MESSAGE(path << " " << c.name << ": layer_norm_one_pass " << kq::to_string(bad.result) << " "
                   << bad.check << " (" << bad.message << "); cpu_tbb "
                   << kq::to_string(good.result));
      CHECK(bad.result == kq::CaseOutcome::Result::failed);
      CHECK(bad.check == "values");
      CHECK(good.result == kq::CaseOutcome::Result::passed);
    }
    CHECK(cases == 2);  // long rows and short ones
  }
}

// `compute: tf32` admits a product that reads its operands as TF32: the candidate that a float32
// contract rejects passes there, while a bf16 sum and a skipped K tail are still rejected.
TEST_CASE("a tf32 spec admits matmul_tf32_inputs; a float32 one rejects it") {
  const fs::path path =
      fs::path(KQ_SOURCE_DIR) / "specs/kernelbench/08_matmul_irregular_shapes.yaml";
  std::string text = kq::test::read_file(path);
  const std::string dims = "dims: {M: free, N: free, K: reduced}\n";
  REQUIRE(text.find(dims) != std::string::npos);
  text.replace(text.find(dims), dims.size(), dims + "compute: tf32\n");
  const kq::Spec tf32 = kq::parse_spec(text, "08_matmul_tf32.yaml");
  REQUIRE(tf32.op.tf32);
  const kq::Spec& f32 = shaped_specs().at("specs/kernelbench/08_matmul_irregular_shapes.yaml");

  const Verdict admitted = qualify(arm_named("broken_cpu_matmul_tf32_inputs"), tf32);
  INFO("tf32: first failure " << admitted.case_name << " (" << admitted.check << ") "
                              << admitted.message);
  CHECK(admitted.check.empty());
  CHECK(admitted.passed > 0);
  CHECK(qualify(arm_named("broken_cpu_matmul_tf32_inputs"), f32).check == "values");
  for (const char* still :
       {"broken_cpu_matmul_bf16_accumulation", "broken_cpu_matmul_k_tail_skipped"})
    CHECK_MESSAGE(qualify(arm_named(still), tf32).check == "values", still);
}

// The CUDA product candidates (plugins/broken/cuda_matmul; a GPU rejects them: gpu_check.sh's
// broken_shaped and huge_matmul parts) take the same float32 products as the CPU ones. Here,
// without a GPU, only what they take is checked.
TEST_CASE("the CUDA matmul candidates take exactly the float32 products C = A B") {
  const std::string path =
      std::string(KQ_BIN_DIR) + "/plugins/test_specs/libkq_broken_cuda_matmul.so";
  if (!fs::exists(path)) {
    MESSAGE("skipped: " << path << " is not built (no CUDA in this build)");
    return;
  }
  static const kq::ArmList list = load_arms(path);
  REQUIRE(list.size() == 2);
  for (const auto& arm : list) {
    CHECK(arm->identity().expected_rejection.find("values") == 0);
    for (const auto& [spec_path, spec] : shaped_specs()) {
      INFO(arm->identity().name << " on " << spec_path);
      CHECK(arm->supports(spec.op).is_ok() == (kMatmuls.count(spec_path) == 1));
    }
  }
}
