// Several GPUs in one host (device/gpu_list.hpp, qualify/gpu_placer.hpp): the --devices list and
// what it refuses, the CUDA_VISIBLE_DEVICES entry each GPU is given to a child by, the placement
// of qualification workers (fewest first, lowest number on a tie), the worker's --gpu argument,
// and the big-case turns, which are each GPU's own.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "device/gpu_list.hpp"
#include "qualify/big_case_lock.hpp"
#include "qualify/gpu_placer.hpp"
#include "worker/protocol.hpp"

namespace {

// KQ_FAKE_GPUS and CUDA_VISIBLE_DEVICES for the length of a test.
struct Env {
  Env(const char* fake, const char* visible) {
    ::setenv("KQ_FAKE_GPUS", fake, 1);
    if (visible)
      ::setenv("CUDA_VISIBLE_DEVICES", visible, 1);
    else
      ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
  ~Env() {
    ::unsetenv("KQ_FAKE_GPUS");
    ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
};

}  // namespace

TEST_CASE("the GPUs a process sees, and the entries a child is given them by") {
  {
    Env e("NVIDIA H200,NVIDIA H200,NVIDIA H100", nullptr);
    const auto gpus = kq::visible_gpus();
    REQUIRE(gpus.size() == 3);
    CHECK(gpus[2].index == 2);
    CHECK(gpus[2].visible_id == "2");
    CHECK(gpus[2].name == "NVIDIA H100");
    CHECK(kq::describe(gpus[1]) == "GPU 1 (NVIDIA H200)");
  }
  {
    // kq started on GPUs 4 and 6 of a host: its GPU 1 is the host's 6, for a child too.
    Env e("NVIDIA H200,NVIDIA H200", "4,6");
    const auto gpus = kq::visible_gpus();
    REQUIRE(gpus.size() == 2);
    CHECK(gpus[1].visible_id == "6");
  }
  {
    Env e("", nullptr);
    CHECK(kq::visible_gpus().empty());
  }
}

TEST_CASE("--devices picks GPUs by number and refuses what is not there, naming it") {
  Env e("A,B", nullptr);
  const auto seen = kq::visible_gpus();
  CHECK(kq::choose_gpus("all", seen) == seen);
  const auto one = kq::choose_gpus("1", seen);
  REQUIRE(one.size() == 1);
  CHECK(one[0].name == "B");
  const auto both = kq::choose_gpus("1, 0", seen);
  REQUIRE(both.size() == 2);
  CHECK(both[0].index == 1);  // the first given times
  CHECK_THROWS_WITH_AS(kq::choose_gpus("2", seen),
                       "--devices: no GPU 2; this machine sees 2: GPU 0 (A), GPU 1 (B)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(kq::choose_gpus("0,0", seen), "--devices: GPU 0 named twice",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(kq::choose_gpus("0,", seen),
                       "--devices: '' is no GPU number (a list such as 0,1, or all)",
                       std::invalid_argument);
  CHECK_THROWS_AS(kq::choose_gpus("-1", seen), std::invalid_argument);
  CHECK_THROWS_WITH_AS(kq::choose_gpus("0", {}), "--devices: no GPU 0; this machine sees no GPU",
                       std::invalid_argument);
}

TEST_CASE("qualification workers go to the GPU with the fewest, the lowest on a tie") {
  Env e("A,B,C", nullptr);
  kq::GpuPlacer placer(kq::visible_gpus());
  const auto w1 = placer.take(), w2 = placer.take(), w3 = placer.take(), w4 = placer.take();
  CHECK(w1->index == 0);
  CHECK(w2->index == 1);
  CHECK(w3->index == 2);
  CHECK(w4->index == 0);
  CHECK(placer.load() == std::vector<int>{2, 1, 1});
  placer.give_back(*w2);
  CHECK(placer.take()->index == 1);  // the emptied one first
  placer.give_back(*w1);
  placer.give_back(*w4);
  CHECK(placer.load() == std::vector<int>{0, 1, 1});
  CHECK(placer.take()->index == 0);
  CHECK_FALSE(kq::GpuPlacer({}).take().has_value());  // no list: workers run where kq does
}

TEST_CASE("a worker's GPU travels in its arguments") {
  kq::QualifyWorkerArgs q;
  q.spec = "s.yaml";
  q.plugin = "p.so";
  q.arm = "a";
  q.gpu = "6";
  CHECK(kq::QualifyWorkerArgs::parse(q.to_argv()).gpu == "6");
  q.gpu.clear();
  CHECK(kq::QualifyWorkerArgs::parse(q.to_argv()).gpu.empty());
  kq::TimeWorkerArgs t;
  t.spec = "s.yaml";
  t.plugins = {"p.so"};
  t.arms = {"a"};
  t.gpu = "1";
  CHECK(kq::TimeWorkerArgs::parse(t.to_argv()).gpu == "1");
}

TEST_CASE("big cases take turns on each GPU, not across GPUs") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kq-gpu-lock-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::setenv(kq::kBigCaseLockEnv, (dir / "big").c_str(), 1);
  // Another process's turn on GPU 0 is a held flock on its file; a thread stands in for it
  // (flock is per open file, so a second open in one process waits as another process would).
  ::setenv(kq::kBigCaseGpuEnv, "0", 1);
  auto held = std::make_unique<kq::BigCaseLock>(kq::Device::cuda, [] {});
  std::atomic<bool> got_other{false}, got_same{false};
  ::setenv(kq::kBigCaseGpuEnv, "1", 1);
  std::thread on_other_gpu([&] {
    kq::BigCaseLock l(kq::Device::cuda, [] {});
    got_other = true;
  });
  on_other_gpu.join();
  CHECK(got_other);  // GPU 1's turn did not wait for GPU 0's
  ::setenv(kq::kBigCaseGpuEnv, "0", 1);
  std::thread on_same_gpu([&] {
    kq::BigCaseLock l(kq::Device::cuda, [] {});
    got_same = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK_FALSE(got_same);  // GPU 0's waits
  held.reset();
  on_same_gpu.join();
  CHECK(got_same);
  ::unsetenv(kq::kBigCaseGpuEnv);
  ::unsetenv(kq::kBigCaseLockEnv);
  std::filesystem::remove_all(dir);
}
