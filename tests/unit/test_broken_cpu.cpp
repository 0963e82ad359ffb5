// The known-broken CPU candidates (plugins/broken), loaded as the host loads them: each declares
// the check that must reject it, and qualification's own case runner rejects it for that reason
// on every shipped spec it supports. Candidates that crash or hang are not run in this process:
// they run in forked children here, and end to end in the selftest. reuse_unchanged, which only
// the timing loop's output checks catch, is shown to pass qualification and to leave a
// re-poisoned output alone from its third call on.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kq/plugin_api.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/run_case.hpp"
#include "spec/spec.hpp"

namespace {

constexpr const char* kPluginPath = KQ_BIN_DIR "/plugins/libkq_broken_cpu.so";
constexpr const char* kCudaPluginPath = KQ_BIN_DIR "/plugins/libkq_broken_cuda.so";

kq::ArmList load_arms(const char* path) {
  kq::ArmList a;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);  // never closed: the arms live in it
  if (!h) {
    MESSAGE("dlopen " << path << ": " << dlerror());
    return a;
  }
  void* sym = dlsym(h, "kq_create_arms");
  if (!sym) return a;
  auto fn = reinterpret_cast<void (*)(kq::ArmList&)>(*static_cast<const void* const*>(sym));
  fn(a);
  return a;
}

const kq::ArmList& arms() {
  static kq::ArmList list = load_arms(kPluginPath);
  return list;
}

kq::IKernelArm& arm_named(const std::string& name) {
  for (const auto& a : arms())
    if (a->identity().name == name) return *a;
  FAIL("no arm named " << name);
  throw std::logic_error("unreachable");
}

const std::vector<kq::Spec>& shipped_specs() {
  static const std::vector<kq::Spec> specs = [] {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(KQ_SOURCE_DIR "/specs"))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<kq::Spec> s;
    for (const auto& f : files) s.push_back(kq::load_spec(f));
    return s;
  }();
  return specs;
}

std::string spec_name(const kq::Spec& s) { return std::filesystem::path(s.path).stem().string(); }

std::set<std::string> split(const std::string& alternatives) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t bar = alternatives.find('|', start);
    out.insert(alternatives.substr(start, bar - start));
    if (bar == std::string::npos) return out;
    start = bar + 1;
  }
}

const std::set<std::string> kCaseChecks = {"values",
                                           "output_guard",
                                           "output_gaps",
                                           "input_modified",
                                           "repeat_differs",
                                           "new_values",
                                           "accepted_out_of_contract",
                                           "refused_in_contract",
                                           "arm_error"};
const std::set<std::string> kVerdictChecks = {"crash", "cuda_error", "hang"};
// Checks outside run_case: the timing loop's output check (both devices), and the CUDA-only
// conduct checks (graph capture and replay, the streams CUPTI saw, the device left as it was).
const std::set<std::string> kTimingChecks = {"timing_output"};
const std::set<std::string> kCudaChecks = {"graph_output", "wrong_stream", "device_state",
                                           "outside_work"};

bool known_check(const std::string& check, kq::Device device) {
  return kCaseChecks.count(check) == 1 || kVerdictChecks.count(check) == 1 ||
         kTimingChecks.count(check) == 1 ||
         (device == kq::Device::cuda && kCudaChecks.count(check) == 1);
}

// The flaws of common/flaws_cuda.def: CUDA arms without a CPU twin.
const std::set<std::string> kCudaOnlyFlaws = {
#define KQ_BROKEN_FLAW(flaw) #flaw,
#include "../../plugins/broken/common/flaws_cuda.def"
#undef KQ_BROKEN_FLAW
};

// The flaws of common/flaws_cpu.def: CPU arms without a CUDA twin.
const std::set<std::string> kCpuOnlyFlaws = {
#define KQ_BROKEN_FLAW(flaw) #flaw,
#include "../../plugins/broken/common/flaws_cpu.def"
#undef KQ_BROKEN_FLAW
};

// Arms that qualification's cases cannot catch: only the timing loop, which re-poisons the
// output before every sample, sees their flaw. They are tested on their own below.
const std::set<std::string> kTimingOnly = {"broken_cpu_reuse_unchanged"};

// Arms whose flaw shows only in the cases qualification gained with the timing/<n> cases (every
// timing size of the spec) and the subnormals sprinkled into every size case from 4096 elements
// on. Until the plan has those (core's side of the same change; they land together), these
// pass every case here, which the generic test reports without failing; once plan_cases yields
// a timing/ case, the generic expectation is strict for them too. Their flaws are shown on
// cases built here in the meantime ("... on cases built for them").
const std::set<std::string> kNeedsTimingSizes = {"broken_cpu_size_shortcut",
                                                 "broken_cpu_subnormal_flush_large"};

bool plans_timing_sizes(const kq::Spec& spec) {
  for (const kq::Case& c : kq::plan_cases(spec, {false, true}))
    if (c.name.rfind("timing/", 0) == 0) return true;
  return false;
}

bool is_fence(const kq::Case& c) { return c.group == "fence" || c.name.rfind("fence/", 0) == 0; }

// The first failing case, as qualify_arm's verdict reports it: its check and its name.
struct FirstFailure {
  std::string check, case_name, message;
};

FirstFailure first_failure(kq::IKernelArm& arm, const kq::Spec& spec, bool skip_fences) {
  for (const kq::Case& c : kq::plan_cases(spec, {false, true})) {
    if (skip_fences && is_fence(c)) continue;
    kq::CaseOutcome o;
    try {
      o = kq::run_case(arm, kq::Device::cpu, spec, c);
    } catch (const std::exception& e) {
      return {"arm_error", c.name, e.what()};
    }
    if (o.result == kq::CaseOutcome::Result::failed) return {o.check, c.name, o.message};
  }
  return {};
}

// Runs `body` in a forked child with the default signal dispositions (doctest's handlers would
// report the crash as this test's), and returns its wait status, or -1 if it is still running
// after `wait` (then it is killed).
int in_child(const std::function<int()>& body, std::chrono::milliseconds wait) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) signal(sig, SIG_DFL);
    _exit(body());
  }
  const auto until = std::chrono::steady_clock::now() + wait;
  int status = 0;
  while (std::chrono::steady_clock::now() < until) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

const kq::Spec& residual_relu() {
  for (const auto& s : shipped_specs())
    if (spec_name(s) == "residual_relu") return s;
  FAIL("specs/residual_relu.yaml not found");
  throw std::logic_error("unreachable");
}

// One relu(x + residual) call on the given buffers; 0 when run() returned ok.
int call(kq::IKernelArm& arm, const kq::OpSpec& op, float* x, float* r, float* out,
         std::int64_t n) {
  using kq::TensorView;
  std::vector<TensorView> in = {TensorView::contiguous_1d(x, n, kq::DType::f32, kq::Device::cpu),
                                TensorView::contiguous_1d(r, n, kq::DType::f32, kq::Device::cpu)};
  std::vector<TensorView> o = {TensorView::contiguous_1d(out, n, kq::DType::f32, kq::Device::cpu)};
  if (!arm.prepare({&op, in, o}).is_ok()) return 2;
  return arm.run(in, o, nullptr).is_ok() ? 0 : 1;
}

// `n` floats ending exactly where an inaccessible page begins (the fence cases' layout).
struct Fenced {
  explicit Fenced(std::int64_t n) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t data_pages = (static_cast<std::size_t>(n) * sizeof(float) + page - 1) / page;
    bytes = (data_pages + 1) * page;
    base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(base != MAP_FAILED);
    char* fence = static_cast<char*>(base) + data_pages * page;
    REQUIRE(mprotect(fence, page, PROT_NONE) == 0);
    data = reinterpret_cast<float*>(fence) - n;
    std::fill(data, data + n, 0.5f);
  }
  ~Fenced() { munmap(base, bytes); }
  void* base = nullptr;
  std::size_t bytes = 0;
  float* data = nullptr;
};

}  // namespace

TEST_CASE("every broken CPU candidate names its family, device, flaw and the check for it") {
  REQUIRE_MESSAGE(!arms().empty(), "no arms from " << kPluginPath);
  std::set<std::string> names;
  for (const auto& a : arms()) {
    const kq::ArmIdentity id = a->identity();
    INFO(id.name);
    CHECK(id.name.rfind("broken_cpu_", 0) == 0);
    CHECK(names.insert(id.name).second);
    CHECK(id.family == "broken");
    CHECK(id.device == kq::Device::cpu);
    CHECK(!id.sources.empty());
    REQUIRE(!id.expected_rejection.empty());
    for (const std::string& check : split(id.expected_rejection)) {
      INFO(check);
      CHECK(known_check(check, kq::Device::cpu));
      CHECK(check != "cuda_error");  // a CPU arm cannot raise one
    }
    int supported = 0;
    for (const kq::Spec& s : shipped_specs()) supported += a->supports(s.op).is_ok();
    CHECK_MESSAGE(supported > 0, "supports none of the shipped specs");
  }
}

// The CUDA twins cannot run here, but their identities and supports() need no device.
TEST_CASE("the CUDA candidates mirror the CPU ones (identities only, no GPU needed)") {
  if (!std::filesystem::exists(kCudaPluginPath)) {
    MESSAGE("skipped: " << kCudaPluginPath << " not built (no nvcc)");
    return;
  }
  const kq::ArmList cuda = load_arms(kCudaPluginPath);
  REQUIRE(cuda.size() == arms().size() - kCpuOnlyFlaws.size() + kCudaOnlyFlaws.size());
  std::set<std::string> names;
  for (const auto& a : cuda) {
    const kq::ArmIdentity id = a->identity();
    INFO(id.name);
    REQUIRE(id.name.rfind("broken_cuda_", 0) == 0);
    CHECK(names.insert(id.name).second);
    CHECK(id.family == "broken");
    CHECK(id.device == kq::Device::cuda);
    for (const std::string& check : split(id.expected_rejection)) {
      INFO(check);
      CHECK(known_check(check, kq::Device::cuda));
      CHECK(check != "crash");  // a CUDA fault is a sticky error, reported as cuda_error
    }
    const std::string flaw = id.name.substr(std::strlen("broken_cuda_"));
    if (kCudaOnlyFlaws.count(flaw) == 1) {  // no twin: it must take some shipped spec
      int supported = 0;
      for (const kq::Spec& s : shipped_specs()) supported += a->supports(s.op).is_ok();
      CHECK_MESSAGE(supported > 0, "supports none of the shipped specs");
      continue;
    }
    kq::IKernelArm& twin = arm_named("broken_cpu_" + flaw);
    for (const kq::Spec& s : shipped_specs()) {
      INFO(spec_name(s));
      CHECK(a->supports(s.op).is_ok() == twin.supports(s.op).is_ok());
    }
  }
}

TEST_CASE("each broken CPU candidate is rejected for its declared reason on every spec it takes") {
  REQUIRE(!arms().empty());
  for (const auto& a : arms()) {
    const kq::ArmIdentity id = a->identity();
    const std::set<std::string> declared = split(id.expected_rejection);
    bool in_process = false;  // some declared check is a case check: it can be seen here
    for (const auto& c : declared) in_process |= kCaseChecks.count(c) == 1;
    if (!in_process || kTimingOnly.count(id.name) == 1) continue;
    // An arm that may also crash is kept off the fence cases, where it would take this
    // process down (the forked tests below show it does).
    const bool skip_fences = declared.count("crash") == 1;
    for (const kq::Spec& spec : shipped_specs()) {
      if (!a->supports(spec.op).is_ok()) continue;
      const FirstFailure f = first_failure(*a, spec, skip_fences);
      MESSAGE(id.name << " on " << spec_name(spec) << ": " << f.case_name << " -> " << f.check);
      INFO(id.name << " on " << spec_name(spec) << ": first failure " << f.case_name << " ("
                   << f.check << ") " << f.message);
      if (f.check.empty() && kNeedsTimingSizes.count(id.name) == 1 && !plans_timing_sizes(spec)) {
        MESSAGE(id.name
                << " on " << spec_name(spec)
                << ": not caught yet: the plan has no timing/<n> cases, nor sprinkled subnormals "
                   "(see kNeedsTimingSizes)");
        continue;
      }
      CHECK_MESSAGE(!f.check.empty(), "no case failed");
      CHECK(declared.count(f.check) == 1);
    }
  }
}

TEST_CASE("reads_past_end passes every case but the fences") {
  kq::IKernelArm& arm = arm_named("broken_cpu_reads_past_end");
  for (const kq::Spec& spec : shipped_specs()) {
    if (!arm.supports(spec.op).is_ok()) continue;
    const FirstFailure f = first_failure(arm, spec, true);
    INFO(spec_name(spec) << ": " << f.case_name << " (" << f.check << ") " << f.message);
    CHECK(f.check.empty());
  }
}

TEST_CASE("the crash, fence and hang candidates, in forked children") {
  constexpr std::int64_t n = 1025;
  std::vector<float> x(n + 64, 0.25f), r(n + 64, -0.5f), out(n + 64);
  const auto second = std::chrono::milliseconds(10000);
  const kq::OpSpec& op = residual_relu().op;  // loaded here, before any fork

  SUBCASE("crashes dies of SIGSEGV") {
    kq::IKernelArm& arm = arm_named("broken_cpu_crashes");
    const int st =
        in_child([&] { return call(arm, op, x.data(), r.data(), out.data(), n); }, second);
    CHECK(WIFSIGNALED(st));
    CHECK(WTERMSIG(st) == SIGSEGV);
  }
  SUBCASE("reads_past_end runs when x is followed by memory, dies when a fence follows") {
    kq::IKernelArm& arm = arm_named("broken_cpu_reads_past_end");
    int st = in_child([&] { return call(arm, op, x.data(), r.data(), out.data(), n); }, second);
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
    Fenced fx(n);
    st = in_child([&] { return call(arm, op, fx.data, r.data(), out.data(), n); }, second);
    CHECK(WIFSIGNALED(st));
    CHECK(WTERMSIG(st) == SIGSEGV);
    Fenced fr(n);  // it reads past x only
    st = in_child([&] { return call(arm, op, x.data(), fr.data, out.data(), n); }, second);
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
  }
  SUBCASE("writes_past_end dies when the output is fenced (hence output_guard|crash)") {
    kq::IKernelArm& arm = arm_named("broken_cpu_writes_past_end");
    Fenced fo(n);
    const int st = in_child([&] { return call(arm, op, x.data(), r.data(), fo.data, n); }, second);
    CHECK(WIFSIGNALED(st));
    CHECK(WTERMSIG(st) == SIGSEGV);
  }
  SUBCASE("hangs is still running when killed") {
    kq::IKernelArm& arm = arm_named("broken_cpu_hangs");
    const int st = in_child([&] { return call(arm, op, x.data(), r.data(), out.data(), n); },
                            std::chrono::milliseconds(500));
    CHECK(st == -1);
  }
}

namespace {

// A contiguous rank-1 case of n elements of class `v` on residual_relu, built here rather than
// planned.
kq::Case built_case(std::int64_t n, kq::ValueClass v) {
  kq::Case c;
  c.group = "size";
  c.name = "built/" + std::to_string(n) + "_" + kq::to_string(v);
  c.shape = {n};
  c.inputs.resize(2);
  c.values = v;
  c.seed = 20261201;
  return c;
}

kq::CaseOutcome run_built(const std::string& arm, std::int64_t n, kq::ValueClass v) {
  const kq::Case c = built_case(n, v);
  kq::CaseOutcome o = kq::run_case(arm_named(arm), kq::Device::cpu, residual_relu(), c);
  MESSAGE(arm << " on " << c.name << ": " << std::string(kq::to_string(o.result)) << " " << o.check
              << " " << o.message);
  return o;
}

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

}  // namespace

TEST_CASE("size_shortcut and subnormal_flush_large, on cases built for them") {
  using R = kq::CaseOutcome::Result;
  SUBCASE("size_shortcut computes half of a power-of-two size from 65536 on, nothing else") {
    kq::CaseOutcome o = run_built("broken_cpu_size_shortcut", 65536, kq::ValueClass::mixed);
    CHECK(o.result == R::failed);
    CHECK(o.check == "values");
    CHECK(o.index >= 32768);
    CHECK(run_built("broken_cpu_size_shortcut", 65537, kq::ValueClass::mixed).result == R::passed);
    CHECK(run_built("broken_cpu_size_shortcut", 32768, kq::ValueClass::mixed).result == R::passed);
  }
  SUBCASE("subnormal_flush_large flushes subnormals from 2^20 elements on, nothing else") {
    kq::CaseOutcome o =
        run_built("broken_cpu_subnormal_flush_large", (1 << 20) + 3, kq::ValueClass::denormal);
    CHECK(o.result == R::failed);
    CHECK(o.check == "values");
    CHECK(run_built("broken_cpu_subnormal_flush_large", 4097, kq::ValueClass::denormal).result ==
          R::passed);
    // Without subnormals in the big case (what size/1048579 was before they were sprinkled
    // in), it passes: this is the gap the sprinkled values close.
    CHECK(run_built("broken_cpu_subnormal_flush_large", (1 << 20) + 3, kq::ValueClass::mixed)
              .result == R::passed);
  }
}

TEST_CASE("reuse_unchanged passes every qualification case (only the timing loop can catch it)") {
  kq::IKernelArm& arm = arm_named("broken_cpu_reuse_unchanged");
  for (const kq::Spec& spec : shipped_specs()) {
    if (!arm.supports(spec.op).is_ok()) continue;
    const FirstFailure f = first_failure(arm, spec, false);
    INFO(spec_name(spec) << ": " << f.case_name << " (" << f.check << ") " << f.message);
    CHECK(f.check.empty());
  }
}

TEST_CASE("reuse_unchanged leaves a re-poisoned output alone from its third call on") {
  // As the timing loop calls it: prepared once, then called again and again on the same buffers
  // and inputs, the output re-poisoned before each call.
  kq::IKernelArm& arm = arm_named("broken_cpu_reuse_unchanged");
  const kq::OpSpec& op = residual_relu().op;
  constexpr std::int64_t n = 4097;
  std::vector<float> x(n), r(n), out(n);
  for (std::int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 17) - 8.0f;
    r[i] = 0.25f * static_cast<float>(i % 5);
  }
  using kq::TensorView;
  std::vector<TensorView> in = {
      TensorView::contiguous_1d(x.data(), n, kq::DType::f32, kq::Device::cpu),
      TensorView::contiguous_1d(r.data(), n, kq::DType::f32, kq::Device::cpu)};
  std::vector<TensorView> o = {
      TensorView::contiguous_1d(out.data(), n, kq::DType::f32, kq::Device::cpu)};
  REQUIRE(arm.prepare({&op, in, o}).is_ok());

  constexpr std::uint32_t kPoison = 0x7fc0dead;  // a NaN no sum gives
  float poison;
  std::memcpy(&poison, &kPoison, sizeof poison);
  // Calls once on a poisoned output; returns how many elements are still the poison and how
  // many hold a wrong value ({-1, -1} when run() fails).
  auto call_once = [&] {
    std::fill(out.begin(), out.end(), poison);
    std::pair<int, int> poisoned_wrong{0, 0};
    if (!arm.run(in, o, nullptr).is_ok()) return std::pair{-1, -1};
    for (std::int64_t i = 0; i < n; ++i) {
      const float s = x[i] + r[i];
      const float want = s > 0.0f ? s : 0.0f;
      if (bits(out[i]) == kPoison)
        ++poisoned_wrong.first;
      else if (bits(out[i]) != bits(want))
        ++poisoned_wrong.second;
    }
    return poisoned_wrong;
  };

  CHECK(call_once() == std::pair{0, 0});                    // first call: computed
  CHECK(call_once() == std::pair{0, 0});                    // second, the same inputs: computed
  CHECK(call_once() == std::pair{static_cast<int>(n), 0});  // third: skipped, the poison stays
  CHECK(call_once() == std::pair{static_cast<int>(n), 0});  // and so on
  for (float& v : x) v = -v;                                // new inputs: its samples see them
  CHECK(call_once() == std::pair{0, 0});
}

TEST_CASE("half_truncates is caught by the ties cases, where cpu_tbb's rounding to even passes") {
  for (const kq::Spec& spec : shipped_specs()) {
    if (!arm_named("broken_cpu_half_truncates").supports(spec.op).is_ok()) continue;
    INFO(spec_name(spec));
    int ties = 0;
    for (const kq::Case& c : kq::plan_cases(spec, {false, true})) {
      if (c.name.rfind("values/ties", 0) != 0) continue;
      ++ties;
      INFO(c.name);
      const kq::CaseOutcome o =
          kq::run_case(arm_named("broken_cpu_half_truncates"), kq::Device::cpu, spec, c);
      CHECK(o.result == kq::CaseOutcome::Result::failed);
      CHECK(o.check == "values");
    }
    CHECK(ties >= 2);  // values/ties and values/ties_n9
  }
}
