// The worker protocol's command lines (worker/protocol.hpp): what the parent encodes, the worker
// decodes to the same arguments; a command line the parent never writes is refused. And what a
// worker process inherits, and how its death is told (worker/supervise.hpp): a SIGKILL while the
// kernel's count of OOM kills rises is its OOM killer's.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "worker/protocol.hpp"
#include "worker/supervise.hpp"

TEST_CASE("qualify worker arguments survive encoding") {
  kq::QualifyWorkerArgs a;
  a.spec = "/run/spec.yaml";
  a.plugin = "/bin/plugins/libkq_cpu.so";
  a.arm = "cpu_tbb";
  a.quick = true;
  a.artifacts_dir = "/run/artifacts";
  a.hang_timeout = 12.5;
  a.timing_sizes = {4096, 12345};
  a.added_points = {{{3, 50257}}, {{4096, 4096}}};
  a.origins = {"/home/me/arms/my arm.py"};
  const auto b = kq::QualifyWorkerArgs::parse(a.to_argv());
  CHECK(b.spec == a.spec);
  CHECK(b.plugin == a.plugin);
  CHECK(b.arm == a.arm);
  CHECK(b.quick);
  CHECK(b.artifacts_dir == a.artifacts_dir);
  REQUIRE(b.hang_timeout.has_value());
  CHECK(*b.hang_timeout == doctest::Approx(12.5));
  CHECK(b.timing_sizes == a.timing_sizes);
  CHECK(b.added_points == a.added_points);
  CHECK(b.origins == a.origins);

  kq::QualifyWorkerArgs plain{"s.yaml", "p.so", "arm"};
  const auto c = kq::QualifyWorkerArgs::parse(plain.to_argv());
  CHECK_FALSE(c.quick);
  CHECK_FALSE(c.hang_timeout.has_value());
  CHECK(c.artifacts_dir.empty());
  CHECK(c.timing_sizes.empty());
  CHECK(c.added_points.empty());
  CHECK(c.origins.empty());
}

TEST_CASE("time worker arguments survive encoding") {
  kq::TimeWorkerArgs a;
  a.spec = "/run/spec.yaml";
  a.plugins = {"/p/a.so", "/p/b.so", "/p/a.so"};
  a.arms = {"arm_a", "arm_b", "arm_a#2"};
  a.sizes = {65536};
  a.added_points = {{{7, 9, 11}}};
  a.artifacts_dir = "/run/artifacts";
  a.no_blocking_kernel = true;
  a.brief = true;
  a.quick = true;
  a.origins = {"plugins/python/arms/torch_arms.py", "/x/y.py"};
  const auto b = kq::TimeWorkerArgs::parse(a.to_argv());
  CHECK(b.spec == a.spec);
  CHECK(b.plugins == a.plugins);
  CHECK(b.arms == a.arms);
  CHECK(b.sizes == a.sizes);
  CHECK(b.added_points == a.added_points);
  CHECK(b.artifacts_dir == a.artifacts_dir);
  CHECK(b.no_blocking_kernel);
  CHECK(b.brief);
  CHECK(b.quick);
  CHECK(b.origins == a.origins);
}

TEST_CASE("a worker command line the parent never writes is refused") {
  using Q = kq::QualifyWorkerArgs;
  CHECK_THROWS_AS(Q::parse({"--spec", "s.yaml", "--plugin", "p.so"}), kq::WorkerArgsError);
  CHECK_THROWS_AS(Q::parse({"--spec", "s.yaml", "--plugin", "p.so", "--arm", "a", "--bogus"}),
                  kq::WorkerArgsError);
  CHECK_THROWS_AS(Q::parse({"--spec", "s.yaml", "--plugin", "p.so", "--arm"}), kq::WorkerArgsError);
  CHECK_THROWS_AS(
      Q::parse({"--spec", "s", "--plugin", "p", "--arm", "a", "--timing-sizes", "2^20"}),
      kq::WorkerArgsError);
  CHECK_THROWS_AS(kq::TimeWorkerArgs::parse({"--spec", "s.yaml", "--plugin", "p.so"}),
                  kq::WorkerArgsError);
  for (const char* bad : {"", "4096,x", "M=4096"})
    CHECK_THROWS_AS(Q::parse({"--spec", "s", "--plugin", "p", "--arm", "a", "--added-point", bad}),
                    kq::WorkerArgsError);
}

TEST_CASE("a worker gets the descriptors named for it, and no other close-on-exec one") {
  // The socket a worker asks for late cases on is its own: a worker started beside it (by
  // another thread) must not inherit it.
  // (High numbers, which `ls` does not take for the directory it lists.)
  int mine[2], other[2];
  for (int* p : {mine, other}) {
    int low[2];
    REQUIRE(::pipe2(low, O_CLOEXEC) == 0);
    for (int k : {0, 1}) {
      p[k] = ::fcntl(low[k], F_DUPFD_CLOEXEC, 200);
      ::close(low[k]);
    }
  }
  const auto dir =
      std::filesystem::temp_directory_path() / ("kq-inherit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto listing = dir / "fds.txt";
  const std::string script = "ls /proc/self/fd > '" + listing.string() + "'";
  const kq::WorkerExit ex =
      kq::supervise_worker({"/bin/sh", "-c", script}, dir / "stderr.log", 10.0,
                           [](const nlohmann::json&) { return 10.0; }, {mine[0]});
  CHECK(ex.exit_code == 0);
  std::ifstream in(listing);
  std::set<int> fds;
  for (int fd; in >> fd;) fds.insert(fd);
  CHECK(fds.count(mine[0]) == 1);
  CHECK(fds.count(mine[1]) == 0);
  CHECK(fds.count(other[0]) == 0);
  CHECK(fds.count(other[1]) == 0);
  for (int fd : {mine[0], mine[1], other[0], other[1]}) ::close(fd);
  std::filesystem::remove_all(dir);
}

namespace {

// A worker that sets the (fake) count of the kernel's OOM kills to `kills`, then SIGKILLs itself.
kq::WorkerExit killed_worker(int kills, const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto vmstat = dir / "vmstat";
  std::ofstream(vmstat) << "pgfault 10\noom_kill 3\n";
  ::setenv("KQ_VMSTAT", vmstat.c_str(), 1);
  const std::string script = "printf 'pgfault 11\\noom_kill " + std::to_string(kills) + "\\n' > '" +
                             vmstat.string() + "'; kill -9 $$";
  const kq::WorkerExit ex = kq::supervise_worker({"/bin/sh", "-c", script}, dir / "stderr.log",
                                                 10.0, [](const nlohmann::json&) { return 10.0; });
  ::unsetenv("KQ_VMSTAT");
  std::filesystem::remove_all(dir);
  return ex;
}

}  // namespace

TEST_CASE("a worker the OOM killer took is told from one killed otherwise") {
  const kq::WorkerExit oom = killed_worker(4, "kq-oom-");
  CHECK(oom.signal == 9);
  CHECK(oom.oom_killed);
  CHECK(oom.describe().find("OOM killer") != std::string::npos);

  const kq::WorkerExit other = killed_worker(3, "kq-kill-");  // the count stayed
  CHECK(other.signal == 9);
  CHECK_FALSE(other.oom_killed);
  CHECK(other.describe() == "killed by signal 9 (Killed)");
}
