// GPU tests of the sample timer's blocking kernel (core/timing/blocking_kernel.hpp): a held
// stream hides the host's enqueue from the events; a call that waits for the GPU itself runs
// into the hold's timeout instead of deadlocking, and says so; a call that throws releases the
// hold. And of the device copy timed beside the arms (core/timing/light.hpp): where the arms'
// buffers leave too little memory it shrinks, and where even the smallest does not fit it says
// so by the allocation's error. Without a usable CUDA device the test's main skips, saying why.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("sample timer") { MESSAGE("skipped: no CUDA device (kq was built without CUDA)"); }
#else
#include <cuda_runtime.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "device/cuda_check.hpp"
#include "device/stream.hpp"
#include "timing/light.hpp"
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
namespace {

// Device memory taken, as a large size's arm buffers take it, until `keep` bytes are left.
struct Hog {
  void* p = nullptr;
  explicit Hog(std::size_t keep) {
    std::size_t free_bytes = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
    REQUIRE(free_bytes > keep + (std::size_t{1} << 30));
    REQUIRE(cudaMalloc(&p, free_bytes - keep) == cudaSuccess);
  }
  ~Hog() { cudaFree(p); }
};

}  // namespace

TEST_CASE("the device copy shrinks to the memory the arms leave, less its headroom") {
  const Hog hog(std::size_t{5} << 29);  // 2.5 GiB left: 1.5 GiB past the headroom
  auto stream = std::make_shared<kq::Stream>(kq::Device::cuda);
  const double moved = 8.0 * (1 << 30);  // a call of 8 GiB: 4 GiB a buffer
  const auto light = kq::make_device_light(moved, false, stream);
  INFO("copied " << light->bytes << " bytes a buffer");
  CHECK(light->bytes >= kq::kMinDeviceCopy);
  CHECK(light->bytes <= (std::size_t{3} << 28));  // both buffers in the 1.5 GiB
  std::size_t free_bytes = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
  // What the checks and the arms' allocators allocate after the copy (a 16-byte result that
  // found the device full cut a campaign's timings short on an H100).
  CHECK(free_bytes >= kq::kLightHeadroom - (std::size_t{64} << 20));
  CHECK(kq::time_light(*light) > 0);
  CHECK(cudaGetLastError() == cudaSuccess);  // the failed tries left no error behind
}

TEST_CASE("a device copy that cannot fit beside its headroom throws out of memory") {
  const Hog hog(std::size_t{5} << 28);  // 1.25 GiB left: the headroom and less than 2 x 256 MiB
  auto stream = std::make_shared<kq::Stream>(kq::Device::cuda);
  try {
    (void)kq::make_device_light(8.0 * (1 << 30), false, stream);
    FAIL("a copy fitted in 1.25 GiB beside its headroom");
  } catch (const kq::CudaError& e) {
    CHECK(kq::out_of_device_memory(e));
    CHECK_FALSE(e.sticky());
  }
}

#endif
