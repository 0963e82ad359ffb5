// GPU tests of the sample timer's blocking kernel (core/timing/blocking_kernel.hpp): a held
// stream hides the host's enqueue from the events; a call that waits for the GPU itself runs
// into the hold's timeout instead of deadlocking, and says so; a call that throws releases the
// hold. Without a usable CUDA device the test's main skips, saying why.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("sample timer") { MESSAGE("skipped: no CUDA device (kq was built without CUDA)"); }
#else
#include <cuda_runtime.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "timing/timer.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct Fixture {
  cudaStream_t stream = nullptr;
  void* buffer = nullptr;
  static constexpr std::size_t kBytes = 1 << 16;
  Fixture() {
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaMalloc(&buffer, kBytes) == cudaSuccess);
  }
  ~Fixture() {
    cudaFree(buffer);
    cudaStreamDestroy(stream);
  }
  // The work of one call: a small memset, after `host_ms` of host-side preparation.
  void call(int host_ms) const {
    std::this_thread::sleep_for(std::chrono::milliseconds(host_ms));
    REQUIRE(cudaMemsetAsync(buffer, 0x5a, kBytes, stream) == cudaSuccess);
  }
};

}  // namespace

TEST_CASE("a held stream keeps the host's enqueue out of the sample") {
  Fixture f;
  kq::SampleTimer unheld(kq::Device::cuda, f.stream, false);
  kq::SampleTimer held(kq::Device::cuda, f.stream, true, 2.0);
  REQUIRE(held.holding());
  CHECK_FALSE(unheld.holding());
  for (int k = 0; k < 3; ++k) {
    const double u = unheld.time([&] { f.call(5); });
    const double h = held.time([&] { f.call(5); });
    INFO("unheld " << u * 1e3 << " ms, held " << h * 1e3 << " ms");
    CHECK(u > 4e-3);  // the GPU waited for the 5 ms of host work
    CHECK(h < 1e-3);  // a 64 KiB memset, launched back to back with its events
    CHECK(held.last_held());
  }
}

TEST_CASE("a call that waits for the GPU meets the hold's timeout, not a deadlock") {
  Fixture f;
  kq::SampleTimer held(kq::Device::cuda, f.stream, true, 0.2);
  const auto t0 = clock_type::now();
  held.time([&] {
    f.call(0);
    REQUIRE(cudaStreamSynchronize(f.stream) == cudaSuccess);
  });
  const double wall = since(t0);
  CHECK_FALSE(held.last_held());
  CHECK(wall > 0.15);
  CHECK(wall < 5.0);
  held.stop_holding();
  CHECK_FALSE(held.holding());
  held.time([&] { f.call(0); });
  CHECK_FALSE(held.last_held());  // not held at all now
}

TEST_CASE("a call that throws releases the hold at once") {
  Fixture f;
  kq::SampleTimer held(kq::Device::cuda, f.stream, true, 10.0);
  CHECK_THROWS_AS(held.time([&] {
    f.call(0);
    throw std::runtime_error("the arm failed");
  }),
                  std::runtime_error);
  const auto t0 = clock_type::now();
  REQUIRE(cudaStreamSynchronize(f.stream) == cudaSuccess);
  CHECK(since(t0) < 1.0);  // not the 10 s timeout
  const double h = held.time([&] { f.call(0); });
  CHECK(held.last_held());
  CHECK(h < 1e-3);
}
#endif
