// The known-broken CPU candidates (plugins/broken), loaded as the host loads them: each declares
// the check that must reject it, and qualification's own case runner rejects it for that reason
// on every shipped spec it supports. Candidates that crash or hang are not run in this process:
// they run in forked children here, and end to end in the selftest.
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
      CHECK((kCaseChecks.count(check) == 1 || kVerdictChecks.count(check) == 1));
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
  REQUIRE(cuda.size() == arms().size());
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
      CHECK((kCaseChecks.count(check) == 1 || kVerdictChecks.count(check) == 1));
      CHECK(check != "crash");  // a CUDA fault is a sticky error, reported as cuda_error
    }
    kq::IKernelArm& twin = arm_named("broken_cpu_" + id.name.substr(std::strlen("broken_cuda_")));
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
    if (!in_process) continue;
    // An arm that may also crash is kept off the fence cases, where it would take this
    // process down (the forked tests below show it does).
    const bool skip_fences = declared.count("crash") == 1;
    for (const kq::Spec& spec : shipped_specs()) {
      if (!a->supports(spec.op).is_ok()) continue;
      const FirstFailure f = first_failure(*a, spec, skip_fences);
      MESSAGE(id.name << " on " << spec_name(spec) << ": " << f.case_name << " -> " << f.check);
      INFO(id.name << " on " << spec_name(spec) << ": first failure " << f.case_name << " ("
                   << f.check << ") " << f.message);
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
